// Retention (storage-semantics.md §5 R1-R10, R13, R14, R17, with Sluice's batch-granularity departure).
#include "core/storage/retention.h"

#include <gtest/gtest.h>

#include "core/storage/log_config.h"
#include "tests/core/storage/log_test_util.h"
#include "tests/probe_hits.h"

namespace sluice::storage {
namespace {

using namespace log_testing;
constexpr int64_t kHour = 3600 * 1000;

std::unique_ptr<PartitionLog> open_small_log(Env env, LogSettings settings = small_settings()) {
  auto log = PartitionLog::open(env, "p0", settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

int64_t now_ms(Env env) { return to_unix_ms(env.clock.wall_now()); }

// Three closed segments of 5 one-record batches each, timestamped `timestamp`, and an active one.
void fill_three_segments(PartitionLog& log, int64_t timestamp) {
  for (int segment = 0; segment < 3; ++segment) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(log.append(batch_of(1, timestamp)).ok());
    ASSERT_TRUE(log.roll().ok());
  }
}

RetentionLimits by_time(int64_t retention_ms) { return {retention_ms, std::nullopt}; }
RetentionLimits by_size(int64_t retention_bytes) { return {std::nullopt, retention_bytes}; }

RetentionResult enforce(PartitionLog& log, RetentionLimits limits, int64_t now) {
  Result<RetentionResult> result = enforce_retention(log, limits, now);
  EXPECT_TRUE(result.ok()) << result.status().to_string();
  return result.ok() ? *result : RetentionResult{};
}

TEST(Retention, ExpiredSegmentsGoAndOneEmptySegmentStaysAtTheLogEnd) {  // R1, R6
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    fill_three_segments(*log, now_ms(env) - 2 * kHour);
    const RetentionResult r = enforce(*log, by_time(kHour), now_ms(env));
    EXPECT_EQ(r.log_start_after, 15);
    EXPECT_EQ(r.evicted_by_time, 15);
    EXPECT_EQ(log->segments().size(), 1u);
    EXPECT_EQ(log->segments()[0].base_offset, 15);
    EXPECT_EQ(error_of(log->read(0, 1000, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
    auto next = log->append(batch_of(1, now_ms(env)));
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->base_offset, 15) << "offsets are never reused";
    EXPECT_FALSE(r.reason.empty());
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Retention, FreshDataStays) {  // R2, R7 (-1)
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    fill_three_segments(*log, now_ms(env) - 1000);
    EXPECT_EQ(enforce(*log, by_time(kHour), now_ms(env)).log_start_after, 0);
    EXPECT_EQ(enforce(*log, {}, now_ms(env) + 100 * kHour).log_start_after, 0) << "no limits: no deletion";
    EXPECT_EQ(log->segments().size(), 4u);
    ASSERT_TRUE(log->close().ok());
  }));
}

// Our departure from Kafka (R3, the seed 004 complaint): an expired batch beside a newer one in the same segment
// stops being readable; Kafka would keep the whole segment.
TEST(Retention, AnExpiredBatchGoesEvenBesideANewerOneInTheActiveSegment) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    const int64_t now = now_ms(env);
    ASSERT_TRUE(log->append(batch_of(3, now - 2 * kHour, "old")).ok());
    ASSERT_TRUE(log->append(batch_of(2, now - 1000, "new")).ok());
    ASSERT_EQ(log->segments().size(), 1u) << "both in the active segment";
    const RetentionResult r = enforce(*log, by_time(kHour), now);
    EXPECT_EQ(r.log_start_after, 3);
    EXPECT_EQ(error_of(log->read(2, 1000, INT64_MAX).status()), ErrorCode::kOffsetOutOfRange);
    auto live = log->read(3, 1000, INT64_MAX);
    ASSERT_TRUE(live.ok());
    ASSERT_EQ(headers_of(live->records).size(), 1u);
    EXPECT_EQ(headers_of(live->records)[0].base_offset, 3);
    ASSERT_TRUE(log->close().ok());
  }));
}

// A batch larger than the scan's chunk is judged by its header, read twice, not read whole: a 32 MiB batch at the
// log start cost 140 ms of the event loop at every check (bench/offload_bench.cc). The outcome is the same. A check
// whose first batch has not expired stops at that batch's header, before any scan.
TEST(Retention, ABatchLargerThanTheScanChunkIsJudgedByItsHeader) {
  OneNode world;
  const uint64_t judged_before = probe_hits("retention.big_batch_judged_by_header");
  const uint64_t stopped_before = probe_hits("retention.first_header_unexpired");
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = 16 << 20;
    auto log = open_small_log(env, settings);
    const int64_t now = now_ms(env);
    constexpr size_t kBig = 2 << 20;
    ASSERT_TRUE(log->append(batch_of(1, now - 2 * kHour, "old", kBig)).ok());
    ASSERT_TRUE(log->append(batch_of(2, now - 2 * kHour, "old")).ok());
    ASSERT_TRUE(log->append(batch_of(1, now - 1000, "new", kBig)).ok());
    ASSERT_TRUE(log->append(batch_of(1, now - 1000, "new")).ok());
    const RetentionResult r = enforce(*log, by_time(kHour), now);
    EXPECT_EQ(r.log_start_after, 3) << "the big expired batch and the small one after it";
    auto live = log->read(3, 1000, INT64_MAX);
    ASSERT_TRUE(live.ok()) << live.status().to_string();
    EXPECT_EQ(headers_of(live->records).at(0).base_offset, 3);
    EXPECT_GT(live->records.size(), kBig) << "the big unexpired batch is served whole";
    EXPECT_EQ(enforce(*log, by_time(kHour), now).log_start_after, 3) << "it stays";
    ASSERT_TRUE(log->close().ok());
  }));
  EXPECT_GE(probe_hits("retention.big_batch_judged_by_header"), judged_before + 2);
  EXPECT_GE(probe_hits("retention.first_header_unexpired"), stopped_before + 1) << "the second check";
}

