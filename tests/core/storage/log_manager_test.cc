#include "core/storage/log_manager.h"

#include <gtest/gtest.h>

#include <functional>

#include "sim/world/sim_disk.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

std::unique_ptr<LogManager> open_manager(Env env, BrokerStorageConfig config = {}) {
  auto manager = LogManager::open(env, "data", std::move(config));
  EXPECT_TRUE(manager.ok()) << manager.status().to_string();
  return manager.ok() ? std::move(*manager) : nullptr;
}

TopicConfig config_with(const std::map<std::string, std::string>& overrides) {
  auto config = TopicConfig::from_overrides(overrides, TopicConfig());
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : TopicConfig();
}

TEST(LogManager, PartitionsAndTheirConfigsSurviveARestart) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_manager(env);
    const TopicPartition a{"orders", 0};
    const TopicPartition b{"orders-eu", 3};
    ASSERT_TRUE(manager->create_partition(a, config_with({{"retention.ms", "5000"}})).ok());
    ASSERT_TRUE(manager->create_partition(b, config_with({{"durability", "persisted"}})).ok());
    EXPECT_EQ(manager->create_partition(a, TopicConfig()).status().code(), Code::kAlreadyExists);
    ASSERT_TRUE(manager->append(b, batch_of(3, 1)).ok());
    ASSERT_TRUE(manager->close().ok());

    auto reopened = open_manager(env);
    EXPECT_EQ(reopened->partitions(), (std::vector<TopicPartition>{a, b}));
    EXPECT_EQ(reopened->topic_config(a)->retention_ms, 5000);
    EXPECT_EQ(reopened->topic_config(b)->durability, Durability::kPersisted);
    EXPECT_EQ(reopened->find(b)->log_end_offset(), 3);
    EXPECT_EQ(to_error_code(reopened->append({"nope", 0}, batch_of(1, 1)).status()),
              ErrorCode::kUnknownTopicOrPartition);
    ASSERT_TRUE(reopened->close().ok());
  }));
}

// The product promise: an expired record stops being readable within seconds, even in the active segment.
TEST(LogManager, AnExpiredRecordStopsBeingReadableWithinTheCheckInterval) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    BrokerStorageConfig broker;
    broker.log_retention_check_interval_ms = 2000;
    auto manager = open_manager(env, broker);
    const TopicPartition tp{"events", 0};
    ASSERT_TRUE(manager->create_partition(tp, config_with({{"retention.ms", "3000"}})).ok());
    manager->start();
    ASSERT_TRUE(manager->append(tp, batch_of(2, to_unix_ms(env.clock.wall_now()))).ok());
    env.scheduler.sleep_for(std::chrono::seconds(2));
    ASSERT_TRUE(manager->append(tp, batch_of(1, to_unix_ms(env.clock.wall_now()))).ok());
    PartitionLog& log = *manager->find(tp);
    EXPECT_TRUE(log.read(0, 1000, INT64_MAX).ok()) << "not expired yet";
    // Expired at 3 s; the 2-second check sees it by 5 s at the latest.
    env.scheduler.sleep_for(std::chrono::milliseconds(3100));
    EXPECT_EQ(log.log_start_offset(), 2) << "the newer record in the same active segment stays";
    EXPECT_EQ(to_error_code(log.read(0, 1000, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
    EXPECT_TRUE(log.read(2, 1000, INT64_MAX).ok());
    ASSERT_TRUE(manager->close().ok());
  }));
}

TEST(LogManager, ConfigChangesTakeEffectWithoutRestart) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_manager(env);
    const TopicPartition tp{"t", 0};
    ASSERT_TRUE(manager->create_partition(tp, TopicConfig()).ok());
    ASSERT_TRUE(manager->append(tp, batch_of(4, to_unix_ms(env.clock.wall_now()) - 60000)).ok());
    auto moved = manager->run_retention(to_unix_ms(env.clock.wall_now()));
    ASSERT_TRUE(moved.ok());
    EXPECT_TRUE(moved->empty()) << "7 days by default";
    ASSERT_TRUE(manager->alter_config(tp, config_with({{"retention.ms", "1000"}})).ok());
    moved = manager->run_retention(to_unix_ms(env.clock.wall_now()));
    ASSERT_TRUE(moved.ok());
    ASSERT_EQ(moved->size(), 1u);
    EXPECT_EQ(moved->at(tp).log_start_after, 4);
    ASSERT_TRUE(manager->close().ok());
  }));
}

// A manager refusing appends above 50 % disk usage, with partition "t"-0 holding `first`; `body` runs next.
void with_half_disk_limit(const Bytes& first,
                          const std::function<void(Env, SimDisk&, LogManager&, const TopicPartition&)>& body) {
  OneNode world;
  SimDisk& disk = world.disk();
  ASSERT_TRUE(world.run([&disk, &first, &body](Env env) {
    BrokerStorageConfig broker;
    broker.log_disk_usage_max_percent = 50;
    auto manager = open_manager(env, broker);
    const TopicPartition tp{"t", 0};
    ASSERT_TRUE(manager->create_partition(tp, TopicConfig()).ok());
    ASSERT_TRUE(manager->append(tp, first).ok());
    body(env, disk, *manager, tp);
    ASSERT_TRUE(manager->close().ok());
  }));
}

