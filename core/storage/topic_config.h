// Topic configs: Kafka 3.9's names, defaults and validation (docs: storage-semantics.md §1), plus Sluice's
// create-only `durability` and `consumer.offset.durability` (DESIGN.md §3).
//
// One table (topic_config_keys(), defined in topic_config_table.cc) describes every key once: name, type, default,
// valid values, broker synonym, create-only flag and documentation. Parsing, validation, alteration, describe and
// persistence all walk it, so a key added there is accepted, listed and persisted everywhere.
//
// A TopicConfig holds the value in force for every key, the broker defaults it was built on (so that DELETE and
// AlterConfigs can fall back to them), and which keys the topic overrides. It is a plain value: copy it freely;
// no Env, no I/O (the log persists to_properties() through the FileSystem).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"
#include "core/storage/config_def.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {

enum class MessageTimestampType : uint8_t { kCreateTime, kLogAppendTime };

// replicated: acknowledged once committed (page cache on a single node). persisted: .log, .index and, for a new
// segment, the directory are fsynced before the acknowledgement.
enum class Durability : uint8_t { kReplicated, kPersisted };

// Numbered as DescribeConfigs' config_source.
enum class ConfigSource : int8_t {
  kDynamicTopicConfig = 1,  // the topic overrides the key
  kStaticBrokerConfig = 4,  // the broker's configuration sets the default
  kDefaultConfig = 5,       // Kafka's (or Sluice's) built-in default
};

// One row of describe().
struct ConfigEntry {
  std::string name;
  std::string value;
  ConfigSource source = ConfigSource::kDefaultConfig;
  // Not overridden on this topic. (DescribeConfigs v0's is_default is narrower: source == kDefaultConfig.)
  bool is_default = true;
  bool read_only = false;  // create-only keys
  bool sensitive = false;  // no topic config is
  ConfigType type = ConfigType::kLong;
  std::string_view documentation;
};

// Numbered as IncrementalAlterConfigs' config_operation.
enum class AlterOp : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

// kReplace is AlterConfigs: the changes (all kSet) become the complete set of overrides, every other alterable key
// goes back to its default. kIncremental is IncrementalAlterConfigs: the changes apply in order to the overrides.
enum class AlterMode : uint8_t { kReplace, kIncremental };

struct ConfigChange {
  std::string name;
  AlterOp op = AlterOp::kSet;
  std::string value;  // unused by kDelete; a comma-separated list for kAppend and kSubtract
};

struct TopicConfig {
  static constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();

  // cleanup.policy: both false is the empty list (no deletion, no compaction: infinite retention).
  bool cleanup_delete = true;
  bool cleanup_compact = false;
  int64_t retention_ms = 604800000;  // 7 days; -1 = no time limit
  int64_t retention_bytes = -1;      // per partition; any negative value = no size limit
  int32_t segment_bytes = 1073741824;
  int64_t segment_ms = 604800000;
  int64_t segment_jitter_ms = 0;
  int32_t segment_index_bytes = 10485760;
  int32_t index_interval_bytes = 4096;
  int64_t delete_retention_ms = 86400000;
  double min_cleanable_dirty_ratio = 0.5;
  int64_t min_compaction_lag_ms = 0;
  int64_t max_compaction_lag_ms = kLongMax;
  int64_t file_delete_delay_ms = 60000;
  int64_t flush_messages = kLongMax;
  int64_t flush_ms = kLongMax;
  int32_t max_message_bytes = 1048588;  // 1 MiB + the 12-byte log overhead
  MessageTimestampType message_timestamp_type = MessageTimestampType::kCreateTime;
  int64_t message_timestamp_difference_max_ms = kLongMax;  // deprecated by the two below (KIP-937)
  int64_t message_timestamp_before_max_ms = kLongMax;
  int64_t message_timestamp_after_max_ms = kLongMax;
  int32_t min_insync_replicas = 1;
  // Deprecated and without effect since Kafka 3.0 (records are always magic v2); kept so that old tools setting it
  // succeed, as on Kafka 3.9.
  std::string message_format_version = "3.0-IV1";
  bool unclean_leader_election_enable = false;
  // compression.type: the codec batches are stored in; nullopt is `producer` (each batch keeps its own).
  std::optional<Compression> compression_type;
  Durability durability = Durability::kReplicated;                  // create-only
  Durability consumer_offset_durability = Durability::kReplicated;  // create-only

