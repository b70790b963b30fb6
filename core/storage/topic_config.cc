#include "core/storage/topic_config.h"

#include <algorithm>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"

namespace sluice::storage {
namespace {

const TopicConfig& kafka_defaults() {
  static const TopicConfig defaults;
  return defaults;
}

Status unknown_key(std::string_view name) {
  return kafka_error(ErrorCode::kInvalidConfig, "Unknown topic config name: " + std::string(name));
}

// Kafka's LogConfig.validateValues: the only rule that spans two keys.
Status check_compaction_lags(const TopicConfig& config) {
  if (config.min_compaction_lag_ms <= config.max_compaction_lag_ms) return Status();
  return kafka_error(ErrorCode::kInvalidConfig, "conflict topic config setting min.compaction.lag.ms (" +
                                                    std::to_string(config.min_compaction_lag_ms) +
                                                    ") > max.compaction.lag.ms (" +
                                                    std::to_string(config.max_compaction_lag_ms) + ")");
}

// Items of a list value as APPEND and SUBTRACT see them: empty items are dropped, as Kafka's controller does.
std::vector<std::string> list_items(std::string_view value) {
  std::vector<std::string> items = split_config_list(value);
  items.erase(std::remove(items.begin(), items.end(), std::string()), items.end());
  return items;
}

// Applies one IncrementalAlterConfigs change to the override map `next`. APPEND and SUBTRACT start from the value
// in force, the broker default included (Kafka would start from its static default, dropping a broker-level
// cleanup.policy=compact on APPEND delete).
Status apply_incremental(const TopicConfig& current, const ConfigChange& change,
                         std::map<std::string, std::string>& next) {
  const TopicConfigKey* key = find_topic_config_key(change.name);
  if (key == nullptr) return unknown_key(change.name);
  if (change.op == AlterOp::kSet) {
    next[change.name] = change.value;
    return Status();
  }
  if (change.op == AlterOp::kDelete) {
    next.erase(change.name);
    return Status();
  }
  const bool append = change.op == AlterOp::kAppend;
  if (key->rule.type != ConfigType::kList) {
    return kafka_error(ErrorCode::kInvalidConfig, std::string("Config value ") + (append ? "append" : "subtract") +
                                                      " is not allowed for config key: " + change.name);
  }
  auto it = next.find(change.name);
  std::vector<std::string> items = list_items(it != next.end() ? it->second : key->show(current));
  for (const std::string& item : list_items(change.value)) {
    if (!append) {
      items.erase(std::remove(items.begin(), items.end(), item), items.end());
    } else if (std::find(items.begin(), items.end(), item) == items.end()) {
      items.push_back(item);
    }
  }
  next[change.name] = join_list(items);
  return Status();
}

// A key named twice in one request is ambiguous; Kafka refuses the resource with INVALID_REQUEST.
Status check_duplicates(const std::vector<ConfigChange>& changes) {
  std::set<std::string_view> seen;
  for (const ConfigChange& change : changes) {
    if (!seen.insert(change.name).second) {
      return kafka_error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys: " + change.name);
    }
  }
  return Status();
}

// Create-only keys may be restated but never changed.
Status check_create_only(const TopicConfig& current, const TopicConfig& next) {
  for (const TopicConfigKey& key : topic_config_keys()) {
    if (!key.create_only) continue;
    const std::string before = key.show(current);
    const std::string after = key.show(next);
    if (before == after) continue;
    return invalid_config(key.name, after,
                          std::string(key.name) + " is fixed when the topic is created (it is " + before +
                              "); create a new topic to change it");
  }
  return Status();
}

// The override set AlterConfigs asks for. Create-only keys are not alterable, so "replace every override" does not
// reach them: those the request leaves out keep their value (check_create_only still refuses an explicit change).
std::map<std::string, std::string> replace_overrides(const TopicConfig& current,
                                                     const std::vector<ConfigChange>& changes) {
  std::map<std::string, std::string> next;
  for (const ConfigChange& change : changes) {
    SLUICE_ASSERT_MSG(change.op == AlterOp::kSet, "AlterConfigs only sets");
    next[change.name] = change.value;
  }
  for (const TopicConfigKey& key : topic_config_keys()) {
    if (key.create_only && !next.contains(std::string(key.name)) && current.is_override(key.name)) {
      next[std::string(key.name)] = key.show(current);
    }
  }
  return next;
}

}  // namespace

Result<TopicConfig> TopicConfig::from_overrides(const std::map<std::string, std::string>& overrides,
                                                const TopicConfig& broker_defaults) {
  // Only the values of broker_defaults matter: they become this topic's defaults, with nothing overridden.
  TopicConfig config = broker_defaults;
  config.explicit_.clear();
  config.defaults_.reset();
  config.defaults_ = std::make_shared<const TopicConfig>(config);
  for (const auto& [name, raw] : overrides) {
    const TopicConfigKey* key = find_topic_config_key(name);
    if (key == nullptr) return unknown_key(name);
    SLUICE_ASSIGN_OR_RETURN(ConfigValue value, parse_config_value(name, raw, key->rule));
    key->store(config, value);
    config.explicit_.insert(name);
  }
  SLUICE_TRY(check_compaction_lags(config));
  return config;
}

Result<TopicConfig> TopicConfig::alter(const TopicConfig& current, const std::vector<ConfigChange>& changes,
                                       AlterMode mode) {
  SLUICE_TRY(check_duplicates(changes));
  std::map<std::string, std::string> next;
  if (mode == AlterMode::kReplace) {
    next = replace_overrides(current, changes);
  } else {
    next = current.overrides();
    for (const ConfigChange& change : changes) SLUICE_TRY(apply_incremental(current, change, next));
  }
  SLUICE_ASSIGN_OR_RETURN(TopicConfig updated, from_overrides(next, current.defaults()));
  SLUICE_TRY(check_create_only(current, updated));
  return updated;
}

Result<TopicConfig> TopicConfig::alter(const TopicConfig& current, const std::map<std::string, std::string>& overrides,
                                       AlterMode mode) {
  std::vector<ConfigChange> changes;
  for (const auto& [name, value] : overrides) changes.push_back(ConfigChange{name, AlterOp::kSet, value});
  return alter(current, changes, mode);
}

std::map<std::string, std::string> TopicConfig::overrides() const {
  std::map<std::string, std::string> out;
  const TopicConfig& base = defaults();
  for (const TopicConfigKey& key : topic_config_keys()) {
    std::string value = key.show(*this);
    if (explicit_.contains(key.name) || value != key.show(base)) out.emplace(key.name, std::move(value));
  }
  return out;
}

std::vector<ConfigEntry> TopicConfig::describe() const {
  std::vector<ConfigEntry> entries;
  const TopicConfig& base = defaults();
  for (const TopicConfigKey& key : topic_config_keys()) {
    ConfigEntry entry;
    entry.name = std::string(key.name);
    entry.value = key.show(*this);
    if (explicit_.contains(key.name) || entry.value != key.show(base)) {
      entry.source = ConfigSource::kDynamicTopicConfig;
      entry.is_default = false;
    } else if (entry.value != key.default_value) {
      entry.source = ConfigSource::kStaticBrokerConfig;
    }
    entry.read_only = key.create_only;
    entry.type = key.rule.type;
    entry.documentation = key.documentation;
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::optional<std::string> TopicConfig::value_of(std::string_view name) const {
  const TopicConfigKey* key = find_topic_config_key(name);
  if (key == nullptr) return std::nullopt;
  return key->show(*this);
}

bool TopicConfig::is_override(std::string_view name) const {
  const TopicConfigKey* key = find_topic_config_key(name);
  if (key == nullptr) return false;
  return explicit_.contains(name) || key->show(*this) != key->show(defaults());
}

const TopicConfig& TopicConfig::defaults() const { return defaults_ ? *defaults_ : kafka_defaults(); }

std::string TopicConfig::to_properties() const {
  std::string out;
  for (const auto& [name, value] : overrides()) {
    SLUICE_ASSERT(value.find('\n') == std::string::npos);
    out += name;
    out += '=';
    out += value;
    out += '\n';
  }
  return out;
}

Result<TopicConfig> TopicConfig::from_properties(std::string_view text, const TopicConfig& broker_defaults) {
  std::map<std::string, std::string> overrides;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.empty() || line.front() == '#') continue;
    const size_t equals = line.find('=');
    const std::string where = "topic config properties, line " + std::to_string(line_number) + ": ";
    if (equals == std::string_view::npos) {
      return corruption(where + "expected key=value, got '" + std::string(line) + "'");
    }
    auto [it, inserted] = overrides.emplace(line.substr(0, equals), line.substr(equals + 1));
    if (!inserted) return corruption(where + "duplicate key " + it->first);
  }
  Result<TopicConfig> config = from_overrides(overrides, broker_defaults);
  if (!config.ok()) return corruption("topic config properties: " + config.status().message());
  return config;
}

int64_t TopicConfig::effective_segment_ms() const {
  // The active segment is never cleaned, so it must roll before max.compaction.lag.ms can be honoured.
  if (cleanup_compact && max_compaction_lag_ms > 0) return std::min(segment_ms, max_compaction_lag_ms);
  return segment_ms;
}

std::optional<int64_t> TopicConfig::time_retention_ms() const {
  if (retention_ms < 0) return std::nullopt;
  return retention_ms;
}

std::optional<int64_t> TopicConfig::size_retention_bytes() const {
  if (retention_bytes < 0) return std::nullopt;
  return retention_bytes;
}

int64_t TopicConfig::timestamp_before_max_ms() const {
  return message_timestamp_before_max_ms != kLongMax ? message_timestamp_before_max_ms
                                                     : message_timestamp_difference_max_ms;
}

int64_t TopicConfig::timestamp_after_max_ms() const {
  return message_timestamp_after_max_ms != kLongMax ? message_timestamp_after_max_ms
                                                    : message_timestamp_difference_max_ms;
}

bool TopicConfig::create_time_in_window(int64_t timestamp_ms, int64_t now_ms) const {
  // 128-bit so that now − timestamp cannot overflow; a bound at Long.MAX (the default) means no bound at all.
  const __int128 age = static_cast<__int128>(now_ms) - timestamp_ms;
  const int64_t before = timestamp_before_max_ms();
  const int64_t after = timestamp_after_max_ms();
  return (before == kLongMax || age <= before) && (after == kLongMax || -age <= after);
}

bool TopicConfig::operator==(const TopicConfig& other) const {
  for (const TopicConfigKey& key : topic_config_keys()) {
    if (key.show(*this) != key.show(other)) return false;
  }
  return true;
}

}  // namespace sluice::storage
