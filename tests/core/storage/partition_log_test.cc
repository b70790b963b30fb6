// PartitionLog: offsets, reads, rolls, timestamps, log start and deletion (storage-semantics.md §2, §5).
#include "core/storage/partition_log.h"

#include "core/storage/log_loader.h"

#include <gtest/gtest.h>

#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

std::unique_ptr<PartitionLog> open_log(Env env, const LogSettings& settings, const std::string& dir = "p0") {
  auto log = PartitionLog::open(env, dir, settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

// Appends batches of the given record counts; returns their base offsets.
std::vector<int64_t> append_counts(PartitionLog& log, const std::vector<int>& counts, int64_t timestamp = 1000) {
  std::vector<int64_t> bases;
  for (int n : counts) {
    auto r = log.append(batch_of(n, timestamp));
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (r.ok()) bases.push_back(r->base_offset);
  }
  return bases;
}

TEST(PartitionLog, AssignsOffsetsAndReadsTheBatchHoldingEveryOffset) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = 250;  // a few batches per segment, so reads cross segments
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    const std::vector<int> counts = {1, 3, 2, 1, 4, 1, 2, 3};
    std::vector<int64_t> bases = append_counts(*log, counts);
    int64_t expected = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      EXPECT_EQ(bases[i], expected);
      expected += counts[i];
    }
    EXPECT_EQ(log->log_end_offset(), expected);
    EXPECT_GT(log->segments().size(), 2u);
    for (int64_t offset = 0; offset < expected; ++offset) {
      auto read = log->read(offset, 1, INT64_MAX);
      ASSERT_TRUE(read.ok()) << offset;
      auto headers = headers_of(read->records);
      ASSERT_EQ(headers.size(), 1u) << offset;  // max_bytes 1: exactly one whole batch
      EXPECT_LE(headers[0].base_offset, offset);
      EXPECT_GE(headers[0].last_offset(), offset);
      EXPECT_TRUE(batch_crc_ok(read->records));
    }
    auto at_end = log->read(expected, 1000, INT64_MAX);
    ASSERT_TRUE(at_end.ok());
    EXPECT_TRUE(at_end->records.empty());
    EXPECT_EQ(error_of(log->read(expected + 1, 1000, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
    EXPECT_EQ(error_of(log->read(-1, 1000, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, ReadsWholeBatchesUpToMaxBytesAndNeverPastTheUpperBound) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.high_watermark_follows_log_end = false;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->append(batch_of(2, 1, "big", 5000)).ok());  // 0-1, > 5000 bytes
    append_counts(*log, {1, 1, 1});                              // 2, 3, 4
    auto big = log->read(0, 100, INT64_MAX);
    ASSERT_TRUE(big.ok());
    EXPECT_EQ(headers_of(big->records).size(), 1u);  // one batch although it exceeds max_bytes
    auto all = log->read(2, 1 << 20, INT64_MAX);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(headers_of(all->records).size(), 3u);
    const size_t one = headers_of(all->records)[0].size_bytes();
    auto two = log->read(2, 2 * one, INT64_MAX);
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(headers_of(two->records).size(), 2u);
    // The high watermark bounds what consumers see.
    EXPECT_EQ(log->high_watermark(), 0);
    auto hidden = log->read_committed(0, 1 << 20);
    ASSERT_TRUE(hidden.ok());
    EXPECT_TRUE(hidden->records.empty());
    log->set_high_watermark(4);
    auto committed = log->read_committed(0, 1 << 20);
    ASSERT_TRUE(committed.ok());
    auto headers = headers_of(committed->records);
    ASSERT_EQ(headers.size(), 3u);
    EXPECT_EQ(headers.back().last_offset(), 3);
    EXPECT_EQ(committed->high_watermark, 4);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, RollsBySizeAndRejectsABatchSetLargerThanASegment) {  // L1
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    const size_t batch_bytes = batch_of(1, 1).size();
    LogSettings settings = small_settings();
    settings.segment_bytes = static_cast<int64_t>(3 * batch_bytes);
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    auto segments = log->segments();
    ASSERT_EQ(segments.size(), 3u);
    EXPECT_EQ(segments[0].base_offset, 0);
    EXPECT_EQ(segments[1].base_offset, 3);
    EXPECT_EQ(segments[2].base_offset, 6);
    EXPECT_EQ(segments[0].size_bytes, 3 * batch_bytes);
    EXPECT_EQ(segments[0].next_offset, 3);
    auto too_big = log->append(batch_of(4, 1, "x", 3 * batch_bytes));
    EXPECT_EQ(error_of(too_big.status()), ErrorCode::kRecordListTooLarge);
    EXPECT_EQ(log->log_end_offset(), 7);
    ASSERT_TRUE(log->close().ok());
  }));
}

// A roll whose seal (the time index's last entry) the full disk refuses wrote nothing: the append that wanted the
// roll is refused with kNoSpace and the log stays online as it was (a cluster follower's raft group starts again on
// it); once space returns the roll and the append go through.
TEST(PartitionLog, ARollRefusedForSpaceRefusesTheAppendAndKeepsTheLogOnline) {
  OneNode world;
  ASSERT_TRUE(world.run([&world](Env env) {
    const size_t batch_bytes = batch_of(1, 1).size();
    LogSettings settings = small_settings();
    settings.segment_bytes = static_cast<int64_t>(3 * batch_bytes);
    settings.index_interval_bytes = 1 << 20;  // no time index entry before the seal's
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    world.disk().set_capacity_bytes(world.disk().used_bytes());
    auto refused = log->append(batch_of(1, 1));
    EXPECT_EQ(refused.status().code(), Code::kNoSpace);
    EXPECT_FALSE(log->offline()) << log->offline_reason().to_string();
    EXPECT_EQ(log->log_end_offset(), 3);
    EXPECT_EQ(log->segments().size(), 1u);
    world.disk().set_capacity_bytes(uint64_t{1} << 30);
    ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    EXPECT_EQ(log->segments().size(), 2u);
    EXPECT_EQ(log->log_end_offset(), 4);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, RollsByTimeMeasuredFromTheFirstBatchNeverWhenEmpty) {  // L2
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_ms = 3600000;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    const int64_t t0 = 1700000000000;
    ASSERT_TRUE(log->append(batch_of(1, t0 + 10 * 3600000)).ok());  // empty segment: no roll however old
    EXPECT_EQ(log->segments().size(), 1u);
    ASSERT_TRUE(log->append(batch_of(1, t0 + 10 * 3600000 + 3600000)).ok());  // exactly segment.ms: no roll
    EXPECT_EQ(log->segments().size(), 1u);
    ASSERT_TRUE(log->append(batch_of(1, t0 + 10 * 3600000 + 3600001)).ok());  // past it: roll
    ASSERT_EQ(log->segments().size(), 2u);
    EXPECT_EQ(log->segments()[1].base_offset, 2);
    EXPECT_EQ(log->segments()[1].first_batch_max_timestamp, t0 + 10 * 3600000 + 3600001);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, RollsByWallClockWhenBatchesCarryNoTimestamp) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_ms = 1000;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->append(batch_of(1, -1)).ok());
    ASSERT_TRUE(log->append(batch_of(1, -1)).ok());
    EXPECT_EQ(log->segments().size(), 1u);
    env.scheduler.sleep_for(1500ms);
    ASSERT_TRUE(log->append(batch_of(1, -1)).ok());
    EXPECT_EQ(log->segments().size(), 2u);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, TimeRollJitterShortensTheIntervalSometimes) {
  auto rolls = [](int64_t jitter_ms, uint64_t seed) {
    OneNode world(seed);
    size_t segments = 0;
    EXPECT_TRUE(world.run([&](Env env) {
      LogSettings settings = small_settings();
      settings.segment_ms = 1000;
      settings.segment_jitter_ms = jitter_ms;
      auto log = open_log(env, settings);
      ASSERT_NE(log, nullptr);
      ASSERT_TRUE(log->append(batch_of(1, 5000)).ok());
      ASSERT_TRUE(log->append(batch_of(1, 5900)).ok());  // 900 ms later: rolls only if jitter > 100
      segments = log->segments().size();
      ASSERT_TRUE(log->close().ok());
    }));
    return segments > 1;
  };
  int with_jitter = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    EXPECT_FALSE(rolls(0, seed));
    with_jitter += rolls(1000, seed) ? 1 : 0;
  }
  EXPECT_GT(with_jitter, 0);
  EXPECT_LT(with_jitter, 10);  // jitter is uniform in [0, 1000): about 9 in 10 roll
}

TEST(PartitionLog, RollsWhenAnIndexIsFull) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_index_bytes = 24;  // 3 offset entries, 2 time entries
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(log->append(batch_of(1, 100 + i)).ok());
    auto segments = log->segments();
    EXPECT_GT(segments.size(), 2u);
    for (size_t i = 1; i < segments.size(); ++i) EXPECT_EQ(segments[i].base_offset, segments[i - 1].next_offset);
    for (int64_t offset = 0; offset < 12; ++offset) {
      auto read = log->read(offset, 1, INT64_MAX);
      ASSERT_TRUE(read.ok());
      EXPECT_EQ(headers_of(read->records).at(0).base_offset, offset);
    }
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, FindsOffsetsByTimestamp) {  // R18
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.high_watermark_follows_log_end = false;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    for (int64_t ts : {10, 20, 30}) ASSERT_TRUE(log->append(batch_of(1, ts)).ok());
    log->set_high_watermark(3);
    auto at = [&](int64_t ts) {
      auto r = log->offset_for_timestamp(ts);
      EXPECT_TRUE(r.ok());
      return r.ok() ? *r : std::nullopt;
    };
    EXPECT_EQ(at(15), (OffsetAndTimestamp{1, 20}));
    EXPECT_EQ(at(10), (OffsetAndTimestamp{0, 10}));
    EXPECT_EQ(at(0), (OffsetAndTimestamp{0, 10}));
    EXPECT_EQ(at(31), std::nullopt);
    EXPECT_EQ(log->log_start_offset(), 0);  // EARLIEST
    EXPECT_EQ(log->high_watermark(), 3);    // LATEST
    auto max = log->max_timestamp();
    ASSERT_TRUE(max.ok());
    EXPECT_EQ(*max, (OffsetAndTimestamp{2, 30}));
    // Inside a batch: the first record at or past the timestamp, not the batch's base.
    ASSERT_TRUE(log->append(batch_with({40, 55, 50, 60})).ok());  // offsets 3..6
    log->set_high_watermark(7);
    EXPECT_EQ(at(51), (OffsetAndTimestamp{4, 55}));
    EXPECT_EQ(at(60), (OffsetAndTimestamp{6, 60}));
    // A match at or above the high watermark is not visible.
    log->set_high_watermark(5);
    EXPECT_EQ(at(60), std::nullopt);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, LogAppendTimeStampsBatches) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, small_settings());
    ASSERT_NE(log, nullptr);
    auto r = log->append(batch_of(2, 5), AppendOptions{true});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->log_append_time_ms, to_unix_ms(env.clock.wall_now()));
    auto read = log->read(0, 1000, INT64_MAX);
    ASSERT_TRUE(read.ok());
    auto h = headers_of(read->records).at(0);
    EXPECT_TRUE(h.log_append_time());
    EXPECT_EQ(h.max_timestamp, r->log_append_time_ms);
    EXPECT_TRUE(batch_crc_ok(read->records));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, DeleteRecordsMovesTheLogStartAndDropsWholeSegments) {  // R15
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = static_cast<int64_t>(5 * batch_of(1, 1).size());
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 15; ++i) ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    ASSERT_EQ(log->segments().size(), 3u);
    EXPECT_EQ(log->high_watermark(), 15);
    EXPECT_EQ(error_of(log->delete_records(16).status()), ErrorCode::kOffsetOutOfRange);
    auto start = log->delete_records(6);
    ASSERT_TRUE(start.ok());
    EXPECT_EQ(*start, 6);
    EXPECT_EQ(log->log_start_offset(), 6);
    EXPECT_EQ(error_of(log->read(5, 1000, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
    EXPECT_TRUE(log->read(6, 1000, INT64_MAX).ok());
    auto removed = log->remove_segments_below_log_start();
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 1u);
    EXPECT_EQ(log->segments().size(), 2u);
    EXPECT_EQ(log->segments()[0].base_offset, 5);
    auto all = log->delete_records(-1);  // -1 = the high watermark
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(*all, 15);
    ASSERT_TRUE(log->remove_segments_below_log_start().ok());
    EXPECT_EQ(log->segments().size(), 1u);  // the active segment stays
    auto next = log->append(batch_of(1, 1));
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->base_offset, 15);  // offsets are never renumbered
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, DeletedSegmentsKeepTheirFilesUntilTheDelayPasses) {  // R17
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = static_cast<int64_t>(2 * batch_of(1, 1).size());
    settings.file_delete_delay_ms = 1000;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    ASSERT_TRUE(log->delete_records(4).ok());
    const std::string log_file = log->segment_files()[0].log_file;
    auto removed = log->remove_segments_below_log_start();
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 2u);
    EXPECT_EQ(log->segments()[0].base_offset, 4);  // out of the map at once
    EXPECT_FALSE(*env.fs.exists(log_file));
    EXPECT_TRUE(*env.fs.exists(log_file + ".deleted"));
    env.scheduler.sleep_for(500ms);
    EXPECT_TRUE(*env.fs.exists(log_file + ".deleted"));
    EXPECT_EQ(log->pending_deletions(), 2u);
    env.scheduler.sleep_for(600ms);  // the housekeeping fiber unlinks them
    EXPECT_FALSE(*env.fs.exists(log_file + ".deleted"));
    EXPECT_EQ(log->pending_deletions(), 0u);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(PartitionLog, FlushMsSyncsInTheBackgroundAndSettingsApplyAtRuntime) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    env.scheduler.sleep_for(2s);
    EXPECT_EQ(log->recovery_point(), 0);  // flush.ms unset: nothing syncs
    settings.flush_ms = 100;
    log->update_settings(settings);
    env.scheduler.sleep_for(300ms);
    EXPECT_EQ(log->recovery_point(), 1);
    settings.flush_messages = 2;
    settings.flush_ms = INT64_MAX;
    log->update_settings(settings);
    ASSERT_TRUE(log->append(batch_of(1, 1)).ok());
    EXPECT_EQ(log->recovery_point(), 1);
    ASSERT_TRUE(log->append(batch_of(1, 1)).ok());  // two unflushed: synced before returning
    EXPECT_EQ(log->recovery_point(), 3);
    ASSERT_TRUE(log->close().ok());
  }));
}

