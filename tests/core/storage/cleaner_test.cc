// The log cleaner (storage-semantics.md §3, §5 C1, C2, C4, C8, C11, C12; DESIGN.md §3).
#include "core/storage/cleaner.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/storage/key_offset_map.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

constexpr const char* kSeedKeys = "ABACBADCBAED";

int64_t now_ms(Env env) { return to_unix_ms(env.clock.wall_now()); }

std::unique_ptr<PartitionLog> open_log(Env env) {
  auto log = PartitionLog::open(env, "p0", small_settings());
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

// Appends the seed's twelve records (value "<key><offset>"), rolling before each offset in `roll_before`.
void append_seed(PartitionLog& log, int64_t timestamp, const std::set<int64_t>& roll_before) {
  for (int64_t i = 0; i < 12; ++i) {
    if (roll_before.contains(i)) {
      ASSERT_TRUE(log.roll().ok());
    }
    const std::string key(1, kSeedKeys[i]);
    ASSERT_TRUE(log.append(one_record(key, key + std::to_string(i), timestamp)).ok());
  }
  if (roll_before.contains(12)) {
    ASSERT_TRUE(log.roll().ok());
  }
}

CleanResult clean(PartitionLog& log, int64_t& checkpoint, int64_t now, bool force, CleanerOptions options = {}) {
  Result<CleanResult> result = clean_once(log, checkpoint, options, now, force);
  EXPECT_TRUE(result.ok()) << result.status().to_string();
  return result.ok() ? *result : CleanResult{};
}

TEST(Cleaner, SeedExampleFullPassKeepsTheLatestValuePerKey) {  // C1
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    append_seed(*log, now_ms(env) - 1000, {4, 8, 12});
    const auto before = latest_per_key(read_all(*log));
    int64_t checkpoint = 0;
    const CleanResult r = clean(*log, checkpoint, now_ms(env), true);
    EXPECT_TRUE(r.cleaned);
    EXPECT_EQ(checkpoint, 12);
    const std::vector<Seen> after = read_all(*log);
    EXPECT_EQ(offsets(after), (std::vector<int64_t>{7, 8, 9, 10, 11}));
    EXPECT_EQ(latest_per_key(after), before);
    EXPECT_EQ(*after[2].value, "A9");
    EXPECT_EQ(log->log_end_offset(), 12);
    auto next = log->append(one_record("A", "A12", now_ms(env)));
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->base_offset, 12);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, SeedExampleWithTheActiveSegmentAtNine) {  // C1
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    append_seed(*log, now_ms(env) - 1000, {5, 9});
    int64_t checkpoint = 0;
    EXPECT_TRUE(clean(*log, checkpoint, now_ms(env), true).cleaned);
    EXPECT_EQ(checkpoint, 9);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{5, 6, 7, 8, 9, 10, 11}));
    ASSERT_TRUE(log->close().ok());
  }));
  // The cleaned log survives a reopen.
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{5, 6, 7, 8, 9, 10, 11}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, AReadAtARemovedOffsetReturnsTheNextSurvivor) {  // C2
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    append_seed(*log, now_ms(env) - 1000, {4, 8, 12});
    int64_t checkpoint = 0;
    clean(*log, checkpoint, now_ms(env), true);
    for (int64_t offset : {0, 3, 4, 6}) {
      auto read = log->read(offset, 1, INT64_MAX);
      ASSERT_TRUE(read.ok());
      ASSERT_FALSE(read->records.empty());
      EXPECT_EQ(headers_of(read->records).front().base_offset, 7) << "read at " << offset;
    }
    EXPECT_EQ(log->log_start_offset(), 0) << "compaction does not move the log start";
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, DuplicatesOnlyInTheActiveSegmentAreNotCleaned) {  // C4
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(log->append(one_record("A", "v", now_ms(env) - 1000)).ok());
    int64_t checkpoint = 0;
    EXPECT_FALSE(clean(*log, checkpoint, now_ms(env), true).cleaned);
    EXPECT_EQ(checkpoint, 0);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{0, 1, 2}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, ATombstoneGetsAHorizonAndGoesAfterIt) {  // C8
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    const int64_t t = now_ms(env);
    ASSERT_TRUE(log->append(one_record("k", "v", t - 1000)).ok());
    ASSERT_TRUE(log->append(one_record("k", std::nullopt, t - 1000)).ok());
    ASSERT_TRUE(log->roll().ok());
    CleanerOptions options;
    options.delete_retention_ms = 1000;
    int64_t checkpoint = 0;
    clean(*log, checkpoint, t, true, options);
    std::vector<Seen> seen = read_all(*log);
    ASSERT_EQ(offsets(seen), (std::vector<int64_t>{1}));
    EXPECT_FALSE(seen[0].value.has_value());
    auto read = log->read(0, 1 << 20, INT64_MAX);
    ASSERT_TRUE(read.ok());
    const BatchHeader header = headers_of(read->records).front();
    EXPECT_TRUE(header.has_delete_horizon());
    EXPECT_EQ(header.base_timestamp, t + 1000);
    // A pass before the horizon keeps it; one at it removes it.
    ASSERT_TRUE(log->append(one_record("x", "1", t)).ok());
    ASSERT_TRUE(log->roll().ok());
    clean(*log, checkpoint, t + 500, true, options);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{1, 2}));
    ASSERT_TRUE(log->append(one_record("y", "1", t)).ok());
    ASSERT_TRUE(log->roll().ok());
    clean(*log, checkpoint, t + 1000, true, options);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{2, 3}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, UniqueKeysKeepEverything) {  // C11
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    for (int i = 0; i < 8; ++i) {
      if (i == 4) {
        ASSERT_TRUE(log->roll().ok());
      }
      ASSERT_TRUE(log->append(one_record("k" + std::to_string(i), "v", now_ms(env) - 1000)).ok());
    }
    ASSERT_TRUE(log->roll().ok());
    const auto size_before = log->size_from(0);
    int64_t checkpoint = 0;
    const CleanResult r = clean(*log, checkpoint, now_ms(env), true);
    EXPECT_TRUE(r.cleaned);
    EXPECT_EQ(r.records_removed, 0);
    EXPECT_EQ(r.segments_replaced, 2u) << "the two small segments fit segment.bytes: grouped into one";
    EXPECT_EQ(log->segments().size(), 2u) << "the grouped segment and the active one";
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(*log->size_from(0), *size_before);
    ASSERT_TRUE(log->close().ok());
  }));
}