TEST(LogManager, DiskPressureRefusesAppendsButReadsKeepWorking) {
  with_half_disk_limit(batch_of(2, 1, "v", 1000), [](Env env, SimDisk& disk, LogManager& manager,
                                                      const TopicPartition& tp) {
    disk.set_capacity_bytes(disk.used_bytes() + disk.used_bytes() / 2);  // now over 50 % full
    env.scheduler.sleep_for(LogManager::kDiskUsageRecheckInterval);        // the last reading goes stale
    Result<AppendResult> refused = manager.append(tp, batch_of(1, 1));
    EXPECT_EQ(to_error_code(refused.status()), ErrorCode::kKafkaStorageError);
    EXPECT_NE(refused.status().message().find("log.disk.usage.max.percent"), std::string::npos);
    EXPECT_TRUE(manager.find(tp)->read(0, 1 << 20, INT64_MAX).ok()) << "reads keep working";
    EXPECT_EQ(manager.find(tp)->log_end_offset(), 2) << "nothing was appended";
    EXPECT_EQ(manager.appends_refused_for_space(), 1u);
  });
}

TEST(LogManager, ADiskFilledByOthersIsNoticedWithinTheRecheckInterval) {
  with_half_disk_limit(batch_of(1, 1), [](Env env, SimDisk& disk, LogManager& manager, const TopicPartition& tp) {
    disk.set_capacity_bytes(disk.used_bytes() * 3);  // now over 50 % full, unknown to the broker's last reading
    EXPECT_TRUE(manager.append(tp, batch_of(1, 2)).ok()) << "the reading is trusted for the recheck interval";
    env.scheduler.sleep_for(LogManager::kDiskUsageRecheckInterval);
    EXPECT_EQ(to_error_code(manager.append(tp, batch_of(1, 3)).status()), ErrorCode::kKafkaStorageError);
    EXPECT_EQ(manager.find(tp)->log_end_offset(), 2);
  });
}

TEST(LogManager, OwnAppendsThatReachTheThresholdAreRefusedWithoutWaitingForARecheck) {
  with_half_disk_limit(batch_of(1, 1), [](Env env, SimDisk& disk, LogManager& manager, const TopicPartition& tp) {
    disk.set_capacity_bytes(disk.used_bytes() * 2 + 128 * 1024);  // under 50 % full, 64 KiB from it
    env.scheduler.sleep_for(LogManager::kDiskUsageRecheckInterval);
    ASSERT_TRUE(manager.append(tp, batch_of(1, 2)).ok()) << "a fresh reading: below the threshold";
    ASSERT_TRUE(manager.append(tp, batch_of(1, 3, "big", 96 * 1024)).ok()) << "passes the check, then crosses";
    // No time passes: the bytes appended since the reading are what makes the broker look again.
    Result<AppendResult> refused = manager.append(tp, batch_of(1, 4));
    EXPECT_EQ(to_error_code(refused.status()), ErrorCode::kKafkaStorageError);
    EXPECT_NE(refused.status().message().find("log.disk.usage.max.percent"), std::string::npos);
    EXPECT_EQ(manager.find(tp)->log_end_offset(), 3);
  });
}

TEST(LogManager, DeleteOldestPolicyMovesTheOldestLogStartAndSaysSo) {
  OneNode world;
  SimDisk& disk = world.disk();
  ASSERT_TRUE(world.run([&disk](Env env) {
    BrokerStorageConfig broker;
    broker.log_disk_usage_max_percent = 50;
    broker.log_disk_pressure_policy = DiskPressurePolicy::kDeleteOldest;
    auto manager = open_manager(env, broker);
    const TopicPartition old_tp{"old", 0};
    const TopicPartition new_tp{"new", 0};
    ASSERT_TRUE(manager->create_partition(old_tp, TopicConfig()).ok());
    ASSERT_TRUE(manager->create_partition(new_tp, TopicConfig()).ok());
    ASSERT_TRUE(manager->append(old_tp, batch_of(5, 1000, "v", 4000)).ok());
    ASSERT_TRUE(manager->find(old_tp)->roll().ok());
    ASSERT_TRUE(manager->append(new_tp, batch_of(1, 2000)).ok());
    disk.set_capacity_bytes(disk.used_bytes() + disk.used_bytes() / 2);
    env.scheduler.sleep_for(LogManager::kDiskUsageRecheckInterval);
    (void)manager->append(new_tp, batch_of(1, 3000));
    EXPECT_EQ(manager->find(old_tp)->log_start_offset(), 5) << "the oldest segment went first";
    EXPECT_EQ(manager->find(new_tp)->log_start_offset(), 0);
    ASSERT_TRUE(manager->close().ok());
  }));
}

TEST(LogManager, PartitionDirectoryNames) {
  EXPECT_EQ(parse_partition_dir("orders-3"), (TopicPartition{"orders", 3}));
  EXPECT_EQ(parse_partition_dir("a-b-0"), (TopicPartition{"a-b", 0}));
  EXPECT_FALSE(parse_partition_dir("orders").has_value());
  EXPECT_FALSE(parse_partition_dir("orders-").has_value());
  EXPECT_FALSE(parse_partition_dir("-1").has_value());
  EXPECT_FALSE(parse_partition_dir("x-1a").has_value());
}

}  // namespace
}  // namespace sluice::storage
