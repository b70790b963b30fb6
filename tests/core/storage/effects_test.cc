// Declared effects (core/storage/effects.h): the log manager reports each removal or cut it makes on purpose, with
// the fields a checker needs, as it takes effect.
#include "core/storage/effects.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "core/storage/log_format.h"
#include "core/storage/log_manager.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;
using Kind = LogEffect::Kind;
using Reason = LogEffect::Reason;

const TopicPartition kTp{"t", 0};

// Keeps every effect; `on_record` (when set) looks at the broker's state as the effect is reported.
class RecordingSink final : public EffectSink {
 public:
  void record(const LogEffect& effect) override {
    effects.push_back(effect);
    if (on_record) on_record(effect);
  }
  std::vector<LogEffect> of(Kind kind) const {
    std::vector<LogEffect> out;
    for (const LogEffect& effect : effects) {
      if (effect.kind == kind) out.push_back(effect);
    }
    return out;
  }
  std::vector<LogEffect> effects;
  std::function<void(const LogEffect&)> on_record;
};

int64_t now_ms(Env env) { return to_unix_ms(env.clock.wall_now()); }

class Effects : public ::testing::Test {
 protected:
  // Runs `body` with a manager reporting to `sink` that holds partition kTp, created with `config`; closes it after.
  void run(const TopicConfig& config, const std::function<void(Env, LogManager&)>& body,
           BrokerStorageConfig broker = {}) {
    ASSERT_TRUE(world.run([&](Env env) {
      auto manager = open_log_manager(env, std::move(broker), &sink);
      ASSERT_TRUE(manager->create_partition(kTp, config).ok());
      body(env, *manager);
      ASSERT_TRUE(manager->close().ok());
    }));
  }

  OneNode world;
  RecordingSink sink;
};

TEST(EffectText, OneLineForTracesAndFailureReports) {
  LogEffect effect;
  effect.reason = Reason::kRetentionTime;
  effect.tp = {"orders", 3};
  effect.from = 10;
  effect.to = 42;
  effect.now_ms = 1700000000000;
  EXPECT_EQ(to_string(effect), "log-start-advanced orders-3 [10, 42) by retention.ms now_ms=1700000000000");
  LogEffect pass;
  pass.kind = Kind::kCompacted;
  pass.tp = kTp;
  pass.from = 0;
  pass.to = 7;
  pass.now_ms = 5;
  pass.delete_retention_ms = 86400000;
  EXPECT_EQ(to_string(pass), "compacted t-0 [0, 7) now_ms=5 delete.retention.ms=86400000");
  LogEffect created;
  created.kind = Kind::kPartitionCreated;
  created.tp = kTp;
  EXPECT_EQ(to_string(created), "partition-created t-0");
}

TEST_F(Effects, CreatingAndDeletingAPartition) {
  run(TopicConfig(), [&](Env env, LogManager& manager) {
    ASSERT_EQ(sink.effects.size(), 1u);
    EXPECT_EQ(sink.effects[0].kind, Kind::kPartitionCreated);
    EXPECT_EQ(sink.effects[0].tp, kTp);
    EXPECT_GT(sink.effects[0].now_ms, 0);
    EXPECT_LE(sink.effects[0].now_ms, now_ms(env));
    ASSERT_TRUE(manager.append(kTp, batch_of(3, now_ms(env))).ok());
    ASSERT_TRUE(manager.delete_records(kTp, 1).ok());
    sink.on_record = [&](const LogEffect& effect) {
      if (effect.kind == Kind::kPartitionDeleted) {
        EXPECT_EQ(manager.find(kTp), nullptr) << "gone when reported";
      }
    };
    ASSERT_TRUE(manager.delete_partition(kTp).ok());
    const std::vector<LogEffect> deleted = sink.of(Kind::kPartitionDeleted);
    ASSERT_EQ(deleted.size(), 1u);
    EXPECT_EQ(deleted[0].tp, kTp);
    EXPECT_EQ(deleted[0].from, 1) << "the records it still held: [log start, log end)";
    EXPECT_EQ(deleted[0].to, 3);
  });
}

