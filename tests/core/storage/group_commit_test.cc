// Group commit under durability=persisted on the simulated disk: an acknowledged append is durable whenever the
// power goes, also while the next round runs; waiting appenders share rounds. A round syncs only the active
// segment's .log: its indexes are rebuilt by recovery (the active segment is always scanned after an unclean
// stop), and a clean close syncs them.
#include <gtest/gtest.h>

#include <map>

#include "core/storage/log_format.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "gc";

struct Acked {
  int64_t base;
  std::string tag;
};

LogSettings persisted_settings() {
  LogSettings s = small_settings();  // one segment; an index entry for every batch but the first
  s.persisted = true;
  return s;
}

// `fibers` appenders, `per_fiber` batches each; every acknowledged batch is recorded when append returns.
void append_concurrently(Env env, PartitionLog& log, int fibers, int per_fiber, std::vector<Acked>& acked) {
  std::vector<FiberRef> spawned;
  for (int f = 0; f < fibers; ++f) {
    spawned.push_back(env.scheduler.spawn("appender", [&log, &acked, f, per_fiber] {
      for (int i = 0; i < per_fiber; ++i) {
        const std::string tag = "f" + std::to_string(f) + "-" + std::to_string(i);
        auto r = log.append(batch_of(1, 1000 + i, tag));
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        EXPECT_GT(log.recovery_point(), r->last_offset);  // durable before the ack
        acked.push_back(Acked{r->base_offset, tag});
      }
    }));
  }
  for (const FiberRef& f : spawned) env.scheduler.join(f);
}

// Entries of the segment-0 .index as the disk holds them now (after a power loss: what was synced).
size_t index_entries_on_disk(FileSystem& fs) {
  return file_bytes(fs, kDir + "/" + segment_file_name(0, kIndexSuffix)) / kOffsetIndexEntryBytes;
}

// After a power loss: every acknowledged batch is at its offset with its content, found through the indexes
// recovery rebuilt. Returns how many batches were lost.
size_t check_after_power_loss(OneNode& world, const std::vector<Acked>& acked) {
  size_t lost = 0;
  EXPECT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, persisted_settings());
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    std::map<int64_t, std::string> values;
    for (const Seen& seen : read_all(**log)) values[seen.offset] = seen.value.value_or("");
    for (const Acked& a : acked) {
      const auto it = values.find(a.base);
      if (it == values.end()) {
        ++lost;
        continue;
      }
      EXPECT_EQ(it->second, a.tag + "-0") << "offset " << a.base;
      // An offset lookup goes through the rebuilt .index: it must land on this very batch.
      auto read = (*log)->read(a.base, 1, (*log)->log_end_offset());
      ASSERT_TRUE(read.ok()) << read.status().to_string();
      ASSERT_FALSE(read->records.empty()) << "offset " << a.base;
    }
  }));
  return lost;
}

TEST(GroupCommit, WaitingWritersShareRoundsThatSyncOnlyTheLog) {
  OneNode world(5);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, persisted_settings());
    ASSERT_TRUE(log.ok());
    const uint64_t syncs_before = world.disk().stats().syncs;
    constexpr int kWriters = 32;
    std::vector<Acked> acked;
    append_concurrently(env, **log, kWriters, 4, acked);
    ASSERT_EQ(acked.size(), size_t{kWriters} * 4);
    const LogStats& stats = (*log)->stats();
    const uint64_t syncs = world.disk().stats().syncs - syncs_before;
    EXPECT_LE(stats.sync_rounds, acked.size() / 4) << "rounds";
    EXPECT_LE(syncs, stats.sync_rounds) << "a round syncs the active .log and nothing else";
    EXPECT_GT(stats.shared_syncs, 0u);
    EXPECT_EQ(stats.helped_index_syncs + stats.index_sync_fibers, 0u);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// The rounds leave the index entries (one per batch here) unsynced; the clean close syncs them, so the next open
// can trust the indexes as the marker says.
TEST(GroupCommit, AOneWriterRoundSyncsTheLogAndTheCloseSyncsTheIndexes) {
  OneNode world(6);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, persisted_settings());
    ASSERT_TRUE(log.ok());
    std::vector<Acked> acked;
    append_concurrently(env, **log, 1, 10, acked);
    EXPECT_EQ((*log)->stats().sync_rounds, 10u);
    EXPECT_EQ((*log)->stats().index_sync_fibers + (*log)->stats().helped_index_syncs, 0u);
    ASSERT_TRUE((*log)->close().ok());
  }));
  world.node().power_loss();
  EXPECT_GE(index_entries_on_disk(world.fs()), 9u);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, persisted_settings());
    ASSERT_TRUE(log.ok());
    EXPECT_TRUE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->load_stats().indexes_rebuilt, 0u);
    EXPECT_EQ(read_all(**log).size(), 10u);
  }));
}

// Appenders that never stop, cut by a power loss at a random moment: nothing acknowledged is lost, and every
// acknowledged offset is found through the rebuilt index.
TEST(GroupCommit, AcknowledgedAppendsSurviveARandomPowerLoss) {
  size_t total_acked = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    OneNode world(seed);
    std::vector<Acked> acked;
    world.node().boot([&](Env env) {
      auto log = PartitionLog::open(env, kDir, persisted_settings());
      ASSERT_TRUE(log.ok()) << log.status().to_string();
      append_concurrently(env, **log, 12, 1000, acked);
    });
    world.world().run_for(std::chrono::microseconds(Random(seed).uniform_range(300, 20000)));
    const std::vector<Acked> acked_at_cut = acked;
    world.node().power_loss();
    EXPECT_EQ(check_after_power_loss(world, acked_at_cut), 0u) << "seed " << seed;
    total_acked += acked_at_cut.size();
  }
  EXPECT_GT(total_acked, 200u);
}

// A power loss after every step of a concurrent workload: whatever was acknowledged before the cut survives,
// also when the cut lands while the next round is still running.
TEST(GroupCommit, AcknowledgedAppendsSurvivePowerLossAtEveryStep) {
  auto workload = [](Env env, std::vector<Acked>& acked, PartitionLog** out) {
    auto log = PartitionLog::open(env, kDir, persisted_settings());
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    *out = log->get();
    append_concurrently(env, **log, 6, 3, acked);
    *out = nullptr;
    ASSERT_TRUE((*log)->close().ok());
  };
  size_t total_steps = 0;
  {
    OneNode world(17);
    std::vector<Acked> acked;
    PartitionLog* log = nullptr;
    bool done = false;
    world.node().boot([&](Env env) {
      workload(env, acked, &log);
      done = true;
    });
    while (!done && world.world().step()) ++total_steps;
    ASSERT_TRUE(done);
  }
  ASSERT_GT(total_steps, 30u);
  size_t cuts_during_a_later_round = 0;
  for (size_t cut = 0; cut <= total_steps; ++cut) {
    OneNode world(17);
    std::vector<Acked> acked;
    PartitionLog* log = nullptr;
    world.node().boot([&](Env env) { workload(env, acked, &log); });
    for (size_t s = 0; s < cut && world.world().step(); ++s) {
    }
    if (log != nullptr && log->sync_running() && !acked.empty()) ++cuts_during_a_later_round;
    const std::vector<Acked> acked_at_cut = acked;
    world.node().power_loss();
    EXPECT_EQ(check_after_power_loss(world, acked_at_cut), 0u) << "cut after step " << cut;
  }
  EXPECT_GT(cuts_during_a_later_round, 0u) << "no cut landed while a round ran after an acknowledgement";
}

}  // namespace
}  // namespace sluice::storage
