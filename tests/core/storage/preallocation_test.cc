// Preallocation of a `persisted` log's active segment (Segment::append, kPersistedPreallocateBytes): the .log is
// extended ahead of the appends so that their syncs journal no size change. The zeros past the data never show:
// rolls and clean closes cut them before the segment is synced, recovery after a power loss cuts them without
// calling them a torn tail, and the log inspector reports them as preallocated, not as damage.
#include <gtest/gtest.h>

#include "core/storage/log_inspector.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "t-0";

LogSettings settings(bool persisted) {
  LogSettings s = small_settings();
  s.persisted = persisted;
  return s;
}

TEST(Preallocation, APersistedActiveSegmentEndsInZerosThatRollAndCloseCut) {
  OneNode world(3);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings(true));
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE((*log)->append(batch_of(2, 1000 + i, "a" + std::to_string(i))).ok());
    SegmentInfo first = (*log)->segments().back();
    const std::string first_file = (*log)->segment_files().back().log_file;
    // The first append preallocated a MiB past itself; the next ones wrote inside it.
    EXPECT_GT(file_bytes(env.fs, first_file), first.size_bytes);
    EXPECT_LT(file_bytes(env.fs, first_file), first.size_bytes + kPersistedPreallocateBytes);
    ASSERT_TRUE((*log)->roll().ok());
    first = (*log)->segments().front();
    ASSERT_EQ((*log)->segment_files().front().log_file, first_file);
    EXPECT_EQ(file_bytes(env.fs, first_file), first.size_bytes) << "the rolled segment kept its zeros";
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 2000 + i, "b" + std::to_string(i))).ok());
    const SegmentInfo second = (*log)->segments().back();
    const std::string second_file = (*log)->segment_files().back().log_file;
    EXPECT_GT(file_bytes(env.fs, second_file), second.size_bytes);
    ASSERT_TRUE((*log)->close().ok());
    EXPECT_EQ(file_bytes(env.fs, second_file), second.size_bytes) << "the clean close kept the zeros";
  }));
  world.node().power_loss();
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings(true));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_TRUE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->log_end_offset(), 13);
    EXPECT_EQ(read_all(**log).size(), 13u);
  }));
}

TEST(Preallocation, AReplicatedLogDoesNotPreallocate) {
  OneNode world(4);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings(false));
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE((*log)->append(batch_of(2, 1000 + i)).ok());
    const SegmentInfo active = (*log)->segments().back();
    EXPECT_EQ(file_bytes(env.fs, (*log)->segment_files().back().log_file), active.size_bytes);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// A power loss keeps the synced zeros behind the last acknowledged batch: recovery cuts them, counts them as
// preallocated (not torn), loses nothing, and the inspector reads the crashed directory without reporting damage.
TEST(Preallocation, RecoveryCutsThePreallocatedZerosWithoutCallingThemTorn) {
  OneNode world(5);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings(true));
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 7; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 1000 + i, "c" + std::to_string(i))).ok());
  }));
  world.node().power_loss();
  ASSERT_TRUE(world.run([&](Env env) {
    Result<PartitionReport> report = inspect_partition(env, kDir, InspectOptions{});
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    ASSERT_EQ(report->segments.size(), 1u);
    EXPECT_EQ(report->segments[0].damage, "");
    EXPECT_EQ(report->segments[0].batches, 7);
    EXPECT_GT(report->segments[0].preallocated_bytes, 0u);

    auto log = PartitionLog::open(env, kDir, settings(true));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    const LoadStats& stats = (*log)->load_stats();
    EXPECT_FALSE(stats.clean_shutdown);
    EXPECT_EQ(stats.torn_bytes_truncated, 0u);
    EXPECT_EQ(stats.preallocated_bytes_cut, report->segments[0].preallocated_bytes);
    EXPECT_EQ((*log)->log_end_offset(), 7);
    const std::vector<Seen> seen = read_all(**log);
    ASSERT_EQ(seen.size(), 7u);
    EXPECT_EQ(seen.back().value.value_or(""), "c6-0");
    const SegmentInfo active = (*log)->segments().back();
    EXPECT_EQ(file_bytes(env.fs, (*log)->segment_files().back().log_file), active.size_bytes);
    // Appends go on after the recovered end, preallocating again.
    ASSERT_TRUE((*log)->append(batch_of(1, 3000, "d")).ok());
    EXPECT_EQ(read_all(**log).size(), 8u);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// Zeros after the data of a segment that is not the last are still damage: rolls cut and sync them before the
// next segment exists, so only a fault can leave them there.
TEST(Preallocation, ZerosInsideAnEarlierSegmentAreStillRefused) {
  OneNode world(6);
  std::string first_log;
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings(true));
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->append(batch_of(1, 1000, "e")).ok());
    ASSERT_TRUE((*log)->roll().ok());
    ASSERT_TRUE((*log)->append(batch_of(1, 1001, "f")).ok());
    first_log = (*log)->segment_files().front().log_file;
  }));
  world.node().power_loss();
  ASSERT_TRUE(world.run([&](Env env) {
    auto file = env.fs.open(first_log, OpenMode::kReadWrite);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->preallocate((*file)->size().value() + 4096).ok());
    ASSERT_TRUE((*file)->sync().ok());
    auto log = PartitionLog::open(env, kDir, settings(true));
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), Code::kCorruption) << log.status().to_string();
  }));
}

}  // namespace
}  // namespace sluice::storage