// Kafka's groupSegmentsBySize: a group stops before segment.bytes would be exceeded.
TEST(Cleaner, SegmentGroupsStayWithinSegmentBytes) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    const uint64_t one = one_record("k0", std::string(100, 'v'), 0).size();
    LogSettings settings = log->settings();
    settings.segment_bytes = static_cast<int64_t>(2 * one);  // two one-record segments per group at most
    log->update_settings(settings);
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(log->append(one_record("k" + std::to_string(i), std::string(100, 'v'), now_ms(env))).ok());
      ASSERT_TRUE(log->roll().ok());
    }
    int64_t checkpoint = 0;
    const CleanResult r = clean(*log, checkpoint, now_ms(env), true);
    EXPECT_EQ(r.segments_replaced, 4u) << "[0,1] and [2,3] merged; 4 alone is left as it is";
    std::vector<int64_t> bases;
    for (const SegmentInfo& s : log->segments()) bases.push_back(s.base_offset);
    EXPECT_EQ(bases, (std::vector<int64_t>{0, 2, 4, 5}));
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, UnkeyedRecordsAreDropped) {  // C12
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    const int64_t t = now_ms(env) - 1000;
    ASSERT_TRUE(log->append(one_record(std::nullopt, "a", t)).ok());
    ASSERT_TRUE(log->append(one_record("k", "b", t)).ok());
    ASSERT_TRUE(log->append(one_record(std::nullopt, "c", t)).ok());
    ASSERT_TRUE(log->roll().ok());
    int64_t checkpoint = 0;
    EXPECT_EQ(clean(*log, checkpoint, now_ms(env), true).records_removed, 2);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{1}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, TheDirtyRatioMustBeStrictlyGreater) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    const int64_t t = now_ms(env) - 1000;
    ASSERT_TRUE(log->append(one_record("A", "1", t)).ok());
    ASSERT_TRUE(log->append(one_record("B", "1", t)).ok());
    ASSERT_TRUE(log->roll().ok());
    int64_t checkpoint = 0;
    EXPECT_TRUE(clean(*log, checkpoint, now_ms(env), true).cleaned);
    EXPECT_EQ(checkpoint, 2);
    ASSERT_TRUE(log->append(one_record("A", "2", t)).ok());
    ASSERT_TRUE(log->append(one_record("B", "2", t)).ok());
    ASSERT_TRUE(log->roll().ok());
    CleanerOptions options;
    options.min_cleanable_dirty_ratio = 0.5;
    CleanResult r = clean(*log, checkpoint, now_ms(env), false, options);
    EXPECT_DOUBLE_EQ(r.dirty_ratio, 0.5);
    EXPECT_FALSE(r.cleaned);
    EXPECT_EQ(offsets(read_all(*log)).size(), 4u);
    options.min_cleanable_dirty_ratio = 0.49;
    r = clean(*log, checkpoint, now_ms(env), false, options);
    EXPECT_TRUE(r.cleaned);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{2, 3}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, CompactionLagsGateThePass) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    append_seed(*log, now_ms(env) - 1000, {4, 8, 12});
    CleanerOptions options;
    options.min_compaction_lag_ms = 2000;  // every segment is too young
    int64_t checkpoint = 0;
    CleanResult r = clean(*log, checkpoint, now_ms(env), true, options);
    EXPECT_FALSE(r.cleaned);
    EXPECT_EQ(r.first_uncleanable, 0);
    EXPECT_EQ(offsets(read_all(*log)).size(), 12u);
    options.min_compaction_lag_ms = 0;
    options.min_cleanable_dirty_ratio = 1.0;  // no ratio passes: only max.compaction.lag.ms can
    EXPECT_FALSE(clean(*log, checkpoint, now_ms(env), false, options).cleaned);
    options.max_compaction_lag_ms = 500;
    EXPECT_TRUE(clean(*log, checkpoint, now_ms(env), false, options).cleaned);
    EXPECT_EQ(offsets(read_all(*log)), (std::vector<int64_t>{7, 8, 9, 10, 11}));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(Cleaner, AFullMapEndsThePassEarly) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    append_seed(*log, now_ms(env) - 1000, {4, 8, 12});
    CleanerOptions options;
    options.map_memory_bytes = 3 * KeyOffsetMap::kSlotBytes;  // one slot stays empty: capacity 2
    options.load_factor = 1.0;
    int64_t checkpoint = 0;
    const CleanResult r = clean(*log, checkpoint, now_ms(env), true, options);
    EXPECT_TRUE(r.map_full);
    EXPECT_EQ(checkpoint, 3) << "A B A mapped, C did not fit";
    const std::vector<int64_t> survivors = offsets(read_all(*log));
    EXPECT_EQ(survivors, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    ASSERT_TRUE(log->close().ok());
  }));
}

