// PartitionLog recovery and durability on the simulated disk (storage-semantics.md §4, cases D1-D7).
#include <gtest/gtest.h>

#include "core/storage/log_format.h"
#include "core/storage/log_loader.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "p0";

LogSettings segmented(size_t batches_per_segment) {
  LogSettings s = small_settings();
  s.segment_bytes = static_cast<int64_t>(batches_per_segment * batch_of(1, 1, "t").size());
  return s;
}

// Appends `n` one-record batches tagged "t" (same size each); leaves the log open (no close: an unclean stop).
void fill(Env env, const LogSettings& settings, int n, bool close, size_t pad = 0) {
  auto log = PartitionLog::open(env, kDir, settings);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  for (int i = 0; i < n; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 100 + i, "t", pad)).ok());
  if (close) {
    ASSERT_TRUE((*log)->close().ok());
  }
}

void expect_all_readable(PartitionLog& log, int64_t end) {
  EXPECT_EQ(log.log_end_offset(), end);
  for (int64_t offset = log.log_start_offset(); offset < end; ++offset) {
    auto read = log.read(offset, 1, INT64_MAX);
    ASSERT_TRUE(read.ok()) << offset << ": " << read.status().to_string();
    ASSERT_FALSE(read->records.empty()) << offset;
    EXPECT_EQ(headers_of(read->records).at(0).base_offset, offset);
  }
}

void write_bytes(FileSystem& fs, const std::string& path, ByteView bytes, std::optional<uint64_t> at = {}) {
  auto file = fs.open(path, OpenMode::kCreate);
  ASSERT_TRUE(file.ok());
  if (at.has_value()) {
    ASSERT_TRUE((*file)->pwrite(*at, bytes).ok());
  } else {
    ASSERT_TRUE((*file)->append(bytes).ok());
  }
  ASSERT_TRUE((*file)->sync().ok());
}

std::string seg(int64_t base, std::string_view suffix) { return kDir + "/" + segment_file_name(base, suffix); }

TEST(LogRecovery, CleanShutdownTrustsTheFilesAndRemovesTheMarker) {  // D1
  OneNode world;
  LogSettings settings = small_settings();
  settings.segment_bytes = static_cast<int64_t>(4 * batch_of(1, 1, "t", 1000).size());
  ASSERT_TRUE(world.run([&](Env env) { fill(env, settings, 10, true, 1000); }));
  EXPECT_TRUE(*world.fs().exists(kDir + "/" + std::string(kCleanShutdownFileName)));
  const uint64_t read_before = world.disk().stats().bytes_read;
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok());
    EXPECT_TRUE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->load_stats().segments_recovered, 0u);
    EXPECT_EQ((*log)->load_stats().segments_loaded, 3u);
    EXPECT_FALSE(*env.fs.exists(kDir + "/" + std::string(kCleanShutdownFileName)));
    // No scan: far fewer bytes read than the log holds.
    EXPECT_LT(world.disk().stats().bytes_read - read_before, 10 * batch_of(1, 1, "t", 1000).size() / 4);
    expect_all_readable(**log, 10);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

TEST(LogRecovery, TornTailOfTheLastSegmentIsTruncated) {  // D2
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) { fill(env, segmented(4), 6, false); }));
  world.node().crash();
  const Bytes junk(100, 0xab);
  write_bytes(world.fs(), seg(4, kLogSuffix), junk);
  write_bytes(world.fs(), seg(4, kIndexSuffix), ByteView(junk).subspan(0, 13));
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_FALSE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->load_stats().torn_bytes_truncated, 100u);
    expect_all_readable(**log, 6);
    EXPECT_EQ(*env.fs.open(seg(4, kLogSuffix), OpenMode::kRead).value()->size(), (*log)->segments().back().size_bytes);
    auto next = (*log)->append(batch_of(1, 1));
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->base_offset, 6);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

