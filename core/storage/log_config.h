// What a topic's configuration means for each storage part: TopicConfig (Kafka names) mapped onto the partition
// log's settings, the retention limits and the produce validation rules.
#pragma once

#include "core/storage/broker_storage_config.h"
#include "core/storage/cleaner.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "core/storage/retention.h"
#include "core/storage/topic_config.h"

namespace sluice::storage {

LogSettings log_settings_for(const TopicConfig& config);
// Empty limits when cleanup.policy does not contain delete (a compact-only topic never deletes by time or size).
RetentionLimits retention_limits_for(const TopicConfig& config);
ValidationRules validation_rules_for(const TopicConfig& config, int64_t now_ms);
// The topic's cleaner knobs with the broker's map budget (one cleaner thread: the whole dedupe buffer).
CleanerOptions cleaner_options_for(const TopicConfig& config, const BrokerStorageConfig& broker);

}  // namespace sluice::storage
