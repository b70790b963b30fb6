#include "core/storage/broker_storage_config.h"

#include <array>
#include <type_traits>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"

namespace sluice::storage {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr std::array<std::string_view, 2> kPressurePolicies = {"reject", "delete-oldest"};

struct BrokerKey {
  std::string_view name;
  ConfigRule rule;
  std::string_view documentation;
  void (*store)(BrokerStorageConfig& config, const ConfigValue& value);
};

template <auto kMember>
void store_integer(BrokerStorageConfig& c, const ConfigValue& v) {
  using Field = std::remove_reference_t<decltype(c.*kMember)>;
  c.*kMember = static_cast<Field>(v.integer);
}
template <auto kMember>
void store_boolean(BrokerStorageConfig& c, const ConfigValue& v) {
  c.*kMember = v.boolean;
}
void store_load_factor(BrokerStorageConfig& c, const ConfigValue& v) { c.log_cleaner_io_buffer_load_factor = v.real; }
void store_pressure_policy(BrokerStorageConfig& c, const ConfigValue& v) {
  c.log_disk_pressure_policy =
      v.text == "delete-oldest" ? DiskPressurePolicy::kDeleteOldest : DiskPressurePolicy::kReject;
}

constexpr ConfigRule long_at_least(int64_t min) { return ConfigRule{.type = ConfigType::kLong, .min = min}; }
constexpr ConfigRule int_between(int64_t min, int64_t max) {
  return ConfigRule{.type = ConfigType::kInt, .min = min, .max = max};
}

// Where Sluice is stricter than Kafka, it refuses values Kafka would accept and then fail on at run time: a zero or
// negative scheduler period, and a load factor of 0 (an offset map that holds nothing).
// clang-format off: one entry per key, laid out as a table.
const BrokerKey kKeys[] = {
    {"log.retention.check.interval.ms", long_at_least(1),
     "How often retention runs over every partition, in ms (Sluice's default: 5000; Kafka's: 300000).",
     &store_integer<&BrokerStorageConfig::log_retention_check_interval_ms>},
    {"log.cleaner.enable",
     {.type = ConfigType::kBoolean},
     "Whether the cleaner compacts logs with policy compact.",
     &store_boolean<&BrokerStorageConfig::log_cleaner_enable>},
    {"log.cleaner.backoff.ms", long_at_least(0), "How long the cleaner sleeps when no log needs cleaning, in ms.",
     &store_integer<&BrokerStorageConfig::log_cleaner_backoff_ms>},
    {"log.cleaner.dedupe.buffer.size", long_at_least(0),
     "Memory of the cleaner's key → offset map, in bytes (24 per key).",
     &store_integer<&BrokerStorageConfig::log_cleaner_dedupe_buffer_size>},
    {"log.cleaner.io.buffer.load.factor",
     {.type = ConfigType::kDouble, .min_real = 0, .max_real = 1, .min_real_exclusive = true},
     "How full the cleaner fills its offset map before it stops a round.",
     &store_load_factor},
    {"log.cleaner.io.buffer.size", int_between(0, kInt32Max), "Memory of the cleaner's read and write buffers.",
     &store_integer<&BrokerStorageConfig::log_cleaner_io_buffer_size>},
    {"log.flush.scheduler.interval.ms", long_at_least(1),
     "How often partitions are checked against flush.ms, in ms; the default never checks.",
     &store_integer<&BrokerStorageConfig::log_flush_scheduler_interval_ms>},
    {"log.flush.offset.checkpoint.interval.ms", int_between(1, kInt32Max),
     "How often the recovery-point checkpoint is written, in ms.",
     &store_integer<&BrokerStorageConfig::log_flush_offset_checkpoint_interval_ms>},
    {"log.flush.start.offset.checkpoint.interval.ms", int_between(1, kInt32Max),
     "How often the log-start-offset checkpoint is written, in ms.",
     &store_integer<&BrokerStorageConfig::log_flush_start_offset_checkpoint_interval_ms>},
    {"log.disk.usage.max.percent", int_between(1, 100),
     "Sluice: disk usage, in percent of a log directory's volume, above which log.disk.pressure.policy applies.",
     &store_integer<&BrokerStorageConfig::log_disk_usage_max_percent>},
    {"log.disk.pressure.policy",
     {.type = ConfigType::kString, .allowed = kPressurePolicies},
     "Sluice: above the usage threshold, reject refuses appends (KAFKA_STORAGE_ERROR) and keeps serving reads; "
     "delete-oldest drops the oldest data of delete-policy topics first.",
     &store_pressure_policy},
    {"sluice.max.open.segment.files", int_between(1, kInt32Max),
     "Sluice: closed segments whose .log stays open at once, least recently read closed first (each partition's "
     "active segment keeps its three files open besides).",
     &store_integer<&BrokerStorageConfig::max_open_segment_files>},
};
// clang-format on

// Topic defaults that Kafka derives from several broker keys, finest unit first.
struct TimeSynonyms {
  std::string_view topic_key;
  std::string_view ms_key;
  std::string_view minutes_key;  // empty when Kafka has none
  std::string_view hours_key;
  int64_t hours_min;
  bool negative_is_unlimited;  // log.retention.*: any negative result means -1
};

constexpr TimeSynonyms kTimeSynonyms[] = {
    {"retention.ms", "log.retention.ms", "log.retention.minutes", "log.retention.hours",
     std::numeric_limits<int32_t>::min(), true},
    {"segment.ms", "log.roll.ms", "", "log.roll.hours", 1, false},
    {"segment.jitter.ms", "log.roll.jitter.ms", "", "log.roll.jitter.hours", 0, false},
};

const std::string* find_setting(const std::map<std::string, std::string>& settings, std::string_view name) {
  if (name.empty()) return nullptr;
  auto it = settings.find(std::string(name));
  return it == settings.end() ? nullptr : &it->second;
}

bool has_composite_handling(std::string_view topic_key) {
  for (const TimeSynonyms& t : kTimeSynonyms) {
    if (t.topic_key == topic_key) return true;
  }
  return topic_key == "flush.ms";
}

// Stores `ms`, checked against the topic key's rule but reported under the broker key that produced it.
Status store_topic_ms(const TopicConfigKey& key, std::string_view source, int64_t ms, TopicConfig& defaults) {
  SLUICE_ASSIGN_OR_RETURN(ConfigValue value, parse_config_value(source, std::to_string(ms), key.rule));
  key.store(defaults, value);
  return Status();
}

Status apply_time_synonyms(const std::map<std::string, std::string>& settings, const TimeSynonyms& t,
                           TopicConfig& defaults) {
  const TopicConfigKey* key = find_topic_config_key(t.topic_key);
  SLUICE_ASSERT(key != nullptr);
  std::string_view source;
  int64_t ms = 0;
  if (const std::string* raw = find_setting(settings, t.ms_key)) {
    SLUICE_ASSIGN_OR_RETURN(ConfigValue v, parse_config_value(t.ms_key, *raw, ConfigRule{.type = ConfigType::kLong}));
    source = t.ms_key;
    ms = v.integer;
  } else if (const std::string* raw = find_setting(settings, t.minutes_key)) {
    SLUICE_ASSIGN_OR_RETURN(
        ConfigValue v,
        parse_config_value(t.minutes_key, *raw, int_between(std::numeric_limits<int32_t>::min(), kInt32Max)));
    source = t.minutes_key;
    ms = v.integer * 60 * 1000;
  } else if (const std::string* raw = find_setting(settings, t.hours_key)) {
    SLUICE_ASSIGN_OR_RETURN(ConfigValue v, parse_config_value(t.hours_key, *raw, int_between(t.hours_min, kInt32Max)));
    source = t.hours_key;
    ms = v.integer * 60 * 60 * 1000;
  } else {
    return Status();
  }
  if (t.negative_is_unlimited && ms < 0) ms = -1;
  return store_topic_ms(*key, source, ms, defaults);
}

// Every topic key's broker synonym, then the keys Kafka derives from several settings.
Status apply_topic_defaults(const std::map<std::string, std::string>& settings, BrokerStorageConfig& config) {
  TopicConfig& defaults = config.topic_defaults;
  for (const TopicConfigKey& key : topic_config_keys()) {
    const std::string* raw = find_setting(settings, key.broker_synonym);
    if (raw == nullptr || has_composite_handling(key.name)) continue;
    SLUICE_ASSIGN_OR_RETURN(ConfigValue value, parse_config_value(key.broker_synonym, *raw, key.rule));
    key.store(defaults, value);
  }
  for (const TimeSynonyms& t : kTimeSynonyms) SLUICE_TRY(apply_time_synonyms(settings, t, defaults));
  const TopicConfigKey* flush_ms = find_topic_config_key("flush.ms");
  SLUICE_ASSERT(flush_ms != nullptr);
  if (const std::string* raw = find_setting(settings, flush_ms->broker_synonym)) {
    SLUICE_ASSIGN_OR_RETURN(ConfigValue value, parse_config_value(flush_ms->broker_synonym, *raw, flush_ms->rule));
    flush_ms->store(defaults, value);
  } else {
    defaults.flush_ms = config.log_flush_scheduler_interval_ms;
  }
  if (defaults.min_compaction_lag_ms > defaults.max_compaction_lag_ms) {
    return kafka_error(ErrorCode::kInvalidConfig, "conflict broker config setting log.cleaner.min.compaction.lag.ms (" +
                                                      std::to_string(defaults.min_compaction_lag_ms) +
                                                      ") > log.cleaner.max.compaction.lag.ms (" +
                                                      std::to_string(defaults.max_compaction_lag_ms) + ")");
  }
  return Status();
}

// Kafka's LogCleaner refuses to start unless slots × load factor > 1; say so at parse time instead.
Status check_offset_map(const BrokerStorageConfig& config) {
  if (!config.log_cleaner_enable) return Status();
  const double slots =
      static_cast<double>(config.log_cleaner_dedupe_buffer_size / BrokerStorageConfig::kOffsetMapEntryBytes);
  if (slots * config.log_cleaner_io_buffer_load_factor > 1) return Status();
  return invalid_config("log.cleaner.dedupe.buffer.size", std::to_string(config.log_cleaner_dedupe_buffer_size),
                        "the cleaner's offset map (24 bytes per key, filled to log.cleaner.io.buffer.load.factor " +
                            format_double(config.log_cleaner_io_buffer_load_factor) +
                            ") would not hold even one key, so cleaning could never make progress");
}

}  // namespace

Result<BrokerStorageConfig> BrokerStorageConfig::from_map(const std::map<std::string, std::string>& settings) {
  BrokerStorageConfig config;
  for (const BrokerKey& key : kKeys) {
    const std::string* raw = find_setting(settings, key.name);
    if (raw == nullptr) continue;
    SLUICE_ASSIGN_OR_RETURN(ConfigValue value, parse_config_value(key.name, *raw, key.rule));
    key.store(config, value);
  }
  SLUICE_TRY(check_offset_map(config));
  SLUICE_TRY(apply_topic_defaults(settings, config));
  return config;
}

bool BrokerStorageConfig::is_storage_key(std::string_view name) {
  if (name.empty()) return false;
  for (const BrokerKey& key : kKeys) {
    if (key.name == name) return true;
  }
  for (const TopicConfigKey& key : topic_config_keys()) {
    if (key.broker_synonym == name) return true;
  }
  for (const TimeSynonyms& t : kTimeSynonyms) {
    if (t.minutes_key == name || t.hours_key == name) return true;
  }
  return false;
}

}  // namespace sluice::storage
