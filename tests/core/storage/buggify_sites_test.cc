// BUGGIFY's storage sites (core/env/buggify.h): each fires when BUGGIFY is on and never when it is off, and what it
// does is legal: every record stays readable in order, a cut-short cleaner pass leaves a later pass to finish.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/env/buggify.h"
#include "core/storage/cleaner.h"
#include "tests/core/storage/log_test_util.h"
#include "tests/probe_hits.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

// Every site on, each firing at its own chance (or always, for sites that use the run's).
void all_sites_on(Env env) { env.buggify.enable(1, Random(17), /*site_share=*/1.0, /*fire_chance=*/1.0); }

constexpr int kAppends = 400;

struct RollRun {
  size_t segments = 0;
  std::vector<int64_t> offsets;
};

RollRun append_many(bool buggify) {
  OneNode world;
  RollRun out;
  EXPECT_TRUE(world.run([&](Env env) {
    if (buggify) all_sites_on(env);
    auto log = PartitionLog::open(env, "p0", small_settings());
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < kAppends; ++i) {
      ASSERT_TRUE((*log)->append(one_record("k", "v" + std::to_string(i), 1000)).ok());
    }
    out.segments = (*log)->segments().size();
    out.offsets = offsets(read_all(**log));
  }));
  return out;
}

std::vector<int64_t> zero_to(int n) {
  std::vector<int64_t> all;
  for (int i = 0; i < n; ++i) all.push_back(i);
  return all;
}

TEST(BuggifyStorage, EarlyRollsGiveManySegmentsAndEveryRecordInOrder) {
  const uint64_t before = probe_hits("buggify.log.early-roll");
  const RollRun on = append_many(true);
  EXPECT_GT(on.segments, 2u);  // 400 appends far below segment.bytes: only BUGGIFY rolled
  EXPECT_EQ(on.segments, 1 + (probe_hits("buggify.log.early-roll") - before));
  EXPECT_EQ(on.offsets, zero_to(kAppends));
}

TEST(BuggifyStorage, OffNoEarlyRoll) {
  const uint64_t before = probe_hits("buggify.log.early-roll");
  const RollRun off = append_many(false);
  EXPECT_EQ(off.segments, 1u);
  EXPECT_EQ(off.offsets, zero_to(kAppends));
  EXPECT_EQ(probe_hits("buggify.log.early-roll"), before);
}

struct CleanRun {
  int passes = 0;
  bool first_cut_short = false;
  std::map<std::string, std::optional<std::string>> latest_before;
  std::map<std::string, std::optional<std::string>> latest_after;
  size_t records_after = 0;
};

// 50 keys written 8 times over, in closed segments; passes until the checkpoint reaches the active segment.
CleanRun clean_all(bool buggify) {
  OneNode world;
  CleanRun out;
  EXPECT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, "p0", small_settings());
    ASSERT_TRUE(log.ok());
    const int64_t ts = to_unix_ms(env.clock.wall_now()) - 1000;
    for (int round = 0; round < 8; ++round) {
      for (int k = 0; k < 50; ++k) {
        ASSERT_TRUE((*log)->append(one_record("k" + std::to_string(k), "v" + std::to_string(round), ts)).ok());
      }
      ASSERT_TRUE((*log)->roll().ok());
    }
    out.latest_before = latest_per_key(read_all(**log));
    if (buggify) all_sites_on(env);  // after the appends: only the cleaner's site matters here
    int64_t checkpoint = 0;
    const int64_t end = (*log)->segments().back().base_offset;
    while (checkpoint < end && out.passes < 1000) {
      Result<CleanResult> r = clean_once(**log, checkpoint, CleanerOptions{}, to_unix_ms(env.clock.wall_now()), true);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      if (out.passes == 0) out.first_cut_short = r->cleaned_end < r->first_uncleanable;
      ++out.passes;
    }
    const std::vector<Seen> after = read_all(**log);
    out.latest_after = latest_per_key(after);
    out.records_after = after.size();
  }));
  return out;
}

TEST(BuggifyStorage, ACleanerPassCutShortLeavesALaterPassToFinish) {
  const uint64_t before = probe_hits("buggify.cleaner.pass-cut-short");
  const CleanRun on = clean_all(true);
  EXPECT_GT(probe_hits("buggify.cleaner.pass-cut-short"), before);
  EXPECT_TRUE(on.first_cut_short);
  EXPECT_GT(on.passes, 1);
  EXPECT_EQ(on.latest_after, on.latest_before);  // compaction's contract: the latest value of every key stays
  EXPECT_EQ(on.records_after, 50u);               // and, once every pass is done, nothing else
}

TEST(BuggifyStorage, OffOneCleanerPassCleansTheWholeSection) {
  const uint64_t before = probe_hits("buggify.cleaner.pass-cut-short");
  const CleanRun off = clean_all(false);
  EXPECT_EQ(off.passes, 1);
  EXPECT_FALSE(off.first_cut_short);
  EXPECT_EQ(off.latest_after, off.latest_before);
  EXPECT_EQ(off.records_after, 50u);
  EXPECT_EQ(probe_hits("buggify.cleaner.pass-cut-short"), before);
}

// A persisted append returns after its sync round: with the late-sync site firing, the round starts later.
Duration persisted_append_time(bool buggify) {
  OneNode world;
  Duration took{0};
  EXPECT_TRUE(world.run([&](Env env) {
    if (buggify) all_sites_on(env);
    LogSettings settings = small_settings();
    settings.persisted = true;
    auto log = PartitionLog::open(env, "p0", settings);
    ASSERT_TRUE(log.ok());
    const Instant start = env.clock.now();
    for (int i = 0; i < 20; ++i) ASSERT_TRUE((*log)->append(one_record("k", "v", 1000)).ok());
    took = env.clock.now() - start;
    EXPECT_EQ((*log)->durable_end_offset(), 20);
  }));
  return took;
}

TEST(BuggifyStorage, ALateSyncRoundStillMakesEveryAppendDurable) {
  const uint64_t before = probe_hits("buggify.log.late-sync");
  const Duration on = persisted_append_time(true);
  EXPECT_GE(probe_hits("buggify.log.late-sync"), before + 20);
  EXPECT_GE(on, std::chrono::milliseconds(20));  // at least 1 ms late each
  const uint64_t after_on = probe_hits("buggify.log.late-sync");
  const Duration off = persisted_append_time(false);
  EXPECT_EQ(probe_hits("buggify.log.late-sync"), after_on);
  EXPECT_LT(off, on);
}

}  // namespace
}  // namespace sluice::storage