TEST(LogRecovery, DamageInAClosedSegmentRefusesToLoadUntilRepaired) {  // D3 (departure 2)
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) { fill(env, segmented(4), 10, false); }));
  world.node().crash();
  // Above the recovery point: a lost partition.state means everything is scanned.
  ASSERT_TRUE(world.fs().remove(kDir + "/" + std::string(kStateFileName)).ok());
  const size_t batch = batch_of(1, 1, "t").size();
  write_bytes(world.fs(), seg(0, kLogSuffix), Bytes(1, 0x00), batch + 70);  // inside offset 1's records
  ASSERT_TRUE(world.run([&](Env env) {
    auto refused = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_FALSE(refused.ok());
    const Status& status = refused.status();
    EXPECT_EQ(status.code(), Code::kCorruption);
    EXPECT_EQ(to_error_code(status), ErrorCode::kKafkaStorageError);
    EXPECT_NE(status.message().find("00000000000000000000.log"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("offset 1"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("byte " + std::to_string(batch)), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("sluice log repair p0"), std::string::npos) << status.message();
    auto repaired = PartitionLog::repair(env, kDir);
    ASSERT_TRUE(repaired.ok()) << repaired.status().to_string();
    EXPECT_NE(repaired->find("offset 1"), std::string::npos) << *repaired;
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    expect_all_readable(**log, 1);
    EXPECT_EQ((*log)->segments().size(), 1u);
    EXPECT_FALSE(*env.fs.exists(seg(4, kLogSuffix)));
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// Below the recovery point nothing is rescanned at open, so damage there (a latent sector error) is met by the read
// that serves it: refused with KAFKA_STORAGE_ERROR naming file, offset and the repair command, never served.
TEST(LogRecovery, DamageBelowTheRecoveryPointIsRefusedOnReadNotServed) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) { fill(env, segmented(4), 10, true); }));
  world.node().crash();
  const size_t batch = batch_of(1, 1, "t").size();
  write_bytes(world.fs(), seg(0, kLogSuffix), Bytes(1, 0x00), batch + 70);  // inside offset 1's records
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    auto undamaged = (*log)->read(0, 1, INT64_MAX);
    ASSERT_TRUE(undamaged.ok()) << undamaged.status().to_string();
    EXPECT_EQ(headers_of(undamaged->records).at(0).base_offset, 0);
    auto refused = (*log)->read(1, 1, INT64_MAX);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), Code::kCorruption);
    EXPECT_EQ(to_error_code(refused.status()), ErrorCode::kKafkaStorageError);
    const std::string& message = refused.status().message();
    EXPECT_NE(message.find("00000000000000000000.log"), std::string::npos) << message;
    EXPECT_NE(message.find("offset 1"), std::string::npos) << message;
    EXPECT_NE(message.find("sluice log repair p0"), std::string::npos) << message;
    auto later = (*log)->read(4, 1, INT64_MAX);  // another segment: still served
    ASSERT_TRUE(later.ok()) << later.status().to_string();
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// A power loss can beat a replicated roll's background sync (PartitionLog::roll_locked): the rolled segment then
// ends torn above the recovery point that partition.state still gives, and what follows it was never durable
// either. Damage below that recovery point is still refused.
TEST(LogRecovery, ARolledSegmentTornAboveTheRecoveryPointIsCutAndTheLaterSegmentsGo) {
  const size_t batch = batch_of(1, 1, "t").size();
  for (const int64_t damaged_offset : {1, 3}) {
    SCOPED_TRACE(damaged_offset);
    OneNode world;
    ASSERT_TRUE(world.run([](Env env) { fill(env, segmented(4), 10, false); }));
    world.node().crash();
    ASSERT_TRUE(write_partition_state(world.fs(), kDir, PartitionState{0, 2}).ok());
    write_bytes(world.fs(), seg(0, kLogSuffix), Bytes(1, 0x00), static_cast<uint64_t>(damaged_offset) * batch + 70);
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = PartitionLog::open(env, kDir, segmented(4));
      if (damaged_offset < 2) {
        ASSERT_FALSE(log.ok());
        EXPECT_EQ(log.status().code(), Code::kCorruption);
        EXPECT_NE(log.status().message().find("offset 1"), std::string::npos) << log.status().message();
        EXPECT_TRUE(*env.fs.exists(seg(8, kLogSuffix)));  // nothing was deleted
        return;
      }
      ASSERT_TRUE(log.ok()) << log.status().to_string();
      EXPECT_EQ((*log)->load_stats().torn_bytes_truncated, batch);
      EXPECT_EQ((*log)->load_stats().segments_deleted_after_torn_tail, 2u);
      expect_all_readable(**log, 3);
      EXPECT_EQ((*log)->segments().size(), 1u);
      EXPECT_FALSE(*env.fs.exists(seg(4, kLogSuffix)));
      EXPECT_FALSE(*env.fs.exists(seg(8, kIndexSuffix)));
      auto next = (*log)->append(batch_of(1, 1, "t"));
      ASSERT_TRUE(next.ok());
      EXPECT_EQ(next->base_offset, 3);
      ASSERT_TRUE((*log)->close().ok());
    }));
  }
}