// What partition.state says (-1, with a test failure, when it cannot be read).
int64_t recorded_recovery_point(Env env, const std::string& dir) {
  auto state = read_partition_state(env.fs, dir);
  EXPECT_TRUE(state.ok() && state->has_value());
  return state.ok() && state->has_value() ? (*state)->recovery_point : -1;
}

// A replicated roll does not wait for the rolled segment's sync (a GiB of page cache took 0.7 s here, and every
// append waited behind it); the background fiber syncs it and records the new recovery point. A persisted roll
// syncs at once: at most one round of its appends is unsynced.
TEST(PartitionLog, AReplicatedRollLeavesTheRolledSegmentsSyncToTheBackground) {
  for (const bool persisted : {false, true}) {
    SCOPED_TRACE(persisted);
    OneNode world;
    ASSERT_TRUE(world.run([persisted](Env env) {
      LogSettings settings = small_settings();
      settings.segment_bytes = static_cast<int64_t>(3 * batch_of(1, 1).size());
      settings.persisted = persisted;
      auto log = open_log(env, settings);
      ASSERT_NE(log, nullptr);
      append_counts(*log, {1, 1, 1});
      const uint64_t rounds_before = log->stats().sync_rounds;
      append_counts(*log, {1});  // rolls
      ASSERT_EQ(log->segments().size(), 2u);
      if (persisted) {
        EXPECT_EQ(log->recovery_point(), 4);
        EXPECT_GE(recorded_recovery_point(env, "p0"), 3);
        ASSERT_TRUE(log->close().ok());
        return;
      }
      append_counts(*log, {1});
      EXPECT_EQ(log->recovery_point(), 0);
      EXPECT_EQ(log->stats().sync_rounds, rounds_before);
      EXPECT_EQ(recorded_recovery_point(env, "p0"), 0);

      env.scheduler.sleep_for(10ms);
      EXPECT_EQ(log->recovery_point(), 3);  // the rolled segment only: the active one's appends are not due
      EXPECT_EQ(log->stats().sync_rounds, rounds_before + 1);
      EXPECT_EQ(recorded_recovery_point(env, "p0"), log->recovery_point());
      ASSERT_TRUE(log->close().ok());
    }));
  }
}

// A failed background sync takes the log offline once; housekeeping does not retry it (nor spin on it).
TEST(PartitionLog, AFailedBackgroundRollSyncTakesTheLogOffline) {
  OneNode world;
  world.disk().fail_next(DiskOp::kSync, 1, "p0/00000000000000000000.log");
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = static_cast<int64_t>(3 * batch_of(1, 1).size());
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    append_counts(*log, {1, 1, 1, 1});  // rolls
    env.scheduler.sleep_for(1s);
    EXPECT_EQ(log->recovery_point(), 0);
    auto refused = log->append(batch_of(1, 1));
    EXPECT_EQ(error_of(refused.status()), ErrorCode::kKafkaStorageError);
    EXPECT_EQ(log->stats().sync_rounds, 0u);
  }));
}

TEST(PartitionLog, ClosedLogRefusesAppends) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, small_settings());
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->close().ok());
    EXPECT_EQ(log->append(batch_of(1, 1)).status().code(), Code::kClosed);
  }));
}

}  // namespace
}  // namespace sluice::storage