// Reported right after the move, before any other fiber can see it: the log start is already `to`.
TEST_F(Effects, DeleteRecordsAdvancesTheLogStart) {
  run(TopicConfig(), [&](Env env, LogManager& manager) {
    ASSERT_TRUE(manager.append(kTp, batch_of(5, now_ms(env))).ok());
    sink.on_record = [&](const LogEffect& effect) { EXPECT_EQ(manager.find(kTp)->log_start_offset(), effect.to); };
    const int64_t before = now_ms(env);
    ASSERT_TRUE(manager.delete_records(kTp, 2).ok());
    ASSERT_TRUE(manager.delete_records(kTp, 2).ok());  // no move, no effect
    ASSERT_TRUE(manager.delete_records(kTp, -1).ok());
    const std::vector<LogEffect> moved = sink.of(Kind::kLogStartAdvanced);
    ASSERT_EQ(moved.size(), 2u);
    EXPECT_EQ(moved[0].reason, Reason::kDeleteRecords);
    EXPECT_EQ(moved[0].tp, kTp);
    EXPECT_EQ(moved[0].from, 0);
    EXPECT_EQ(moved[0].to, 2);
    EXPECT_EQ(moved[0].now_ms, before) << "the wall clock as it was asked";
    EXPECT_EQ(moved[1].from, 2);
    EXPECT_EQ(moved[1].to, 5) << "-1: up to the high watermark";
  });
}

// One retention check that evicts by time, then by size: one effect each, with the wall clock it judged by.
TEST_F(Effects, RetentionByTimeThenBySize) {
  const size_t batch_bytes = batch_of(1, 0, "v", 100).size();
  const TopicConfig limits =
      topic_config_with({{"retention.ms", "100000"}, {"retention.bytes", std::to_string(2 * batch_bytes)}});
  run(limits, [&](Env env, LogManager& manager) {
    const int64_t now = now_ms(env);
    ASSERT_TRUE(manager.append(kTp, batch_of(2, now - 200000, "v", 100)).ok());  // offsets 0-1: expired
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(manager.append(kTp, batch_of(1, now, "v", 100)).ok());  // 2, 3, 4
    sink.on_record = [&](const LogEffect&) {
      EXPECT_EQ(manager.find(kTp)->log_start_offset(), 3) << "both parts: reported after the one move";
    };
    ASSERT_TRUE(manager.run_retention(now).ok());
    const std::vector<LogEffect> moved = sink.of(Kind::kLogStartAdvanced);
    ASSERT_EQ(moved.size(), 2u);
    EXPECT_EQ(moved[0].reason, Reason::kRetentionTime);
    EXPECT_EQ(moved[0].from, 0);
    EXPECT_EQ(moved[0].to, 2);
    EXPECT_EQ(moved[0].now_ms, now);
    EXPECT_EQ(moved[1].reason, Reason::kRetentionBytes);
    EXPECT_EQ(moved[1].from, 2);
    EXPECT_EQ(moved[1].to, 3);
    EXPECT_EQ(moved[1].now_ms, now);
  });
}

TEST_F(Effects, DiskPressureDeletesTheOldestSegment) {
  BrokerStorageConfig broker;
  broker.log_disk_usage_max_percent = 50;
  broker.log_disk_pressure_policy = DiskPressurePolicy::kDeleteOldest;
  SimDisk& disk = world.disk();
  run(TopicConfig(), [&](Env env, LogManager& manager) {
    ASSERT_TRUE(manager.append(kTp, batch_of(5, 1000, "v", 4000)).ok());
    ASSERT_TRUE(manager.find(kTp)->roll().ok());
    disk.set_capacity_bytes(disk.used_bytes() + disk.used_bytes() / 2);
    env.scheduler.sleep_for(LogManager::kDiskUsageRecheckInterval);
    const int64_t before = now_ms(env);
    (void)manager.append(kTp, batch_of(1, 3000));
    const std::vector<LogEffect> moved = sink.of(Kind::kLogStartAdvanced);
    ASSERT_EQ(moved.size(), 1u);
    EXPECT_EQ(moved[0].reason, Reason::kDiskPressure);
    EXPECT_EQ(moved[0].from, 0);
    EXPECT_EQ(moved[0].to, 5);
    EXPECT_GE(moved[0].now_ms, before);
    EXPECT_LE(moved[0].now_ms, now_ms(env));
  }, broker);
}