// End to end: power loss right after replicated rolls, before the background sync. Whatever survives is a
// prefix of what was appended, with every acknowledged offset below the recorded recovery point in it.
TEST(LogRecovery, PowerLossBeforeARolledSegmentsBackgroundSyncLeavesAPrefix) {
  LoadStats cut_somewhere;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    OneNode world(seed);
    int64_t durable = -1;
    // Outlives the boot: the power loss unwinds the log's fibers mid-sync, then the log goes.
    std::unique_ptr<PartitionLog> kept;
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = PartitionLog::open(env, kDir, segmented(4));
      ASSERT_TRUE(log.ok());
      for (int i = 0; i < 10; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 100 + i, "t")).ok());
      ASSERT_EQ((*log)->segments().size(), 3u);
      durable = (*log)->recovery_point();
      ASSERT_LT(durable, 8);  // the last roll left its sync to the background fiber
      kept = std::move(*log);
    }));
    world.node().power_loss();
    kept.reset();
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = PartitionLog::open(env, kDir, segmented(4));
      ASSERT_TRUE(log.ok()) << log.status().to_string();
      const std::vector<Seen> seen = read_all(**log);
      EXPECT_GE(static_cast<int64_t>(seen.size()), durable);
      for (size_t i = 0; i < seen.size(); ++i) {
        EXPECT_EQ(seen[i].offset, static_cast<int64_t>(i));
        EXPECT_EQ(seen[i].value, "t-0");
      }
      EXPECT_EQ((*log)->log_end_offset(), static_cast<int64_t>(seen.size()));
      cut_somewhere.torn_bytes_truncated += (*log)->load_stats().torn_bytes_truncated;
      cut_somewhere.segments_deleted_after_torn_tail += (*log)->load_stats().segments_deleted_after_torn_tail;
      ASSERT_TRUE((*log)->close().ok());
    }));
  }
  EXPECT_GT(cut_somewhere.segments_deleted_after_torn_tail, 0u);  // the seeds reach the case this is about
}

