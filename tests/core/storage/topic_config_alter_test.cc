// Topic configs after creation: AlterConfigs, IncrementalAlterConfigs, create-only keys, describe, persistence and the
// effective values the log reads.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>

#include "core/protocol/error_codes.h"
#include "core/storage/topic_config.h"

namespace sluice::storage {
namespace {

using Overrides = std::map<std::string, std::string>;
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();

TopicConfig make(const Overrides& overrides, const TopicConfig& broker = TopicConfig{}) {
  Result<TopicConfig> config = TopicConfig::from_overrides(overrides, broker);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : TopicConfig{};
}

Result<TopicConfig> incremental(const TopicConfig& current, const std::vector<ConfigChange>& changes) {
  return TopicConfig::alter(current, changes, AlterMode::kIncremental);
}

TopicConfig incremental_ok(const TopicConfig& current, const std::vector<ConfigChange>& changes) {
  Result<TopicConfig> config = incremental(current, changes);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : TopicConfig{};
}

std::string policy_after(const TopicConfig& current, AlterOp op, const std::string& value) {
  return incremental_ok(current, {{"cleanup.policy", op, value}}).value_of("cleanup.policy").value_or("?");
}

TEST(TopicConfigAlter, ReplaceMakesTheRequestTheWholeSetOfOverrides) {
  TopicConfig broker;
  broker.segment_bytes = 4096;
  const TopicConfig current = make({{"retention.ms", "1000"}, {"segment.bytes", "1024"}}, broker);
  Result<TopicConfig> next = TopicConfig::alter(current, Overrides{{"retention.bytes", "5"}}, AlterMode::kReplace);
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  EXPECT_EQ(next->overrides(), (Overrides{{"retention.bytes", "5"}}));
  EXPECT_EQ(next->retention_ms, 604800000);  // back to the default
  EXPECT_EQ(next->segment_bytes, 4096);      // back to the broker's default, not Kafka's
  EXPECT_EQ(current.retention_ms, 1000);     // the current config is untouched
}

TEST(TopicConfigAlter, ReplaceValidatesLikeCreate) {
  const TopicConfig current = make({});
  Result<TopicConfig> next = TopicConfig::alter(current, Overrides{{"retention.ms", "-2"}}, AlterMode::kReplace);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(to_error_code(next.status()), ErrorCode::kInvalidConfig);
  EXPECT_FALSE(TopicConfig::alter(current, Overrides{{"bogus", "1"}}, AlterMode::kReplace).ok());
  EXPECT_FALSE(TopicConfig::alter(current, Overrides{{"min.compaction.lag.ms", "10"}, {"max.compaction.lag.ms", "5"}},
                                  AlterMode::kReplace)
                   .ok());
}

TEST(TopicConfigAlter, IncrementalSetKeepsOtherOverrides) {
  const TopicConfig current = make({{"retention.ms", "1000"}});
  const TopicConfig next = incremental_ok(current, {{"segment.ms", AlterOp::kSet, "60000"}});
  EXPECT_EQ(next.overrides(), (Overrides{{"retention.ms", "1000"}, {"segment.ms", "60000"}}));
  // The map overload is a list of SETs.
  Result<TopicConfig> via_map =
      TopicConfig::alter(current, Overrides{{"segment.ms", "60000"}}, AlterMode::kIncremental);
  ASSERT_TRUE(via_map.ok());
  EXPECT_EQ(via_map->overrides(), next.overrides());
}

TEST(TopicConfigAlter, IncrementalDeleteGoesBackToTheDefault) {
  TopicConfig broker;
  broker.retention_ms = 3600000;
  const TopicConfig current = make({{"retention.ms", "1000"}, {"segment.ms", "60000"}}, broker);
  const TopicConfig next = incremental_ok(current, {{"retention.ms", AlterOp::kDelete, ""}});
  EXPECT_EQ(next.retention_ms, 3600000);
  EXPECT_FALSE(next.is_override("retention.ms"));
  EXPECT_EQ(next.overrides(), (Overrides{{"segment.ms", "60000"}}));
  // Deleting a key that is not overridden changes nothing.
  EXPECT_EQ(incremental_ok(next, {{"flush.ms", AlterOp::kDelete, ""}}).overrides(), next.overrides());
  // An unknown name is refused whatever the operation.
  Result<TopicConfig> unknown = incremental(next, {{"bogus", AlterOp::kDelete, ""}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "Unknown topic config name: bogus");
}

TEST(TopicConfigAlter, IncrementalChangesApplyInOrder) {
  const TopicConfig next =
      incremental_ok(make({}), {{"retention.ms", AlterOp::kSet, "5"}, {"cleanup.policy", AlterOp::kAppend, "compact"}});
  EXPECT_EQ(next.retention_ms, 5);
  EXPECT_TRUE(next.compacted());
}

TEST(TopicConfigAlter, AppendAndSubtractOnCleanupPolicy) {
  const TopicConfig plain = make({});
  EXPECT_EQ(policy_after(plain, AlterOp::kAppend, "compact"), "compact,delete");
  EXPECT_EQ(policy_after(plain, AlterOp::kAppend, "delete"), "delete");  // already there
  EXPECT_EQ(policy_after(plain, AlterOp::kAppend, " compact , delete "), "compact,delete");
  EXPECT_EQ(policy_after(plain, AlterOp::kSubtract, "delete"), "");         // neither policy
  EXPECT_EQ(policy_after(plain, AlterOp::kSubtract, "compact"), "delete");  // absent: no-op
  const TopicConfig both = make({{"cleanup.policy", "compact,delete"}});
  EXPECT_EQ(policy_after(both, AlterOp::kSubtract, "compact"), "delete");
  EXPECT_EQ(policy_after(both, AlterOp::kSubtract, "compact,delete"), "");
  EXPECT_TRUE(incremental_ok(plain, {{"cleanup.policy", AlterOp::kSubtract, "delete"}}).is_override("cleanup.policy"));
  // An appended item is validated like any list value.
  Result<TopicConfig> bad = incremental(plain, {{"cleanup.policy", AlterOp::kAppend, "Compact"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "Invalid value Compact for configuration cleanup.policy: String must be one of: compact, delete");
}

TEST(TopicConfigAlter, AppendStartsFromTheBrokerDefaultInForce) {
  TopicConfig broker;
  broker.cleanup_delete = false;
  broker.cleanup_compact = true;
  EXPECT_EQ(policy_after(make({}, broker), AlterOp::kAppend, "delete"), "compact,delete");
}

TEST(TopicConfigAlter, AppendOrSubtractOnAScalarIsInvalidConfig) {
  const TopicConfig current = make({});
  Result<TopicConfig> append = incremental(current, {{"retention.ms", AlterOp::kAppend, "5"}});
  ASSERT_FALSE(append.ok());
  EXPECT_EQ(to_error_code(append.status()), ErrorCode::kInvalidConfig);
  EXPECT_EQ(append.status().message(), "Config value append is not allowed for config key: retention.ms");
  Result<TopicConfig> subtract = incremental(current, {{"durability", AlterOp::kSubtract, "replicated"}});
  ASSERT_FALSE(subtract.ok());
  EXPECT_EQ(subtract.status().message(), "Config value subtract is not allowed for config key: durability");
}

TEST(TopicConfigAlter, DuplicateKeyIsInvalidRequest) {
  Result<TopicConfig> next =
      incremental(make({}), {{"retention.ms", AlterOp::kSet, "5"}, {"retention.ms", AlterOp::kDelete, ""}});
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(to_error_code(next.status()), ErrorCode::kInvalidRequest);
}

TEST(TopicConfigAlter, DurabilityIsCreateOnly) {
  const TopicConfig replicated = make({});
  const TopicConfig persisted = make({{"durability", "persisted"}});
  Result<TopicConfig> change = incremental(replicated, {{"durability", AlterOp::kSet, "persisted"}});
  ASSERT_FALSE(change.ok());
  EXPECT_EQ(to_error_code(change.status()), ErrorCode::kInvalidConfig);
  EXPECT_NE(change.status().message().find("durability is fixed when the topic is created"), std::string::npos)
      << change.status().message();
  EXPECT_FALSE(incremental(persisted, {{"durability", AlterOp::kSet, "replicated"}}).ok());
  EXPECT_FALSE(incremental(persisted, {{"durability", AlterOp::kDelete, ""}}).ok());  // would mean replicated
  EXPECT_FALSE(incremental(replicated, {{"consumer.offset.durability", AlterOp::kSet, "persisted"}}).ok());
  // Restating the value it has is fine, as is deleting a default.
  EXPECT_TRUE(incremental(persisted, {{"durability", AlterOp::kSet, " persisted"}}).ok());
  EXPECT_TRUE(incremental(replicated, {{"durability", AlterOp::kSet, "replicated"}}).ok());
  EXPECT_TRUE(incremental(replicated, {{"durability", AlterOp::kDelete, ""}}).ok());
  // The refusal wins even beside valid changes, and leaves nothing applied.
  EXPECT_FALSE(
      incremental(replicated, {{"retention.ms", AlterOp::kSet, "5"}, {"durability", AlterOp::kSet, "persisted"}}).ok());
}

TEST(TopicConfigAlter, ReplaceKeepsCreateOnlyKeysItLeavesOut) {
  const TopicConfig persisted = make({{"durability", "persisted"}, {"retention.ms", "5"}});
  Result<TopicConfig> next = TopicConfig::alter(persisted, Overrides{{"segment.ms", "10"}}, AlterMode::kReplace);
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  EXPECT_EQ(next->durability, Durability::kPersisted);
  EXPECT_EQ(next->overrides(), (Overrides{{"durability", "persisted"}, {"segment.ms", "10"}}));
  EXPECT_FALSE(TopicConfig::alter(persisted, Overrides{{"durability", "replicated"}}, AlterMode::kReplace).ok());
  EXPECT_TRUE(TopicConfig::alter(persisted, Overrides{{"durability", "persisted"}}, AlterMode::kReplace).ok());
}

TEST(TopicConfigDescribe, ListsEveryKeyWithItsSource) {
  TopicConfig broker;
  broker.segment_bytes = 4096;
  const TopicConfig config = make({{"retention.ms", "1000"}, {"durability", "persisted"}}, broker);
  const std::vector<ConfigEntry> entries = config.describe();
  ASSERT_EQ(entries.size(), topic_config_keys().size());
  std::map<std::string, ConfigEntry> by_name;
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].name, topic_config_keys()[i].name);  // table order
    EXPECT_FALSE(entries[i].sensitive);
    EXPECT_FALSE(entries[i].documentation.empty());
    by_name[entries[i].name] = entries[i];
  }
  EXPECT_EQ(by_name["retention.ms"].value, "1000");
  EXPECT_FALSE(by_name["retention.ms"].is_default);
  EXPECT_EQ(by_name["retention.ms"].source, ConfigSource::kDynamicTopicConfig);
  EXPECT_EQ(by_name["retention.ms"].type, ConfigType::kLong);
  EXPECT_EQ(by_name["segment.bytes"].value, "4096");
  EXPECT_TRUE(by_name["segment.bytes"].is_default);
  EXPECT_EQ(by_name["segment.bytes"].source, ConfigSource::kStaticBrokerConfig);
  EXPECT_EQ(by_name["segment.ms"].value, "604800000");
  EXPECT_TRUE(by_name["segment.ms"].is_default);
  EXPECT_EQ(by_name["segment.ms"].source, ConfigSource::kDefaultConfig);
  EXPECT_EQ(by_name["cleanup.policy"].value, "delete");
  EXPECT_EQ(by_name["cleanup.policy"].type, ConfigType::kList);
  EXPECT_EQ(by_name["min.cleanable.dirty.ratio"].value, "0.5");
  EXPECT_EQ(by_name["max.compaction.lag.ms"].value, "9223372036854775807");
  EXPECT_EQ(by_name["message.timestamp.type"].value, "CreateTime");
  EXPECT_EQ(by_name["unclean.leader.election.enable"].value, "false");
  EXPECT_EQ(by_name["durability"].value, "persisted");
  EXPECT_FALSE(by_name["durability"].is_default);
  EXPECT_TRUE(by_name["durability"].read_only);
  EXPECT_TRUE(by_name["consumer.offset.durability"].read_only);
  EXPECT_TRUE(by_name["consumer.offset.durability"].is_default);
  EXPECT_FALSE(by_name["retention.ms"].read_only);
}

TEST(TopicConfigProperties, RoundTripIsDeterministic) {
  TopicConfig broker;
  broker.segment_bytes = 4096;
  const TopicConfig config = make({{"retention.ms", "-1"},
                                   {"cleanup.policy", "delete,compact"},
                                   {"min.cleanable.dirty.ratio", "0.1"},
                                   {"durability", "persisted"}},
                                  broker);
  const std::string text = config.to_properties();
  EXPECT_EQ(text,
            "cleanup.policy=compact,delete\ndurability=persisted\nmin.cleanable.dirty.ratio=0.1\nretention.ms=-1\n");
  Result<TopicConfig> loaded = TopicConfig::from_properties(text, broker);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_TRUE(*loaded == config);
  EXPECT_EQ(loaded->overrides(), config.overrides());
  EXPECT_EQ(loaded->to_properties(), text);
  EXPECT_EQ(make({}).to_properties(), "");
  // Neither policy persists as an empty value and reads back as neither.
  const TopicConfig none = make({{"cleanup.policy", ""}});
  EXPECT_EQ(none.to_properties(), "cleanup.policy=\n");
  EXPECT_FALSE(TopicConfig::from_properties(none.to_properties(), TopicConfig{})->retention_enabled());
}

TEST(TopicConfigProperties, NonOverriddenKeysFollowTheBrokerDefaultsOfTheDay) {
  TopicConfig old_broker;
  old_broker.segment_bytes = 4096;
  const std::string text = make({{"retention.ms", "5"}}, old_broker).to_properties();
  TopicConfig new_broker;
  new_broker.segment_bytes = 8192;
  EXPECT_EQ(TopicConfig::from_properties(text, new_broker)->segment_bytes, 8192);
}

TEST(TopicConfigProperties, DamageIsCorruption) {
  EXPECT_TRUE(TopicConfig::from_properties("# comment\n\nretention.ms=5", TopicConfig{}).ok());
  for (const std::string bad : {"retention.ms\n", "retention.ms=5\nretention.ms=6\n", "retention.ms=abc\n", "bogus=1\n",
                                "durability=maybe\n"}) {
    Result<TopicConfig> loaded = TopicConfig::from_properties(bad, TopicConfig{});
    ASSERT_FALSE(loaded.ok()) << bad;
    EXPECT_EQ(loaded.status().code(), Code::kCorruption) << bad;
    EXPECT_NE(loaded.status().message().find("topic config properties"), std::string::npos);
  }
}

TEST(TopicConfigEffective, SegmentMsIsCappedByMaxCompactionLagWhenCompacted) {
  EXPECT_EQ(make({{"segment.ms", "1000"}, {"max.compaction.lag.ms", "500"}}).effective_segment_ms(), 1000);
  EXPECT_EQ(make({{"segment.ms", "1000"}, {"max.compaction.lag.ms", "500"}, {"cleanup.policy", "compact"}})
                .effective_segment_ms(),
            500);
  EXPECT_EQ(make({{"segment.ms", "400"}, {"max.compaction.lag.ms", "500"}, {"cleanup.policy", "compact,delete"}})
                .effective_segment_ms(),
            400);
  EXPECT_EQ(make({{"cleanup.policy", "compact"}}).effective_segment_ms(), 604800000);
}

TEST(TopicConfigEffective, RetentionLimits) {
  EXPECT_EQ(make({}).size_retention_bytes(), std::nullopt);
  EXPECT_EQ(make({{"retention.bytes", "-5"}}).size_retention_bytes(), std::nullopt);
  EXPECT_EQ(make({{"retention.bytes", "0"}}).size_retention_bytes(), 0);
  EXPECT_EQ(make({{"retention.bytes", "1024"}}).size_retention_bytes(), 1024);
  EXPECT_EQ(make({{"retention.ms", "-1"}}).time_retention_ms(), std::nullopt);
  EXPECT_EQ(make({{"retention.ms", "3600000"}}).time_retention_ms(), 3600000);
  EXPECT_FALSE(make({{"cleanup.policy", "compact"}}).retention_enabled());
}

TEST(TopicConfigEffective, TimestampWindowFallsBackToDifferenceMax) {
  EXPECT_EQ(make({}).timestamp_before_max_ms(), kLongMax);
  EXPECT_EQ(make({}).timestamp_after_max_ms(), kLongMax);
  const TopicConfig diff = make({{"message.timestamp.difference.max.ms", "1000"}});
  EXPECT_EQ(diff.timestamp_before_max_ms(), 1000);
  EXPECT_EQ(diff.timestamp_after_max_ms(), 1000);
  const TopicConfig split =
      make({{"message.timestamp.difference.max.ms", "1000"}, {"message.timestamp.before.max.ms", "50"}});
  EXPECT_EQ(split.timestamp_before_max_ms(), 50);
  EXPECT_EQ(split.timestamp_after_max_ms(), 1000);
  EXPECT_EQ(make({{"message.timestamp.after.max.ms", "7"}}).timestamp_after_max_ms(), 7);
}

TEST(TopicConfigEffective, CreateTimeWindowEdges) {
  const TopicConfig window =
      make({{"message.timestamp.before.max.ms", "100"}, {"message.timestamp.after.max.ms", "10"}});
  EXPECT_TRUE(window.create_time_in_window(900, 1000));
  EXPECT_FALSE(window.create_time_in_window(899, 1000));
  EXPECT_TRUE(window.create_time_in_window(1010, 1000));
  EXPECT_FALSE(window.create_time_in_window(1011, 1000));
  const TopicConfig open = make({});
  EXPECT_TRUE(open.create_time_in_window(std::numeric_limits<int64_t>::min(), kLongMax));
  EXPECT_TRUE(open.create_time_in_window(kLongMax, std::numeric_limits<int64_t>::min()));
  EXPECT_TRUE(open.create_time_in_window(0, 1700000000000));
}

}  // namespace
}  // namespace sluice::storage