// A pass is reported once it knows its range and before its first swap: the segments are still the old ones.
TEST_F(Effects, ACleanerPassWithItsRangeClockAndDeleteRetention) {
  const TopicConfig compacted = topic_config_with(
      {{"cleanup.policy", "compact"}, {"min.cleanable.dirty.ratio", "0.01"}, {"delete.retention.ms", "5000"}});
  run(compacted, [&](Env env, LogManager& manager) {
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(manager.append(kTp, one_record("k", std::to_string(i), 1)).ok());
    ASSERT_TRUE(manager.find(kTp)->roll().ok());
    const uint64_t bytes_before = manager.find(kTp)->segments().front().size_bytes;
    sink.on_record = [&](const LogEffect&) {
      EXPECT_EQ(manager.find(kTp)->segments().front().size_bytes, bytes_before) << "no swap yet";
    };
    const int64_t now = now_ms(env);
    auto cleaned = manager.run_cleaner_once(now);
    ASSERT_TRUE(cleaned.ok() && cleaned->has_value() && (*cleaned)->result.cleaned);
    EXPECT_EQ(offsets(read_all(*manager.find(kTp))), (std::vector<int64_t>{5}));
    const std::vector<LogEffect> passes = sink.of(Kind::kCompacted);
    ASSERT_EQ(passes.size(), 1u);
    EXPECT_EQ(passes[0].tp, kTp);
    EXPECT_EQ(passes[0].from, 0);
    EXPECT_EQ(passes[0].to, 6);
    EXPECT_EQ(passes[0].now_ms, now);
    EXPECT_EQ(passes[0].delete_retention_ms, 5000);
  });
}

// An unclean stop, then a torn tail at the end of the last segment: the reopened manager reports the cut.
TEST_F(Effects, RecoveryCuttingATornTail) {
  ASSERT_TRUE(world.run([&](Env env) {
    auto manager = open_log_manager(env, {}, &sink);
    ASSERT_TRUE(manager->create_partition(kTp, TopicConfig()).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(manager->append(kTp, batch_of(1, 1)).ok());
  }));  // no close: an unclean stop
  world.node().crash();
  {
    auto file = world.fs().open("data/t-0/" + segment_file_name(0, kLogSuffix), OpenMode::kCreate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->append(Bytes(100, 0xab)).ok());
    ASSERT_TRUE((*file)->sync().ok());
  }
  EXPECT_TRUE(sink.of(Kind::kTruncatedOnRecovery).empty());
  ASSERT_TRUE(world.run([&](Env env) {
    const int64_t before = now_ms(env);
    auto manager = open_log_manager(env, {}, &sink);
    const std::vector<LogEffect> cut = sink.of(Kind::kTruncatedOnRecovery);
    ASSERT_EQ(cut.size(), 1u);
    EXPECT_EQ(cut[0].tp, kTp);
    EXPECT_EQ(cut[0].from, 3) << "the new log end";
    EXPECT_EQ(cut[0].to, -1) << "a torn tail's offsets are not known";
    EXPECT_GE(cut[0].now_ms, before);
    EXPECT_LE(cut[0].now_ms, now_ms(env));
    ASSERT_TRUE(manager->close().ok());
    auto again = open_log_manager(env, {}, &sink);
    EXPECT_EQ(sink.of(Kind::kTruncatedOnRecovery).size(), 1u) << "a clean reopen cuts nothing";
    ASSERT_TRUE(again->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