// The pass is cut at a sweep of virtual times (disk I/O takes virtual time), then the power goes.
TEST(Cleaner, APowerLossMidPassLeavesTheOldOrTheCleanedLog) {
  int old_logs = 0;
  int cleaned_logs = 0;
  int interrupted = 0;
  for (int step = 0; step < 24; ++step) {
    OneNode world(static_cast<uint64_t>(step) + 7);
    std::map<std::string, std::optional<std::string>> expected;
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = open_log(env);
      append_seed(*log, now_ms(env) - 1000, {4, 8, 12});
      expected = latest_per_key(read_all(*log));
      ASSERT_TRUE(log->close().ok());
    }));
    const bool finished = world.run(
        [](Env env) {
          auto log = open_log(env);
          int64_t checkpoint = 0;
          clean(*log, checkpoint, now_ms(env), true);
          ASSERT_TRUE(log->close().ok());
        },
        std::chrono::microseconds(250 * step));
    if (!finished) ++interrupted;
    if (world.node().up()) world.node().power_loss();
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      const std::vector<Seen> seen = read_all(*log);
      const std::vector<int64_t> got = offsets(seen);
      const bool old = got.size() == 12;
      ++(old ? old_logs : cleaned_logs);
      EXPECT_TRUE(old || got == (std::vector<int64_t>{7, 8, 9, 10, 11})) << "step " << step;
      EXPECT_TRUE(!finished || !old) << "step " << step;
      EXPECT_EQ(latest_per_key(seen), expected) << "step " << step;
      EXPECT_EQ(log->log_end_offset(), 12);
      ASSERT_TRUE(log->close().ok());
    }));
  }
  EXPECT_GT(old_logs, 0);
  EXPECT_GT(cleaned_logs, 0);
  EXPECT_GT(interrupted, 0);
}

}  // namespace
}  // namespace sluice::storage