TEST(LogRecovery, MissingOrGarbageIndexesAreRebuilt) {  // D4
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) { fill(env, segmented(4), 10, true); }));
  world.node().crash();
  ASSERT_TRUE(world.fs().remove(seg(0, kIndexSuffix)).ok());
  ASSERT_TRUE(world.fs().remove(seg(4, kTimeIndexSuffix)).ok());
  write_bytes(world.fs(), seg(8, kTimeIndexSuffix), Bytes(7, 0x11));
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_TRUE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->load_stats().indexes_rebuilt, 3u);
    expect_all_readable(**log, 10);
    auto found = (*log)->offset_for_timestamp(105);
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(*found, (OffsetAndTimestamp{5, 105}));
    ASSERT_TRUE((*log)->close().ok());
  }));
  // Unclean, with an index whose entries point past the data: rebuilt by the scan.
  world.node().crash();
  Bytes bogus(16, 0);
  put_be(bogus.data(), 1, 4);
  put_be(bogus.data() + 4, 100000, 4);
  put_be(bogus.data() + 8, 2, 4);
  put_be(bogus.data() + 12, 200000, 4);
  ASSERT_TRUE(world.fs().remove(kDir + "/" + std::string(kCleanShutdownFileName)).ok());
  auto file = world.fs().open(seg(8, kIndexSuffix), OpenMode::kCreateTruncate);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->append(bogus).ok());
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    expect_all_readable(**log, 10);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

TEST(LogRecovery, OnlyTheSegmentHoldingTheRecoveryPointIsRescanned) {  // D5
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 100 + i, "t")).ok());
    env.scheduler.sleep_for(100ms);  // the last roll's background sync records its recovery point
  }));
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_EQ((*log)->load_stats().segments_loaded, 3u);
    EXPECT_EQ((*log)->load_stats().segments_recovered, 1u);
    expect_all_readable(**log, 10);
  }));
}

TEST(LogRecovery, StrayTemporaryFilesAreRemovedAndSwapsFinished) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) { fill(env, segmented(4), 10, false); }));
  world.node().crash();
  const std::vector<std::string> strays = {
      seg(0, ".log.cleaned"), seg(4, ".log.deleted"),    seg(4, ".index.deleted"), kDir + "/partition.state.tmp",
      seg(99, kIndexSuffix),  seg(99, kTimeIndexSuffix), seg(50, ".index.swap")};
  for (const std::string& path : strays) write_bytes(world.fs(), path, Bytes(10, 1));
  write_bytes(world.fs(), seg(60, ".log.swap"), Bytes(100, 7));  // an invalid swap: undone
  // A valid swap replacing segment 4 with a copy of itself.
  auto original = world.fs().open(seg(4, kLogSuffix), OpenMode::kRead);
  ASSERT_TRUE(original.ok());
  Bytes copy(*(*original)->size());
  ASSERT_TRUE((*original)->pread(0, copy).ok());
  write_bytes(world.fs(), seg(4, ".log.swap"), copy);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (const std::string& path : strays) EXPECT_FALSE(*env.fs.exists(path)) << path;
    EXPECT_FALSE(*env.fs.exists(seg(60, ".log.swap")));
    EXPECT_FALSE(*env.fs.exists(seg(4, ".log.swap")));
    EXPECT_TRUE(*env.fs.exists(seg(4, kLogSuffix)));
    EXPECT_GE((*log)->load_stats().temp_files_removed, strays.size());
    expect_all_readable(**log, 10);
  }));
}

TEST(LogRecovery, LogStartSurvivesRestartAndDeletedSegmentsStayGone) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 1, "t")).ok());
    ASSERT_TRUE((*log)->delete_records(6).ok());
    ASSERT_TRUE((*log)->remove_segments_below_log_start().ok());
  }));
  world.node().power_loss();
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, segmented(4));
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_EQ((*log)->log_start_offset(), 6);
    EXPECT_EQ((*log)->segments().front().base_offset, 4);
    EXPECT_FALSE(*env.fs.exists(seg(0, ".log.deleted")));
    EXPECT_EQ(error_of((*log)->read(5, 100, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
  }));
}

// ---- Durability on the simulated disk ----

struct Acked {
  int64_t base;
  std::string tag;
};

