// The topic config table: every key once, in Kafka 3.9's terms (storage-semantics.md §1). Ranges follow Kafka's
// LogConfig; the documentation lines are ours. Kafka-only keys that Sluice does not implement (preallocate,
// compression.{gzip,lz4,zstd}.level, local.retention.*, the throttled-replica lists, ...) are absent on purpose,
// so setting one is an unknown-name INVALID_CONFIG instead of a setting that silently does nothing.
#include <array>
#include <type_traits>

#include "core/storage/topic_config.h"

namespace sluice::storage {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// Kafka's LegacyRecord.RECORD_OVERHEAD_V0: the smallest segment.bytes 3.x accepts.
constexpr int64_t kMinSegmentBytes = 14;

constexpr std::array<std::string_view, 2> kCleanupPolicies = {"compact", "delete"};
constexpr std::array<std::string_view, 2> kTimestampTypes = {"CreateTime", "LogAppendTime"};
constexpr std::array<std::string_view, 2> kDurabilities = {"replicated", "persisted"};
// Indexed by Compression (uncompressed is kNone), then `producer`.
constexpr std::array<std::string_view, 6> kCompressionTypes = {"uncompressed", "gzip", "snappy",
                                                               "lz4",          "zstd", "producer"};

// The release keys Kafka 3.9's MetadataVersion.fromVersionString accepts for message.format.version: "0.x.y" keeps
// three parts, later releases two ("2.8.1" is 2.8), each optionally with an "-IVn" suffix.
constexpr std::array<std::string_view, 29> kReleaseVersions = {
    "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1",
    "2.0",   "2.1",   "2.2",   "2.3",   "2.4",    "2.5",    "2.6",    "2.7",    "2.8", "3.0",
    "3.1",   "3.2",   "3.3",   "3.4",   "3.5",    "3.6",    "3.7",    "3.8",    "3.9"};

bool is_release_version(std::string_view value) {
  const size_t kept_parts = value.starts_with("0.") ? 3 : 2;
  size_t end = 0;
  for (size_t part = 0; part < kept_parts; ++part) {
    if (part > 0) {
      if (end >= value.size() || value[end] != '.') return false;
      ++end;
    }
    while (end < value.size() && value[end] != '.') ++end;
  }
  std::string_view key = value.substr(0, end);
  if (const size_t iv = key.find("-IV"); iv != std::string_view::npos) {
    const std::string_view digits = key.substr(iv + 3);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return false;
    key = key.substr(0, iv);
  }
  for (std::string_view release : kReleaseVersions) {
    if (release == key) return true;
  }
  return false;
}

// --- Field accessors, instantiated per member. ---

template <auto kMember>
void store_integer(TopicConfig& c, const ConfigValue& v) {
  using Field = std::remove_reference_t<decltype(c.*kMember)>;
  c.*kMember = static_cast<Field>(v.integer);
}
template <auto kMember>
std::string show_integer(const TopicConfig& c) {
  return std::to_string(c.*kMember);
}
template <auto kMember>
void store_real(TopicConfig& c, const ConfigValue& v) {
  c.*kMember = v.real;
}
template <auto kMember>
std::string show_real(const TopicConfig& c) {
  return format_double(c.*kMember);
}
template <auto kMember>
void store_boolean(TopicConfig& c, const ConfigValue& v) {
  c.*kMember = v.boolean;
}
template <auto kMember>
std::string show_boolean(const TopicConfig& c) {
  return c.*kMember ? "true" : "false";
}
template <auto kMember>
void store_text(TopicConfig& c, const ConfigValue& v) {
  c.*kMember = v.text;
}
template <auto kMember>
std::string show_text(const TopicConfig& c) {
  return c.*kMember;
}
template <auto kMember>
void store_durability(TopicConfig& c, const ConfigValue& v) {
  c.*kMember = v.text == "persisted" ? Durability::kPersisted : Durability::kReplicated;
}
template <auto kMember>
std::string show_durability(const TopicConfig& c) {
  return c.*kMember == Durability::kPersisted ? "persisted" : "replicated";
}

void store_cleanup_policy(TopicConfig& c, const ConfigValue& v) {
  c.cleanup_delete = false;
  c.cleanup_compact = false;
  for (const std::string& item : v.items) {
    if (item == "delete") c.cleanup_delete = true;
    if (item == "compact") c.cleanup_compact = true;
  }
}
std::string show_cleanup_policy(const TopicConfig& c) {
  if (c.cleanup_compact && c.cleanup_delete) return "compact,delete";
  if (c.cleanup_compact) return "compact";
  if (c.cleanup_delete) return "delete";
  return "";
}

void store_timestamp_type(TopicConfig& c, const ConfigValue& v) {
  c.message_timestamp_type =
      v.text == "LogAppendTime" ? MessageTimestampType::kLogAppendTime : MessageTimestampType::kCreateTime;
}
std::string show_timestamp_type(const TopicConfig& c) {
  return c.message_timestamp_type == MessageTimestampType::kLogAppendTime ? "LogAppendTime" : "CreateTime";
}

void store_compression_type(TopicConfig& c, const ConfigValue& v) {
  c.compression_type.reset();
  for (size_t codec = 0; codec + 1 < kCompressionTypes.size(); ++codec) {
    if (v.text == kCompressionTypes[codec]) c.compression_type = static_cast<Compression>(codec);
  }
}
std::string show_compression_type(const TopicConfig& c) {
  if (!c.compression_type) return std::string(kCompressionTypes.back());
  return std::string(kCompressionTypes[static_cast<size_t>(*c.compression_type)]);
}

constexpr ConfigRule long_at_least(int64_t min) { return ConfigRule{.type = ConfigType::kLong, .min = min}; }
constexpr ConfigRule int_at_least(int64_t min) {
  return ConfigRule{.type = ConfigType::kInt, .min = min, .max = kInt32Max};
}

#define SLUICE_INTEGER(member) &store_integer<&TopicConfig::member>, &show_integer<&TopicConfig::member>

// clang-format off: one entry per key, laid out as a table.
const TopicConfigKey kKeys[] = {
    {"cleanup.policy",
     {.type = ConfigType::kList, .allowed = kCleanupPolicies},
     "delete",
     "log.cleanup.policy",
     false,
     "Comma-separated subset of {delete, compact}: delete drops old data by time and size, compact keeps the latest "
     "record per key; both apply both, none keeps everything.",
     &store_cleanup_policy,
     &show_cleanup_policy},
    {"retention.ms", long_at_least(-1), "604800000", "log.retention.ms", false,
     "How long a record is kept, in ms, when the policy includes delete; -1 keeps records forever, 0 drops every "
     "record already in the past at the next retention check.",
     SLUICE_INTEGER(retention_ms)},
    {"retention.bytes",
     {.type = ConfigType::kLong},
     "-1",
     "log.retention.bytes",
     false,
     "Largest size of a partition, in bytes, before the oldest data is dropped (policy delete); negative: no limit.",
     SLUICE_INTEGER(retention_bytes)},
    {"segment.bytes", int_at_least(kMinSegmentBytes), "1073741824", "log.segment.bytes", false,
     "Size at which a segment file is closed and a new one started; a batch set larger than this is refused.",
     SLUICE_INTEGER(segment_bytes)},
    {"segment.ms", long_at_least(1), "604800000", "log.roll.ms", false,
     "Time span of record timestamps after which the next append starts a new segment, even if it is not full.",
     SLUICE_INTEGER(segment_ms)},
    {"segment.jitter.ms", long_at_least(0), "0", "log.roll.jitter.ms", false,
     "Largest random amount subtracted from segment.ms per segment, so that partitions do not all roll at once.",
     SLUICE_INTEGER(segment_jitter_ms)},
    {"segment.index.bytes", int_at_least(4), "10485760", "log.index.size.max.bytes", false,
     "Size of a segment's offset index (8 bytes per entry) and time index (12 bytes per entry).",
     SLUICE_INTEGER(segment_index_bytes)},
    {"index.interval.bytes", int_at_least(0), "4096", "log.index.interval.bytes", false,
     "Bytes of log between two offset index entries: smaller means a denser index and shorter scans.",
     SLUICE_INTEGER(index_interval_bytes)},
    {"delete.retention.ms", long_at_least(0), "86400000", "log.cleaner.delete.retention.ms", false,
     "How long a tombstone (and a transaction marker) stays readable after the cleaner first sees it, so that "
     "consumers catch the delete.",
     SLUICE_INTEGER(delete_retention_ms)},
    {"min.cleanable.dirty.ratio",
     {.type = ConfigType::kDouble, .min_real = 0, .max_real = 1},
     "0.5",
     "log.cleaner.min.cleanable.ratio",
     false,
     "The cleaner compacts a log once its uncleaned share of bytes is strictly above this ratio.",
     &store_real<&TopicConfig::min_cleanable_dirty_ratio>,
     &show_real<&TopicConfig::min_cleanable_dirty_ratio>},
    {"min.compaction.lag.ms", long_at_least(0), "0", "log.cleaner.min.compaction.lag.ms", false,
     "Youngest age, in ms, at which a record may be compacted away; must not exceed max.compaction.lag.ms.",
     SLUICE_INTEGER(min_compaction_lag_ms)},
    {"max.compaction.lag.ms", long_at_least(1), "9223372036854775807", "log.cleaner.max.compaction.lag.ms", false,
     "Age, in ms, after which a record must become eligible for compaction whatever the dirty ratio.",
     SLUICE_INTEGER(max_compaction_lag_ms)},
    {"file.delete.delay.ms", long_at_least(0), "60000", "log.segment.delete.delay.ms", false,
     "Wait before the files of a deleted segment are removed, so that reads in flight can finish.",
     SLUICE_INTEGER(file_delete_delay_ms)},
    {"flush.messages", long_at_least(1), "9223372036854775807", "log.flush.interval.messages", false,
     "Fsync the log after this many unflushed messages, before acknowledging the append that reaches it.",
     SLUICE_INTEGER(flush_messages)},
    {"flush.ms", long_at_least(0), "9223372036854775807", "log.flush.interval.ms", false,
     "Fsync the log once its oldest unflushed data is this old, checked every log.flush.scheduler.interval.ms.",
     SLUICE_INTEGER(flush_ms)},
    {"max.message.bytes", int_at_least(0), "1048588", "message.max.bytes", false,
     "Largest record batch accepted, in bytes after compression; a larger one gets MESSAGE_TOO_LARGE.",
     SLUICE_INTEGER(max_message_bytes)},
    {"message.timestamp.type",
     {.type = ConfigType::kString, .allowed = kTimestampTypes},
     "CreateTime",
     "log.message.timestamp.type",
     false,
     "CreateTime keeps the producer's timestamps; LogAppendTime stamps each batch with the broker's clock.",
     &store_timestamp_type,
     &show_timestamp_type},
    {"message.timestamp.difference.max.ms", long_at_least(0), "9223372036854775807",
     "log.message.timestamp.difference.max.ms", false,
     "Deprecated: the largest distance between a CreateTime timestamp and the broker's clock, either way; used for "
     "message.timestamp.before/after.max.ms while they are at their defaults.",
     SLUICE_INTEGER(message_timestamp_difference_max_ms)},
    {"message.timestamp.before.max.ms", long_at_least(0), "9223372036854775807", "log.message.timestamp.before.max.ms",
     false, "How far in the past, in ms, a CreateTime timestamp may be; older batches get INVALID_TIMESTAMP.",
     SLUICE_INTEGER(message_timestamp_before_max_ms)},
    {"message.timestamp.after.max.ms", long_at_least(0), "9223372036854775807", "log.message.timestamp.after.max.ms",
     false, "How far in the future, in ms, a CreateTime timestamp may be; later batches get INVALID_TIMESTAMP.",
     SLUICE_INTEGER(message_timestamp_after_max_ms)},
    {"min.insync.replicas", int_at_least(1), "1", "min.insync.replicas", false,
     "Fewest in-sync replicas an acks=all produce needs; with fewer it gets NOT_ENOUGH_REPLICAS.",
     SLUICE_INTEGER(min_insync_replicas)},
    {"message.format.version",
     {.type = ConfigType::kString, .allowed = kReleaseVersions, .accepts = &is_release_version},
     "3.0-IV1",
     "log.message.format.version",
     false,
     "Deprecated, without effect: records are always stored in format v2 (Kafka 3.0 and later ignore it too).",
     &store_text<&TopicConfig::message_format_version>,
     &show_text<&TopicConfig::message_format_version>},
    {"unclean.leader.election.enable",
     {.type = ConfigType::kBoolean},
     "false",
     "unclean.leader.election.enable",
     false,
     "Accepted without effect: a partition's raft group never elects a replica missing committed entries (Kafka "
     "would elect an out-of-sync replica when no in-sync one is alive).",
     &store_boolean<&TopicConfig::unclean_leader_election_enable>,
     &show_boolean<&TopicConfig::unclean_leader_election_enable>},
    {"compression.type",
     {.type = ConfigType::kString, .allowed = kCompressionTypes},
     "producer",
     "compression.type",
     false,
     "Codec batches are stored in: producer keeps each batch's own; uncompressed, gzip, snappy, lz4 or zstd makes "
     "the broker re-encode a batch in another codec before storing it (offsets, timestamps and records unchanged).",
     &store_compression_type,
     &show_compression_type},
    {"durability",
     {.type = ConfigType::kString, .allowed = kDurabilities},
     "replicated",
     "",
     true,
     "Sluice, fixed at creation: replicated acknowledges once committed; persisted also fsyncs the log and index "
     "(and the directory for a new segment) before acknowledging.",
     &store_durability<&TopicConfig::durability>,
     &show_durability<&TopicConfig::durability>},
    {"consumer.offset.durability",
     {.type = ConfigType::kString, .allowed = kDurabilities},
     "replicated",
     "",
     true,
     "Sluice, fixed at creation: the same choice as durability, for consumer offsets committed on this topic's "
     "partitions; independent of durability.",
     &store_durability<&TopicConfig::consumer_offset_durability>,
     &show_durability<&TopicConfig::consumer_offset_durability>},
};
// clang-format on

#undef SLUICE_INTEGER

}  // namespace

std::span<const TopicConfigKey> topic_config_keys() { return kKeys; }

const TopicConfigKey* find_topic_config_key(std::string_view name) {
  for (const TopicConfigKey& key : kKeys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

}  // namespace sluice::storage
