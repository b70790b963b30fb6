// Broker storage settings: Kafka's names and defaults, Sluice's departures, and the broker defaults of topic configs.
#include "core/storage/broker_storage_config.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>

#include "core/protocol/error_codes.h"

namespace sluice::storage {
namespace {

using Settings = std::map<std::string, std::string>;
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();

BrokerStorageConfig parse_ok(const Settings& settings) {
  Result<BrokerStorageConfig> config = BrokerStorageConfig::from_map(settings);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : BrokerStorageConfig{};
}

std::string error_of(const Settings& settings) {
  Result<BrokerStorageConfig> config = BrokerStorageConfig::from_map(settings);
  if (config.ok()) return "ok";
  EXPECT_EQ(to_error_code(config.status()), ErrorCode::kInvalidConfig) << config.status().to_string();
  return config.status().message();
}

int64_t retention_ms(const Settings& settings) { return parse_ok(settings).topic_defaults.retention_ms; }

TEST(BrokerStorageConfig, Defaults) {
  const BrokerStorageConfig c = parse_ok({});
  EXPECT_EQ(c.log_retention_check_interval_ms, 5000);  // Sluice's departure; Kafka: 300000
  EXPECT_TRUE(c.log_cleaner_enable);
  EXPECT_EQ(c.log_cleaner_backoff_ms, 15000);
  EXPECT_EQ(c.log_cleaner_dedupe_buffer_size, 128 * 1024 * 1024);
  EXPECT_EQ(c.log_cleaner_io_buffer_load_factor, 0.9);
  EXPECT_EQ(c.log_cleaner_io_buffer_size, 512 * 1024);
  EXPECT_EQ(c.log_flush_scheduler_interval_ms, kLongMax);
  EXPECT_EQ(c.log_flush_offset_checkpoint_interval_ms, 60000);
  EXPECT_EQ(c.log_flush_start_offset_checkpoint_interval_ms, 60000);
  EXPECT_EQ(c.log_disk_usage_max_percent, 95);
  EXPECT_EQ(c.log_disk_pressure_policy, DiskPressurePolicy::kReject);
  EXPECT_TRUE(c.topic_defaults == TopicConfig{});
}

TEST(BrokerStorageConfig, RetentionPrecedenceMsOverMinutesOverHours) {
  EXPECT_EQ(retention_ms({}), 168LL * 3600 * 1000);
  EXPECT_EQ(retention_ms({{"log.retention.hours", "1"}}), 3600000);
  EXPECT_EQ(retention_ms({{"log.retention.minutes", "2"}, {"log.retention.hours", "1"}}), 120000);
  EXPECT_EQ(retention_ms({{"log.retention.ms", "7"}, {"log.retention.minutes", "2"}, {"log.retention.hours", "1"}}), 7);
  EXPECT_EQ(retention_ms({{"log.retention.ms", "7"}, {"log.retention.hours", "1"}}), 7);
  EXPECT_EQ(retention_ms({{"log.retention.ms", "0"}}), 0);
  // Any negative result means unlimited (KafkaConfig.logRetentionTimeMillis).
  EXPECT_EQ(retention_ms({{"log.retention.ms", "-5"}}), -1);
  EXPECT_EQ(retention_ms({{"log.retention.minutes", "-1"}}), -1);
  EXPECT_EQ(retention_ms({{"log.retention.hours", "-1"}}), -1);
  // A value that does not parse is refused even where a finer key would win.
  EXPECT_EQ(error_of({{"log.retention.hours", "1.5"}}),
            "Invalid value 1.5 for configuration log.retention.hours: Not a number of type INT, valid values: "
            "[-2147483648,...,2147483647]");
  EXPECT_EQ(error_of({{"log.retention.ms", "week"}}),
            "Invalid value week for configuration log.retention.ms: Not a number of type LONG, valid values: [...]");
}

TEST(BrokerStorageConfig, RollAndJitterPrecedence) {
  EXPECT_EQ(parse_ok({{"log.roll.hours", "2"}}).topic_defaults.segment_ms, 7200000);
  EXPECT_EQ(parse_ok({{"log.roll.ms", "5"}, {"log.roll.hours", "2"}}).topic_defaults.segment_ms, 5);
  EXPECT_EQ(parse_ok({{"log.roll.jitter.hours", "1"}}).topic_defaults.segment_jitter_ms, 3600000);
  EXPECT_EQ(parse_ok({{"log.roll.jitter.ms", "9"}, {"log.roll.jitter.hours", "1"}}).topic_defaults.segment_jitter_ms,
            9);
  EXPECT_EQ(error_of({{"log.roll.hours", "0"}}),
            "Invalid value 0 for configuration log.roll.hours: Value must be at least 1");
  EXPECT_EQ(error_of({{"log.roll.ms", "0"}}),
            "Invalid value 0 for configuration log.roll.ms: Value must be at least 1");
  EXPECT_NE(error_of({{"log.roll.jitter.hours", "-1"}}), "ok");
}

TEST(BrokerStorageConfig, FlushMsFallsBackToTheSchedulerInterval) {
  EXPECT_EQ(parse_ok({}).topic_defaults.flush_ms, kLongMax);
  EXPECT_EQ(parse_ok({{"log.flush.scheduler.interval.ms", "3000"}}).topic_defaults.flush_ms, 3000);
  const BrokerStorageConfig both =
      parse_ok({{"log.flush.scheduler.interval.ms", "3000"}, {"log.flush.interval.ms", "10"}});
  EXPECT_EQ(both.topic_defaults.flush_ms, 10);
  EXPECT_EQ(both.log_flush_scheduler_interval_ms, 3000);
}

TEST(BrokerStorageConfig, TopicSynonymsUseTheTopicRulesAndNameTheBrokerKey) {
  const BrokerStorageConfig c = parse_ok({{"log.segment.bytes", "14"},
                                          {"log.cleanup.policy", "compact"},
                                          {"message.max.bytes", "100"},
                                          {"log.retention.bytes", "-7"},
                                          {"log.cleaner.min.cleanable.ratio", "0.75"},
                                          {"log.message.timestamp.type", "LogAppendTime"},
                                          {"min.insync.replicas", "2"},
                                          {"unclean.leader.election.enable", "true"}});
  EXPECT_EQ(c.topic_defaults.segment_bytes, 14);
  EXPECT_TRUE(c.topic_defaults.compacted());
  EXPECT_FALSE(c.topic_defaults.retention_enabled());
  EXPECT_EQ(c.topic_defaults.max_message_bytes, 100);
  EXPECT_EQ(c.topic_defaults.retention_bytes, -7);
  EXPECT_EQ(c.topic_defaults.min_cleanable_dirty_ratio, 0.75);
  EXPECT_EQ(c.topic_defaults.message_timestamp_type, MessageTimestampType::kLogAppendTime);
  EXPECT_EQ(c.topic_defaults.min_insync_replicas, 2);
  EXPECT_TRUE(c.topic_defaults.unclean_leader_election_enable);
  EXPECT_EQ(error_of({{"log.segment.bytes", "13"}}),
            "Invalid value 13 for configuration log.segment.bytes: Value must be at least 14");
  EXPECT_EQ(error_of({{"log.cleanup.policy", "Delete"}}),
            "Invalid value Delete for configuration log.cleanup.policy: String must be one of: compact, delete");
  EXPECT_NE(error_of({{"log.index.size.max.bytes", "3"}}), "ok");
}

TEST(BrokerStorageConfig, CompactionLagConflict) {
  EXPECT_EQ(error_of({{"log.cleaner.min.compaction.lag.ms", "10"}, {"log.cleaner.max.compaction.lag.ms", "5"}}),
            "conflict broker config setting log.cleaner.min.compaction.lag.ms (10) > "
            "log.cleaner.max.compaction.lag.ms (5)");
}

TEST(BrokerStorageConfig, SluiceKnobs) {
  EXPECT_EQ(parse_ok({{"log.disk.usage.max.percent", "1"}}).log_disk_usage_max_percent, 1);
  EXPECT_EQ(parse_ok({{"log.disk.usage.max.percent", "100"}}).log_disk_usage_max_percent, 100);
  EXPECT_EQ(error_of({{"log.disk.usage.max.percent", "0"}}),
            "Invalid value 0 for configuration log.disk.usage.max.percent: Value must be at least 1");
  EXPECT_EQ(error_of({{"log.disk.usage.max.percent", "101"}}),
            "Invalid value 101 for configuration log.disk.usage.max.percent: Value must be no more than 100");
  EXPECT_EQ(parse_ok({{"log.disk.pressure.policy", "delete-oldest"}}).log_disk_pressure_policy,
            DiskPressurePolicy::kDeleteOldest);
  EXPECT_EQ(error_of({{"log.disk.pressure.policy", "Reject"}}),
            "Invalid value Reject for configuration log.disk.pressure.policy: String must be one of: reject, "
            "delete-oldest");
  EXPECT_EQ(parse_ok({{"log.retention.check.interval.ms", "1"}}).log_retention_check_interval_ms, 1);
  EXPECT_NE(error_of({{"log.retention.check.interval.ms", "0"}}), "ok");
}

TEST(BrokerStorageConfig, CleanerKnobs) {
  const BrokerStorageConfig c = parse_ok({{"log.cleaner.backoff.ms", "0"},
                                          {"log.cleaner.dedupe.buffer.size", "4096"},
                                          {"log.cleaner.io.buffer.load.factor", "1"},
                                          {"log.cleaner.enable", "false"}});
  EXPECT_EQ(c.log_cleaner_backoff_ms, 0);
  EXPECT_EQ(c.log_cleaner_dedupe_buffer_size, 4096);
  EXPECT_EQ(c.log_cleaner_io_buffer_load_factor, 1.0);
  EXPECT_FALSE(c.log_cleaner_enable);
  EXPECT_EQ(error_of({{"log.cleaner.io.buffer.load.factor", "0"}}),
            "Invalid value 0 for configuration log.cleaner.io.buffer.load.factor: Value must be greater than 0");
  EXPECT_NE(error_of({{"log.cleaner.io.buffer.load.factor", "1.5"}}), "ok");
  EXPECT_NE(error_of({{"log.cleaner.backoff.ms", "-1"}}), "ok");
  // Kafka's LogCleaner requires slots × load factor > 1 (24 bytes per slot), or the cleaner could never progress.
  EXPECT_NE(error_of({{"log.cleaner.dedupe.buffer.size", "47"}}).find("log.cleaner.dedupe.buffer.size"),
            std::string::npos);
  EXPECT_EQ(parse_ok({{"log.cleaner.dedupe.buffer.size", "48"}}).log_cleaner_dedupe_buffer_size, 48);
  EXPECT_NE(error_of({{"log.cleaner.dedupe.buffer.size", "48"}, {"log.cleaner.io.buffer.load.factor", "0.5"}}), "ok");
  EXPECT_TRUE(
      BrokerStorageConfig::from_map({{"log.cleaner.dedupe.buffer.size", "0"}, {"log.cleaner.enable", "false"}}).ok());
}

TEST(BrokerStorageConfig, OtherBrokerKeysAreLeftAlone) {
  EXPECT_TRUE(BrokerStorageConfig::from_map({{"node.id", "1"}, {"log.dirs", "/data"}, {"listeners", "x"}}).ok());
  EXPECT_FALSE(BrokerStorageConfig::is_storage_key("node.id"));
  EXPECT_FALSE(BrokerStorageConfig::is_storage_key("log.dirs"));
  EXPECT_FALSE(BrokerStorageConfig::is_storage_key(""));
  for (const char* key : {"log.retention.check.interval.ms", "log.retention.ms", "log.retention.minutes",
                          "log.retention.hours", "log.roll.hours", "log.roll.jitter.hours", "log.segment.bytes",
                          "log.flush.interval.ms", "message.max.bytes", "log.disk.pressure.policy"}) {
    EXPECT_TRUE(BrokerStorageConfig::is_storage_key(key)) << key;
  }
}

TEST(BrokerStorageConfig, TopicsBuiltOnBrokerDefaults) {
  const BrokerStorageConfig broker = parse_ok({{"log.retention.hours", "1"}, {"log.segment.bytes", "1048576"}});
  Result<TopicConfig> topic = TopicConfig::from_overrides({{"segment.bytes", "2048"}}, broker.topic_defaults);
  ASSERT_TRUE(topic.ok());
  EXPECT_EQ(topic->retention_ms, 3600000);
  EXPECT_EQ(topic->segment_bytes, 2048);
  for (const ConfigEntry& entry : topic->describe()) {
    if (entry.name == "retention.ms") {
      EXPECT_EQ(entry.source, ConfigSource::kStaticBrokerConfig);
    } else if (entry.name == "segment.bytes") {
      EXPECT_EQ(entry.source, ConfigSource::kDynamicTopicConfig);
    } else if (entry.name == "segment.ms") {
      EXPECT_EQ(entry.source, ConfigSource::kDefaultConfig);
    }
  }
  // DELETE falls back to the broker's value, not Kafka's.
  Result<TopicConfig> reset = TopicConfig::alter(
      *topic, std::vector<ConfigChange>{{"segment.bytes", AlterOp::kDelete, ""}}, AlterMode::kIncremental);
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(reset->segment_bytes, 1048576);
}

}  // namespace
}  // namespace sluice::storage