// Fibers append tagged batches until killed; every acknowledged one is recorded.
void appenders(Env env, const LogSettings& settings, int fibers, std::vector<Acked>& acked) {
  auto log = PartitionLog::open(env, kDir, settings);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  PartitionLog* raw = log->get();
  for (int f = 0; f < fibers; ++f) {
    env.scheduler.spawn("appender", [raw, f, &acked] {
      for (int i = 0;; ++i) {
        const std::string tag = "f" + std::to_string(f) + "-" + std::to_string(i);
        auto r = raw->append(batch_of(1 + i % 3, 1000 + i, tag));
        if (!r.ok()) return;
        acked.push_back(Acked{r->base_offset, tag});
      }
    });
  }
  env.scheduler.sleep_for(std::chrono::hours(1));
}

// Every acknowledged batch is where it was acknowledged, with its content. Returns how many were missing.
size_t count_lost(OneNode& world, const LogSettings& settings, const std::vector<Acked>& acked) {
  size_t lost = 0;
  EXPECT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (const Acked& a : acked) {
      if (a.base >= (*log)->log_end_offset()) {
        ++lost;
        continue;
      }
      auto read = (*log)->read(a.base, 1, INT64_MAX);
      ASSERT_TRUE(read.ok());
      auto records = decode_records(read->records);
      ASSERT_TRUE(records.ok());
      ASSERT_FALSE(records->empty());
      EXPECT_EQ(records->front().offset, a.base);  // never renumbered
      EXPECT_EQ(as_chars(*records->front().value).substr(0, a.tag.size() + 1), a.tag + "-") << a.base;
    }
    ASSERT_TRUE((*log)->close().ok());
  }));
  return lost;
}

TEST(LogDurability, PersistedAcknowledgedAppendsSurvivePowerLoss) {  // D6
  LogSettings settings = segmented(6);
  settings.persisted = true;
  size_t total_acked = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    OneNode world(seed);
    std::vector<Acked> acked;
    world.node().boot([&](Env env) { appenders(env, settings, 4, acked); });
    Random pick(seed);
    world.world().run_for(std::chrono::microseconds(pick.uniform_range(500, 30000)));
    world.node().power_loss();
    EXPECT_EQ(count_lost(world, settings, acked), 0u) << "seed " << seed << ", acked " << acked.size();
    total_acked += acked.size();
  }
  EXPECT_GT(total_acked, 100u);
}

TEST(LogDurability, AFailedSyncTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    LogSettings settings = small_settings();
    settings.persisted = true;
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->append(batch_of(1, 1)).ok());
    world.disk().fail_next(DiskOp::kSync, 1);
    auto failed = (*log)->append(batch_of(1, 1));
    EXPECT_EQ(error_of(failed.status()), ErrorCode::kKafkaStorageError);
    // fsyncgate: no retry may pretend the lost pages are durable.
    EXPECT_EQ(error_of((*log)->append(batch_of(1, 1)).status()), ErrorCode::kKafkaStorageError);
    EXPECT_TRUE((*log)->read(0, 100, INT64_MAX).ok());  // reads keep working
    EXPECT_FALSE((*log)->close().ok());                 // and no clean-shutdown marker is written
  }));
  EXPECT_FALSE(*world.fs().exists(kDir + "/" + std::string(kCleanShutdownFileName)));
}

TEST(LogDurability, ReplicatedLosesNothingOnCrashButMayOnPowerLoss) {  // D7
  LogSettings settings = segmented(6);
  size_t seeds_with_loss = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    for (bool power : {false, true}) {
      OneNode world(seed);
      std::vector<Acked> acked;
      world.node().boot([&](Env env) { appenders(env, settings, 2, acked); });
      world.world().run_for(std::chrono::microseconds(Random(seed).uniform_range(500, 30000)));
      if (power) {
        world.node().power_loss();
        seeds_with_loss += count_lost(world, settings, acked) > 0 ? 1 : 0;
      } else {
        world.node().crash();
        EXPECT_EQ(count_lost(world, settings, acked), 0u) << "seed " << seed;
      }
    }
  }
  EXPECT_GT(seeds_with_loss, 0u) << "a power loss should drop some un-synced acknowledged appends";
}

