// A replica's log start and cleaning (issue 22, step 6): PartitionLog::restart_at (Kafka's truncateFullyAndStartAt,
// a follower whose leader no longer holds what it lacks) and the cleaner's keep_batch_ranges on a replicated log (the
// cleaned log stays gap-free, so its batches remain raft entries each starting where the previous ends).
#include <gtest/gtest.h>

#include "core/storage/cleaner.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

LogSettings replica_settings() {
  LogSettings settings = small_settings();
  settings.segment_bytes = 300;
  settings.high_watermark_follows_log_end = false;  // a replicated log: the raft commit index moves it
  return settings;
}

std::unique_ptr<PartitionLog> open_log(Env env, const LogSettings& settings) {
  auto log = PartitionLog::open(env, "p0", settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

TEST(ReplicaLogStart, RestartAtEmptiesTheLogAtTheOffsetDurablyAndKeepsTheEpochBeforeIt) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, replica_settings());
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(log->append_as_replica(leader_batch(2 * i, 2, i < 3 ? 1 : 2)).ok());
    log->set_high_watermark(4);
    ASSERT_TRUE(log->advance_log_start(2).ok());
    ASSERT_GT(log->segments().size(), 1u);
    ASSERT_TRUE(log->restart_at(40, 3).ok());
    EXPECT_EQ(log->log_start_offset(), 40);
    EXPECT_EQ(log->log_end_offset(), 40);
    EXPECT_EQ(log->high_watermark(), 40);
    EXPECT_EQ(log->durable_end_offset(), 40);
    EXPECT_EQ(log->segments().size(), 1u);
    EXPECT_EQ(log->latest_epoch(), 3) << "the empty log still answers its last epoch";
    EXPECT_EQ(log->leader_epochs(), (std::vector<EpochEntry>{{3, 40}}));
    Result<ReadResult> below = log->read(10, 1 << 20, 40);
    EXPECT_EQ(error_of(below.status()), ErrorCode::kOffsetOutOfRange);
    ASSERT_TRUE(log->close().ok());
    log = open_log(env, replica_settings());
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->log_start_offset(), 40) << "durable";
    EXPECT_EQ(log->log_end_offset(), 40);
    EXPECT_EQ(log->latest_epoch(), 3);
    ASSERT_TRUE(log->append_as_replica(leader_batch(40, 2, 4)).ok()) << "the leader's next batches follow";
    EXPECT_EQ(log->log_end_offset(), 42);
    EXPECT_EQ(log->epoch_at(40), 4);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaLogStart, CleaningAReplicatedLogKeepsEveryBatchRangeSoTheLogHasNoGap) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, replica_settings());
    ASSERT_NE(log, nullptr);
    const int64_t ts = to_unix_ms(env.clock.wall_now()) - 1000;
    // Key A rewritten in every batch: every batch but the last loses its record to the cleaner.
    for (int i = 0; i < 9; ++i) {
      Bytes batch = one_record(std::string(1, "AAB"[i % 3]), "v" + std::to_string(i), ts);
      set_base_offset(MutableByteView(batch.data(), batch.size()), i);
      set_partition_leader_epoch(MutableByteView(batch.data(), batch.size()), 1);
      ASSERT_TRUE(log->append_as_replica(batch).ok());
      if (i % 3 == 2) ASSERT_TRUE(log->roll().ok());
    }
    log->set_high_watermark(log->log_end_offset());
    int64_t checkpoint = 0;
    Result<CleanResult> cleaned = clean_once(*log, checkpoint, CleanerOptions{}, ts + 1000, /*force=*/true);
    ASSERT_TRUE(cleaned.ok()) << cleaned.status().to_string();
    ASSERT_TRUE(cleaned->cleaned);
    EXPECT_GT(cleaned->records_removed, 0);
    int64_t expected = 0;
    size_t empty = 0;
    for (const BatchHeader& h : headers_of(all_bytes(*log))) {
      EXPECT_EQ(h.base_offset, expected) << "no gap before the batch at " << h.base_offset;
      EXPECT_EQ(h.partition_leader_epoch, 1) << "the epoch (the raft term) is kept";
      if (h.record_count == 0) ++empty;
      expected = h.last_offset() + 1;
    }
    EXPECT_EQ(expected, 9);
    EXPECT_GT(empty, 0u) << "a batch whose records all went stays, empty";
    const std::vector<Seen> after = read_all(*log);
    EXPECT_EQ(latest_per_key(after).at("A"), "v7");
    EXPECT_EQ(latest_per_key(after).at("B"), "v8");
    ASSERT_TRUE(log->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