TEST(Retention, AnExpiredActiveSegmentIsReplacedByAnEmptyOne) {  // R5
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(log->append(batch_of(1, now_ms(env) - 2 * kHour)).ok());
    const RetentionResult r = enforce(*log, by_time(kHour), now_ms(env));
    EXPECT_TRUE(r.rolled_expired_active_segment);
    EXPECT_EQ(log->log_start_offset(), 4);
    ASSERT_EQ(log->segments().size(), 1u);
    EXPECT_EQ(log->segments()[0].base_offset, 4);
    EXPECT_EQ(log->segments()[0].size_bytes, 0u);
    auto next = log->append(batch_of(1, now_ms(env)));
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->base_offset, 4);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Retention, RetentionMsZeroEvictsEverythingInThePast) {  // R6
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    fill_three_segments(*log, now_ms(env) - 1);
    EXPECT_EQ(enforce(*log, by_time(0), now_ms(env)).log_start_after, 15);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Retention, SizeLimitEvictsTheOldestUntilThePartitionFits) {  // R8, R9
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    fill_three_segments(*log, now_ms(env));
    const int64_t record = static_cast<int64_t>(batch_of(1, now_ms(env)).size());
    EXPECT_EQ(enforce(*log, by_size(15 * record), now_ms(env)).log_start_after, 0);  // R9
    const RetentionResult r = enforce(*log, by_size(10 * record), now_ms(env));      // R8
    EXPECT_EQ(r.log_start_after, 5);
    EXPECT_EQ(r.evicted_by_size, 5);
    EXPECT_EQ(r.segments_removed, 1u);
    EXPECT_EQ(log->segments().size(), 3u) << "two full segments and the active one";
    auto size = log->size_from(log->log_start_offset());
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(*size, static_cast<uint64_t>(10 * record));
    // Batch granularity: a limit that falls inside a segment moves the log start into it.
    EXPECT_EQ(enforce(*log, by_size(7 * record), now_ms(env)).log_start_after, 8);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Retention, TimeThenSizeInOnePass) {  // R10
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_small_log(env);
    const int64_t now = now_ms(env);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->append(batch_of(1, now - 2 * kHour)).ok());
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->append(batch_of(1, now)).ok());
    const int64_t record = static_cast<int64_t>(batch_of(1, now).size());
    const RetentionResult r = enforce(*log, {.retention_ms = kHour, .retention_bytes = 6 * record}, now);
    EXPECT_EQ(r.evicted_by_time, 5);
    EXPECT_EQ(r.evicted_by_size, 4);
    EXPECT_EQ(r.log_start_after, 9);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Retention, NothingAtOrAboveTheHighWatermarkIsEvicted) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.high_watermark_follows_log_end = false;
    auto log = open_small_log(env, settings);
    fill_three_segments(*log, now_ms(env) - 2 * kHour);
    log->set_high_watermark(7);
    EXPECT_EQ(enforce(*log, by_time(kHour), now_ms(env)).log_start_after, 7);
    EXPECT_EQ(enforce(*log, by_size(0), now_ms(env)).log_start_after, 7);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Retention, RemovedSegmentFilesLingerForTheDeleteDelay) {  // R17
  OneNode world;
  ASSERT_TRUE(world.run([&world](Env env) {
    LogSettings settings = small_settings();
    settings.file_delete_delay_ms = 5000;
    auto log = open_small_log(env, settings);
    fill_three_segments(*log, now_ms(env) - 2 * kHour);
    EXPECT_EQ(enforce(*log, by_time(kHour), now_ms(env)).segments_removed, 3u);
    EXPECT_GT(log->pending_deletions(), 0u);
    auto listing = env.fs.list("p0");
    ASSERT_TRUE(listing.ok());
    bool deleted_file = false;
    for (const DirEntry& e : *listing) deleted_file |= e.name.find(".deleted") != std::string::npos;
    EXPECT_TRUE(deleted_file);
    env.scheduler.sleep_for(std::chrono::seconds(6));
    ASSERT_TRUE(log->run_housekeeping(env.clock.now()).ok());
    EXPECT_EQ(log->pending_deletions(), 0u);
    ASSERT_TRUE(log->close().ok());
    (void)world;
  }));
}

TEST(Retention, CompactOnlyTopicsNeverDeleteByTimeOrSize) {  // R13, R14
  auto config = TopicConfig::from_overrides({{"cleanup.policy", "compact"}, {"retention.ms", "1"}}, TopicConfig());
  ASSERT_TRUE(config.ok());
  const RetentionLimits compact_only = retention_limits_for(*config);
  EXPECT_FALSE(compact_only.retention_ms.has_value());
  EXPECT_FALSE(compact_only.retention_bytes.has_value());
  auto both = TopicConfig::from_overrides({{"cleanup.policy", "compact,delete"}, {"retention.ms", "1"}},
                                          TopicConfig());
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(retention_limits_for(*both).retention_ms, 1);
  auto unset = TopicConfig::from_overrides({}, TopicConfig());
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(retention_limits_for(*unset).retention_ms, 604800000) << "unset means Kafka's 7 days";  // R7
}

}  // namespace
}  // namespace sluice::storage