TEST(LogDurability, EverythingSurvivesCloseThenPowerLoss) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    OneNode world(seed);
    std::vector<Acked> acked;
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = PartitionLog::open(env, kDir, segmented(5));
      ASSERT_TRUE(log.ok());
      for (int i = 0; i < 17; ++i) {
        auto r = (*log)->append(batch_of(1, i, "c" + std::to_string(i)));
        ASSERT_TRUE(r.ok());
        acked.push_back(Acked{r->base_offset, "c" + std::to_string(i)});
      }
      ASSERT_TRUE((*log)->close().ok());
    }));
    world.node().power_loss();
    EXPECT_EQ(count_lost(world, segmented(5), acked), 0u) << "seed " << seed;
  }
}

TEST(LogDurability, GroupCommitSharesSyncsAmongConcurrentAppenders) {
  OneNode world(3);
  ASSERT_TRUE(world.run([&](Env env) {
    LogSettings settings = small_settings();
    settings.persisted = true;
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok());
    const uint64_t syncs_before = world.disk().stats().syncs + world.disk().stats().dir_syncs;
    constexpr int kAppenders = 64;
    int finished = 0;
    std::vector<FiberRef> fibers;
    for (int i = 0; i < kAppenders; ++i) {
      fibers.push_back(env.scheduler.spawn("appender", [&, i] {
        auto r = (*log)->append(batch_of(1, i, "g"));
        EXPECT_TRUE(r.ok());
        EXPECT_GT((*log)->recovery_point(), r->last_offset);  // durable before the ack
        ++finished;
      }));
    }
    for (const FiberRef& f : fibers) env.scheduler.join(f);
    EXPECT_EQ(finished, kAppenders);
    const uint64_t syncs = world.disk().stats().syncs + world.disk().stats().dir_syncs - syncs_before;
    EXPECT_LE(syncs, kAppenders / 4u) << "sync rounds " << (*log)->stats().sync_rounds;
    EXPECT_GT((*log)->stats().shared_syncs, 0u);
    EXPECT_EQ((*log)->log_end_offset(), kAppenders);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// A fixed workload cut by a power loss after every k-th step of the world: every restart loads, everything
// acknowledged is there at its offset.
TEST(LogDurability, PowerLossAtEveryStepOfAWorkloadRecovers) {
  LogSettings settings = segmented(3);
  settings.persisted = true;
  auto workload = [&](Env env, std::vector<Acked>& acked) {
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (int i = 0; i < 8; ++i) {
      auto r = (*log)->append(batch_of(1, i, "w" + std::to_string(i)));
      ASSERT_TRUE(r.ok());
      acked.push_back(Acked{r->base_offset, "w" + std::to_string(i)});
    }
    ASSERT_TRUE((*log)->delete_records(4).ok());
    ASSERT_TRUE((*log)->remove_segments_below_log_start().ok());
    ASSERT_TRUE((*log)->close().ok());
  };
  size_t total_steps = 0;
  {
    OneNode world(11);
    std::vector<Acked> acked;
    bool done = false;
    world.node().boot([&](Env env) {
      workload(env, acked);
      done = true;
    });
    while (!done && world.world().step()) ++total_steps;
    ASSERT_TRUE(done);
  }
  ASSERT_GT(total_steps, 20u);
  for (size_t cut = 0; cut <= total_steps; ++cut) {
    OneNode world(11);
    std::vector<Acked> acked;
    world.node().boot([&](Env env) { workload(env, acked); });
    for (size_t s = 0; s < cut && world.world().step(); ++s) {
    }
    world.node().power_loss();
    std::vector<Acked> visible;
    for (const Acked& a : acked) {
      if (a.base >= 4 || acked.size() < 8) visible.push_back(a);
    }
    EXPECT_EQ(count_lost(world, segmented(3), visible), 0u) << "cut after step " << cut;
  }
}

}  // namespace
}  // namespace sluice::storage
