#include "core/storage/log_config.h"

namespace sluice::storage {

LogSettings log_settings_for(const TopicConfig& config) {
  LogSettings s;
  s.segment_bytes = config.segment_bytes;
  s.segment_ms = config.effective_segment_ms();
  s.segment_jitter_ms = config.segment_jitter_ms;
  s.segment_index_bytes = config.segment_index_bytes;
  s.index_interval_bytes = config.index_interval_bytes;
  s.flush_messages = config.flush_messages;
  s.flush_ms = config.flush_ms;
  s.persisted = config.durability == Durability::kPersisted;
  s.file_delete_delay_ms = config.file_delete_delay_ms;
  return s;
}

RetentionLimits retention_limits_for(const TopicConfig& config) {
  if (!config.retention_enabled()) return RetentionLimits{};
  return RetentionLimits{config.time_retention_ms(), config.size_retention_bytes()};
}

ValidationRules validation_rules_for(const TopicConfig& config, int64_t now_ms) {
  ValidationRules rules;
  rules.compacted = config.compacted();
  rules.max_message_bytes = config.max_message_bytes;
  rules.log_append_time = config.message_timestamp_type == MessageTimestampType::kLogAppendTime;
  rules.timestamp_before_max_ms = config.timestamp_before_max_ms();
  rules.timestamp_after_max_ms = config.timestamp_after_max_ms();
  rules.now_ms = now_ms;
  return rules;
}

CleanerOptions cleaner_options_for(const TopicConfig& config, const BrokerStorageConfig& broker) {
  CleanerOptions options;
  options.map_memory_bytes = static_cast<uint64_t>(broker.log_cleaner_dedupe_buffer_size);
  options.load_factor = broker.log_cleaner_io_buffer_load_factor;
  options.delete_retention_ms = config.delete_retention_ms;
  options.min_cleanable_dirty_ratio = config.min_cleanable_dirty_ratio;
  options.min_compaction_lag_ms = config.min_compaction_lag_ms;
  options.max_compaction_lag_ms = config.max_compaction_lag_ms;
  options.mutations = broker.mutations;
  return options;
}

}  // namespace sluice::storage
