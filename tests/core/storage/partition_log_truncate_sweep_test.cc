// The truncation's crash-point sweep (the pattern of crash_point_sweep_test.cc): a replica's log of 12 batches over
// four segments is truncated inside its second segment, then takes new batches of a new epoch at the cut, is flushed
// and closed; a power loss cuts that after every simulation step, and recovery itself is cut once more part-way.
// Every restart must load a consistent log: the batches below the cut as they were, then either a prefix of the old
// suffix or a prefix of the new batches, never both; no old batch once truncate_to returned; every new batch once
// the flush returned; and an epoch cache that agrees with the batches' own epochs.
#include <gtest/gtest.h>

#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

constexpr const char* kDir = "sweep";
constexpr int64_t kCut = 10;  // inside the second segment (bases 0, 6, 12, 18)
constexpr int64_t kOldEnd = 24;
constexpr int64_t kNewEnd = 18;

LogSettings sweep_settings() {
  LogSettings settings = small_settings();
  settings.segment_bytes = 300;  // three batches a segment
  settings.file_delete_delay_ms = 0;
  return settings;
}

Bytes old_batch(int64_t base) { return leader_batch(base, 2, base < 8 ? 1 : base < 16 ? 2 : 5, "old"); }
Bytes new_batch(int64_t base) { return leader_batch(base, 2, 7, "new"); }

void setup(Env env) {
  auto log = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  for (int64_t base = 0; base < kOldEnd; base += 2) ASSERT_TRUE((*log)->append_as_replica(old_batch(base)).ok());
  ASSERT_EQ((*log)->segments().size(), 4u);
  ASSERT_TRUE((*log)->close().ok());
}

struct Progress {
  bool truncated = false;  // truncate_to returned
  bool flushed = false;    // the new batches' flush returned
};

void phase(Env env, Progress& progress) {
  auto log = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  ASSERT_TRUE((*log)->truncate_to(kCut).ok());
  progress.truncated = true;
  for (int64_t base = kCut; base < kNewEnd; base += 2) ASSERT_TRUE((*log)->append_as_replica(new_batch(base)).ok());
  ASSERT_TRUE((*log)->flush().ok());
  progress.flushed = true;
  ASSERT_TRUE((*log)->close().ok());
}

void recover(Env env) {
  auto log = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  ASSERT_TRUE((*log)->close().ok());
}

void check(Env env, const Progress& progress, const std::string& where) {
  auto opened = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(opened.ok()) << where << ": " << opened.status().to_string();
  PartitionLog& log = **opened;
  EXPECT_EQ(log.log_start_offset(), 0) << where;
  EXPECT_GE(log.log_end_offset(), kCut) << where << ": the prefix below the cut was durable";
  int64_t next = 0;
  int old_above = 0;
  int new_above = 0;
  LeaderEpochCache expected;
  while (next < log.log_end_offset()) {
    auto read = log.read(next, 1, INT64_MAX);
    ASSERT_TRUE(read.ok()) << where << " at " << next << ": " << read.status().to_string();
    const std::vector<BatchHeader> headers = headers_of(read->records);
    ASSERT_EQ(headers.size(), 1u) << where;
    const BatchHeader& h = headers[0];
    ASSERT_EQ(h.base_offset, next) << where << ": a hole or an overlap";
    if (next < kCut) {
      EXPECT_EQ(read->records, old_batch(next)) << where << " at " << next;
    } else if (read->records == old_batch(next)) {
      ++old_above;
    } else {
      EXPECT_EQ(read->records, new_batch(next)) << where << " at " << next << ": neither old nor new";
      ++new_above;
    }
    if (expected.empty() || h.partition_leader_epoch > *expected.latest_epoch()) {
      expected.assign(h.partition_leader_epoch, h.base_offset);
    }
    for (int64_t offset = h.base_offset; offset <= h.last_offset(); ++offset) {
      EXPECT_EQ(log.epoch_at(offset), h.partition_leader_epoch) << where << " at " << offset;
    }
    next = h.last_offset() + 1;
  }
  EXPECT_TRUE(old_above == 0 || new_above == 0) << where << ": old and new batches above the cut";
  if (progress.truncated) {
    EXPECT_EQ(old_above, 0) << where << ": the old suffix came back after truncate_to";
  }
  if (progress.flushed) {
    EXPECT_GE(log.log_end_offset(), kNewEnd) << where << ": flushed batches lost";
  }
  EXPECT_EQ(log.leader_epochs(), expected.entries()) << where;
  ASSERT_TRUE(log.close().ok());
}

TEST(TruncateSweep, PowerLossAtEveryStepOfATruncationAndTheAppendsAfterIt) {
  size_t total_steps = 0;
  {
    OneNode world(11);
    ASSERT_TRUE(world.run(setup));
    world.node().crash();
    Progress progress;
    bool finished = false;
    total_steps = run_steps(world, [&](Env env) { phase(env, progress); }, SIZE_MAX, &finished);
    ASSERT_TRUE(finished);
    ASSERT_TRUE(progress.flushed);
  }
  ASSERT_GT(total_steps, 60u);
  size_t old_kept = 0;
  size_t new_kept = 0;
  size_t recovery_cuts = 0;
  for (size_t cut = 0; cut <= total_steps; ++cut) {
    OneNode world(11);
    ASSERT_TRUE(world.run(setup));
    world.node().crash();
    Progress progress;
    run_steps(world, [&](Env env) { phase(env, progress); }, cut, nullptr);
    world.node().power_loss();
    bool recovered = false;
    run_steps(world, recover, cut % 40, &recovered);  // a power loss inside recovery too
    if (!recovered) ++recovery_cuts;
    world.node().power_loss();
    const std::string where = "cut after step " + std::to_string(cut);
    ASSERT_TRUE(world.run([&](Env env) {
      check(env, progress, where);
      auto log = PartitionLog::open(env, kDir, sweep_settings());
      if (log.ok() && (*log)->log_end_offset() > kCut) {
        auto read = (*log)->read(kCut, 1, INT64_MAX);
        if (read.ok() && read->records == old_batch(kCut)) ++old_kept;
        if (read.ok() && read->records == new_batch(kCut)) ++new_kept;
      }
      if (log.ok()) {
        ASSERT_TRUE((*log)->close().ok());
      }
    })) << where;
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(old_kept, 0u) << "no cut fell before the truncation took effect";
  EXPECT_GT(new_kept, 0u) << "no cut kept the batches appended after it";
  EXPECT_GT(recovery_cuts, total_steps / 4) << "recovery itself was interrupted at many points";
}

}  // namespace
}  // namespace sluice::storage
