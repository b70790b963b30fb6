// Topic configs against Kafka 3.9 (storage-semantics.md §1, R7, C7) and Sluice's create-only durability keys.
#include "core/storage/topic_config.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>
#include <string>

#include "core/protocol/error_codes.h"

namespace sluice::storage {
namespace {

using Overrides = std::map<std::string, std::string>;
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();

Result<TopicConfig> parse(const Overrides& overrides) { return TopicConfig::from_overrides(overrides, TopicConfig{}); }

TopicConfig parse_ok(const Overrides& overrides) {
  Result<TopicConfig> config = parse(overrides);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : TopicConfig{};
}

// The INVALID_CONFIG message for one key=value, or "ok".
std::string error_of(const std::string& key, const std::string& value) {
  Result<TopicConfig> config = parse({{key, value}});
  if (config.ok()) return "ok";
  EXPECT_EQ(to_error_code(config.status()), ErrorCode::kInvalidConfig) << config.status().to_string();
  return config.status().message();
}

std::string value_after(const std::string& key, const std::string& value) {
  return parse_ok({{key, value}}).value_of(key).value_or("?");
}

TEST(TopicConfig, DefaultsAreKafka39s) {
  const TopicConfig c;
  EXPECT_TRUE(c.cleanup_delete);
  EXPECT_FALSE(c.cleanup_compact);
  EXPECT_EQ(c.retention_ms, 604800000);
  EXPECT_EQ(c.retention_bytes, -1);
  EXPECT_EQ(c.segment_bytes, 1073741824);
  EXPECT_EQ(c.segment_ms, 604800000);
  EXPECT_EQ(c.segment_jitter_ms, 0);
  EXPECT_EQ(c.segment_index_bytes, 10485760);
  EXPECT_EQ(c.index_interval_bytes, 4096);
  EXPECT_EQ(c.delete_retention_ms, 86400000);
  EXPECT_EQ(c.min_cleanable_dirty_ratio, 0.5);
  EXPECT_EQ(c.min_compaction_lag_ms, 0);
  EXPECT_EQ(c.max_compaction_lag_ms, kLongMax);
  EXPECT_EQ(c.file_delete_delay_ms, 60000);
  EXPECT_EQ(c.flush_messages, kLongMax);
  EXPECT_EQ(c.flush_ms, kLongMax);
  EXPECT_EQ(c.max_message_bytes, 1048588);
  EXPECT_EQ(c.message_timestamp_type, MessageTimestampType::kCreateTime);
  EXPECT_EQ(c.message_timestamp_difference_max_ms, kLongMax);
  EXPECT_EQ(c.message_timestamp_before_max_ms, kLongMax);
  EXPECT_EQ(c.message_timestamp_after_max_ms, kLongMax);
  EXPECT_EQ(c.min_insync_replicas, 1);
  EXPECT_FALSE(c.unclean_leader_election_enable);
  EXPECT_EQ(c.durability, Durability::kReplicated);
  EXPECT_EQ(c.consumer_offset_durability, Durability::kReplicated);
  EXPECT_TRUE(parse_ok({}) == c);
  EXPECT_TRUE(parse_ok({}).overrides().empty());
}

TEST(TopicConfig, TableDescribesEveryKeyOnceWithTheStructsDefault) {
  std::set<std::string_view> names;
  for (const TopicConfigKey& key : topic_config_keys()) {
    EXPECT_TRUE(names.insert(key.name).second) << key.name;
    EXPECT_EQ(key.show(TopicConfig{}), key.default_value) << key.name;
    EXPECT_FALSE(key.documentation.empty()) << key.name;
    EXPECT_EQ(find_topic_config_key(key.name), &key);
    EXPECT_EQ(key.create_only, key.name == "durability" || key.name == "consumer.offset.durability") << key.name;
  }
  EXPECT_EQ(names.size(), 26u);
  EXPECT_EQ(find_topic_config_key("preallocate"), nullptr);
}

// Each numeric key at its lower bound, one below, and well above (Kafka 3.9's LogConfig ranges).
TEST(TopicConfig, NumericLowerBounds) {
  const std::map<std::string, int64_t> minimum = {
      {"retention.ms", -1},
      {"segment.bytes", 14},
      {"segment.ms", 1},
      {"segment.jitter.ms", 0},
      {"segment.index.bytes", 4},
      {"index.interval.bytes", 0},
      {"delete.retention.ms", 0},
      {"min.compaction.lag.ms", 0},
      {"max.compaction.lag.ms", 1},
      {"file.delete.delay.ms", 0},
      {"flush.messages", 1},
      {"flush.ms", 0},
      {"max.message.bytes", 0},
      {"min.insync.replicas", 1},
      {"message.timestamp.difference.max.ms", 0},
      {"message.timestamp.before.max.ms", 0},
      {"message.timestamp.after.max.ms", 0},
  };
  for (const auto& [key, min] : minimum) {
    EXPECT_EQ(value_after(key, std::to_string(min)), std::to_string(min)) << key;
    EXPECT_EQ(error_of(key, std::to_string(min - 1)), "Invalid value " + std::to_string(min - 1) +
                                                          " for configuration " + key + ": Value must be at least " +
                                                          std::to_string(min));
    EXPECT_EQ(value_after(key, "1000000"), "1000000") << key;
  }
  EXPECT_EQ(value_after("retention.bytes", "-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(value_after("retention.bytes", "9223372036854775807"), "9223372036854775807");
}

TEST(TopicConfig, IntKeysStopAtInt32AndLongKeysAtInt64) {
  for (const std::string key :
       {"segment.bytes", "segment.index.bytes", "index.interval.bytes", "max.message.bytes", "min.insync.replicas"}) {
    EXPECT_EQ(value_after(key, "2147483647"), "2147483647") << key;
    EXPECT_EQ(error_of(key, "2147483648"),
              "Invalid value 2147483648 for configuration " + key +
                  ": Not a number of type INT, valid values: " + valid_values(find_topic_config_key(key)->rule));
  }
  EXPECT_EQ(value_after("segment.ms", "9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(error_of("segment.ms", "9223372036854775808"),
            "Invalid value 9223372036854775808 for configuration segment.ms: Not a number of type LONG, valid values: "
            "[1,...]");
}

TEST(TopicConfig, DirtyRatioIsADoubleBetweenZeroAndOne) {
  EXPECT_EQ(value_after("min.cleanable.dirty.ratio", "0"), "0.0");
  EXPECT_EQ(value_after("min.cleanable.dirty.ratio", "1"), "1.0");
  EXPECT_EQ(value_after("min.cleanable.dirty.ratio", "0.25"), "0.25");
  EXPECT_EQ(value_after("min.cleanable.dirty.ratio", ".75"), "0.75");
  EXPECT_EQ(value_after("min.cleanable.dirty.ratio", "1e-1"), "0.1");
  EXPECT_EQ(error_of("min.cleanable.dirty.ratio", "-0.01"),
            "Invalid value -0.01 for configuration min.cleanable.dirty.ratio: Value must be at least 0");
  EXPECT_EQ(error_of("min.cleanable.dirty.ratio", "1.01"),
            "Invalid value 1.01 for configuration min.cleanable.dirty.ratio: Value must be no more than 1");
  for (const std::string bad : {"NaN", "Infinity", "inf", "half", "", "0.5.1", "+-0.5", "0.5d"}) {
    EXPECT_NE(error_of("min.cleanable.dirty.ratio", bad).find("Not a number of type DOUBLE"), std::string::npos) << bad;
  }
}

// R7: -1 is no time limit, unset is 7 days, -2 and "abc" are INVALID_CONFIG.
TEST(TopicConfig, RetentionMsR7) {
  EXPECT_EQ(parse_ok({{"retention.ms", "-1"}}).time_retention_ms(), std::nullopt);
  EXPECT_EQ(parse_ok({}).time_retention_ms(), 604800000);
  EXPECT_EQ(parse_ok({{"retention.ms", "0"}}).time_retention_ms(), 0);
  EXPECT_EQ(error_of("retention.ms", "-2"),
            "Invalid value -2 for configuration retention.ms: Value must be at least -1");
  EXPECT_EQ(error_of("retention.ms", "abc"),
            "Invalid value abc for configuration retention.ms: Not a number of type LONG, valid values: [-1,...]");
}

TEST(TopicConfig, NumbersAreDecimalWithOptionalSignAndBlanks) {
  EXPECT_EQ(value_after("retention.ms", " 100 "), "100");
  EXPECT_EQ(value_after("retention.ms", "+100"), "100");
  EXPECT_EQ(value_after("retention.ms", "\t-1\n"), "-1");
  for (const std::string bad : {"", " ", "1.5", "1e3", "0x10", "100ms", "1 000", "++1", "+-1", "-"}) {
    EXPECT_NE(error_of("retention.ms", bad).find("Not a number of type LONG"), std::string::npos) << bad;
  }
}

TEST(TopicConfig, UnknownNameIsInvalidConfig) {
  EXPECT_EQ(error_of("retention.hours", "1"), "Unknown topic config name: retention.hours");
  EXPECT_EQ(error_of("Retention.ms", "1"), "Unknown topic config name: Retention.ms");
  EXPECT_EQ(error_of("preallocate", "true"), "Unknown topic config name: preallocate");
}

TEST(TopicConfig, BooleansAreTrueOrFalseInAnyCase) {
  EXPECT_EQ(value_after("unclean.leader.election.enable", "true"), "true");
  EXPECT_EQ(value_after("unclean.leader.election.enable", "TRUE"), "true");
  EXPECT_EQ(value_after("unclean.leader.election.enable", " False "), "false");
  for (const std::string bad : {"1", "yes", "", "truee"}) {
    EXPECT_EQ(error_of("unclean.leader.election.enable", bad),
              "Invalid value " + bad +
                  " for configuration unclean.leader.election.enable: Expected value to be either "
                  "true or false");
  }
}

TEST(TopicConfig, TimestampTypeIsCaseSensitive) {
  EXPECT_EQ(parse_ok({{"message.timestamp.type", "LogAppendTime"}}).message_timestamp_type,
            MessageTimestampType::kLogAppendTime);
  EXPECT_EQ(value_after("message.timestamp.type", " CreateTime "), "CreateTime");
  EXPECT_EQ(error_of("message.timestamp.type", "createtime"),
            "Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, "
            "LogAppendTime");
  EXPECT_NE(error_of("message.timestamp.type", ""), "ok");
}

// Deprecated and ignored since Kafka 3.0, but still accepted (librdkafka's test 0092 sets it): any release version
// in MetadataVersion's spelling, with extra parts or an IV suffix; anything else is INVALID_CONFIG.
TEST(TopicConfig, MessageFormatVersionIsAcceptedAndIgnored) {
  EXPECT_EQ(value_after("message.format.version", "0.10.0.0"), "0.10.0.0");
  EXPECT_EQ(value_after("message.format.version", "2.8.1"), "2.8.1");
  EXPECT_EQ(value_after("message.format.version", "3.0-IV1"), "3.0-IV1");
  EXPECT_EQ(value_after("message.format.version", "0.11.0-IV2"), "0.11.0-IV2");
  EXPECT_NE(error_of("message.format.version", "banana"), "ok");
  EXPECT_NE(error_of("message.format.version", "0.10"), "ok");
  EXPECT_NE(error_of("message.format.version", "4.0"), "ok");
  EXPECT_NE(error_of("message.format.version", "3.0-IVx"), "ok");
  EXPECT_EQ(TopicConfig{}.value_of("message.format.version"), "3.0-IV1");
}

TEST(TopicConfig, CleanupPolicyLists) {
  struct Case {
    std::string raw;
    bool del;
    bool compact;
  };
  for (const Case& c : {Case{"delete", true, false}, Case{"compact", false, true}, Case{"compact,delete", true, true},
                        Case{"delete,compact", true, true}, Case{"compact , delete", true, true},
                        Case{" compact,  delete ", true, true}, Case{"delete,delete", true, false},
                        Case{"compact,compact,delete", true, true}, Case{"", false, false}, Case{"  ", false, false}}) {
    const TopicConfig config = parse_ok({{"cleanup.policy", c.raw}});
    EXPECT_EQ(config.cleanup_delete, c.del) << c.raw;
    EXPECT_EQ(config.cleanup_compact, c.compact) << c.raw;
    EXPECT_EQ(config.retention_enabled(), c.del) << c.raw;
    EXPECT_EQ(config.compacted(), c.compact) << c.raw;
  }
  EXPECT_EQ(value_after("cleanup.policy", "delete,compact"), "compact,delete");
  EXPECT_EQ(value_after("cleanup.policy", ""), "");
  EXPECT_EQ(error_of("cleanup.policy", "Delete"),
            "Invalid value Delete for configuration cleanup.policy: String must be one of: compact, delete");
  EXPECT_EQ(error_of("cleanup.policy", "compact,Compact"),
            "Invalid value Compact for configuration cleanup.policy: String must be one of: compact, delete");
  for (const std::string bad : {"compact,,delete", "delete,", ",", "compact;delete", "compact delete", "none"}) {
    EXPECT_NE(error_of("cleanup.policy", bad), "ok") << bad;
  }
}

TEST(TopicConfig, DurabilityValues) {
  const TopicConfig both = parse_ok({{"durability", "persisted"}});
  EXPECT_EQ(both.durability, Durability::kPersisted);
  EXPECT_EQ(both.consumer_offset_durability, Durability::kReplicated);  // independent of durability
  EXPECT_EQ(parse_ok({{"consumer.offset.durability", "persisted"}}).consumer_offset_durability, Durability::kPersisted);
  EXPECT_EQ(error_of("durability", "Persisted"),
            "Invalid value Persisted for configuration durability: String must be one of: replicated, persisted");
  EXPECT_NE(error_of("consumer.offset.durability", "fsync"), "ok");
}

// C7 / LCfgT.testInvalidCompactionLagConfig: min.compaction.lag.ms must not exceed max.compaction.lag.ms.
TEST(TopicConfig, CompactionLagsCrossField) {
  EXPECT_TRUE(parse({{"min.compaction.lag.ms", "100"}, {"max.compaction.lag.ms", "100"}}).ok());
  Result<TopicConfig> bad = parse({{"min.compaction.lag.ms", "101"}, {"max.compaction.lag.ms", "100"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(to_error_code(bad.status()), ErrorCode::kInvalidConfig);
  EXPECT_EQ(bad.status().message(),
            "conflict topic config setting min.compaction.lag.ms (101) > max.compaction.lag.ms (100)");
  // The broker default counts as much as an override.
  TopicConfig broker;
  broker.max_compaction_lag_ms = 50;
  EXPECT_FALSE(TopicConfig::from_overrides({{"min.compaction.lag.ms", "51"}}, broker).ok());
  EXPECT_TRUE(TopicConfig::from_overrides({{"min.compaction.lag.ms", "50"}}, broker).ok());
}

TEST(TopicConfig, FirstErrorWinsAndNothingIsHalfApplied) {
  Result<TopicConfig> config = parse({{"retention.ms", "-7"}, {"segment.bytes", "1"}});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("retention.ms"), std::string::npos);
}

TEST(TopicConfig, BrokerDefaultsApplyWhereNotOverridden) {
  TopicConfig broker;
  broker.retention_ms = 3600000;
  broker.segment_bytes = 4096;
  const TopicConfig config = *TopicConfig::from_overrides({{"segment.bytes", "1024"}}, broker);
  EXPECT_EQ(config.retention_ms, 3600000);
  EXPECT_EQ(config.segment_bytes, 1024);
  EXPECT_EQ(config.defaults().segment_bytes, 4096);
  EXPECT_EQ(config.overrides(), (Overrides{{"segment.bytes", "1024"}}));
}

TEST(TopicConfig, OverridesAreExplicitKeysAndChangedFields) {
  TopicConfig config = parse_ok({{"retention.ms", "604800000"}, {"cleanup.policy", "compact , delete"}});
  EXPECT_EQ(config.overrides(), (Overrides{{"cleanup.policy", "compact,delete"}, {"retention.ms", "604800000"}}));
  EXPECT_TRUE(config.is_override("retention.ms"));
  EXPECT_FALSE(config.is_override("segment.ms"));
  EXPECT_FALSE(config.is_override("no.such.key"));
  config.segment_ms = 1000;  // changed directly: still persisted
  EXPECT_TRUE(config.is_override("segment.ms"));
  EXPECT_EQ(config.overrides().at("segment.ms"), "1000");
  EXPECT_EQ(config.value_of("segment.ms"), "1000");
  EXPECT_EQ(config.value_of("no.such.key"), std::nullopt);
}

}  // namespace
}  // namespace sluice::storage