  // Builds a topic's config: `broker_defaults` for every key the topic does not override. An unknown name, an
  // unparsable, out-of-range or disallowed value, or min.compaction.lag.ms > max.compaction.lag.ms gives
  // INVALID_CONFIG naming the key and what it accepts.
  static Result<TopicConfig> from_overrides(const std::map<std::string, std::string>& overrides,
                                            const TopicConfig& broker_defaults);

  // AlterConfigs / IncrementalAlterConfigs on `current`, over the broker defaults `current` was built on. Beyond
  // from_overrides' errors: APPEND/SUBTRACT on a key that is not a list and any change of a create-only key give
  // INVALID_CONFIG (setting a create-only key to the value it has is accepted); a key named twice gives
  // INVALID_REQUEST. In kReplace mode create-only keys the request leaves out keep their value.
  static Result<TopicConfig> alter(const TopicConfig& current, const std::vector<ConfigChange>& changes,
                                   AlterMode mode);
  // The same with every change a SET.
  static Result<TopicConfig> alter(const TopicConfig& current, const std::map<std::string, std::string>& overrides,
                                   AlterMode mode);

  // The keys this topic overrides, each with its value in canonical form: what a topic persists. A key set
  // explicitly counts even when it equals the default (as in Kafka); a field changed directly counts when it differs.
  std::map<std::string, std::string> overrides() const;
  // Every key, in table order, with its value and where it comes from.
  std::vector<ConfigEntry> describe() const;
  // The value of `name` in canonical form ("compact,delete", "0.5", "CreateTime"); nullopt for an unknown name.
  std::optional<std::string> value_of(std::string_view name) const;
  bool is_override(std::string_view name) const;
  // The broker defaults this config falls back to (Kafka's defaults when built directly).
  const TopicConfig& defaults() const;

  // "key=value\n" per override, sorted by key: the small file a partition keeps beside its segments.
  std::string to_properties() const;
  // The inverse, over the broker defaults in force now. A malformed line or an invalid value is corruption.
  static Result<TopicConfig> from_properties(std::string_view text, const TopicConfig& broker_defaults);

  // --- What the log uses. ---
  bool retention_enabled() const { return cleanup_delete; }  // cleanup.policy contains delete
  bool compacted() const { return cleanup_compact; }         // cleanup.policy contains compact
  // segment.ms, capped by max.compaction.lag.ms on compacted topics so that a roll lets the cleaner reach the data.
  int64_t effective_segment_ms() const;
  // retention.ms, nullopt for -1. Applies only when retention_enabled().
  std::optional<int64_t> time_retention_ms() const;
  // retention.bytes, nullopt when negative. Applies only when retention_enabled().
  std::optional<int64_t> size_retention_bytes() const;
  // The CreateTime window [now − before, now + after]. Each bound falls back to
  // message.timestamp.difference.max.ms while it is at its default (Long.MAX), as Kafka 3.9 does.
  int64_t timestamp_before_max_ms() const;
  int64_t timestamp_after_max_ms() const;
  // Whether a CreateTime timestamp lies in that window; no overflow at the Long.MAX defaults.
  bool create_time_in_window(int64_t timestamp_ms, int64_t now_ms) const;

  // The same value for every key (defaults and overrides are not compared).
  bool operator==(const TopicConfig& other) const;

 private:
  std::shared_ptr<const TopicConfig> defaults_;  // null: Kafka's defaults
  std::set<std::string, std::less<>> explicit_;  // keys set by from_overrides or alter
};

// One key of the table.
struct TopicConfigKey {
  std::string_view name;
  ConfigRule rule;
  std::string_view default_value;   // canonical form; equals what a default TopicConfig shows (tested)
  std::string_view broker_synonym;  // the broker setting that supplies the default; empty when none
  bool create_only = false;
  std::string_view documentation;
  void (*store)(TopicConfig& config, const ConfigValue& value);
  std::string (*show)(const TopicConfig& config);
};

std::span<const TopicConfigKey> topic_config_keys();
const TopicConfigKey* find_topic_config_key(std::string_view name);  // nullptr when unknown

}  // namespace sluice::storage
