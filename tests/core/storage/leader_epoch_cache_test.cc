// LeaderEpochCache: Kafka 3.9's LeaderEpochFileCache rules (the cases of its LeaderEpochFileCacheTest, restated)
// and the leader-epoch-checkpoint codec.
#include "core/storage/leader_epoch_cache.h"

#include <gtest/gtest.h>

#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using Entries = std::vector<EpochEntry>;

LeaderEpochCache cache_of(const Entries& assigned) {
  LeaderEpochCache cache;
  for (const EpochEntry& e : assigned) cache.assign(e.epoch, e.start_offset);
  return cache;
}

EpochEndOffset eo(int32_t epoch, int64_t end) { return EpochEndOffset{epoch, end}; }
const EpochEndOffset kUndefined{kUndefinedEpoch, kUndefinedEpochOffset};

TEST(LeaderEpochCache, AddsAnEpochAndAnswersTheLogEndForIt) {
  LeaderEpochCache cache;
  EXPECT_TRUE(cache.assign(2, 10));
  EXPECT_EQ(cache.latest_epoch(), 2);
  EXPECT_EQ(cache.entries(), (Entries{{2, 10}}));
  EXPECT_EQ(cache.end_offset_for(2, 11), eo(2, 11));
}

TEST(LeaderEpochCache, LatestEpochRequestedAnswersTheLogEnd) {
  LeaderEpochCache cache = cache_of({{2, 11}, {2, 12}});
  EXPECT_EQ(cache.end_offset_for(2, 14), eo(2, 14));
}

TEST(LeaderEpochCache, UndefinedEpochRequestedIsUndefined) {
  EXPECT_EQ(cache_of({{2, 11}, {3, 12}}).end_offset_for(kUndefinedEpoch, 0), kUndefined);
  EXPECT_EQ(LeaderEpochCache().end_offset_for(kUndefinedEpoch, 73), kUndefined);
}

TEST(LeaderEpochCache, AnEpochKeepsItsFirstStartOffset) {
  LeaderEpochCache cache;
  EXPECT_TRUE(cache.assign(2, 9));
  EXPECT_FALSE(cache.assign(2, 10));
  EXPECT_EQ(cache.entries(), (Entries{{2, 9}}));
  EXPECT_FALSE(cache.assign(2, 9));
}

TEST(LeaderEpochCache, StartOffsetsIncreaseStrictly) {
  EXPECT_EQ(cache_of({{2, 9}, {3, 9}}).entries(), (Entries{{3, 9}}));
  EXPECT_EQ(cache_of({{2, 6}, {3, 5}}).entries(), (Entries{{3, 5}}));
}

TEST(LeaderEpochCache, EpochsIncreaseStrictly) {
  LeaderEpochCache cache = cache_of({{1, 5}, {2, 6}, {1, 7}});
  EXPECT_EQ(cache.latest_epoch(), 1);
  EXPECT_EQ(cache.entries(), (Entries{{1, 7}}));
  EXPECT_EQ(cache.end_offset_for(1, 8), eo(1, 8));
  EXPECT_EQ(cache.end_offset_for(2, 8), kUndefined);
}

TEST(LeaderEpochCache, NothingRecordedIsUndefined) {
  EXPECT_EQ(LeaderEpochCache().end_offset_for(0, 0), kUndefined);
  EXPECT_EQ(LeaderEpochCache().end_offset_for(7, 0), kUndefined);
  EXPECT_EQ(LeaderEpochCache().latest_epoch(), std::nullopt);
}

TEST(LeaderEpochCache, AnEpochOlderThanAnyKnownEndsWhereTheFirstKnownStarts) {
  EXPECT_EQ(cache_of({{5, 11}, {6, 12}, {7, 13}}).end_offset_for(4, 0), eo(4, 11));
}

TEST(LeaderEpochCache, TheLatestEpochReassignedEarlierTruncatesTheOnesAfter) {
  LeaderEpochCache cache = cache_of({{5, 11}, {6, 12}, {7, 13}});
  EXPECT_TRUE(cache.assign(7, 12));
  EXPECT_EQ(cache.end_offset_for(5, 0), eo(5, 12));
  EXPECT_EQ(cache.end_offset_for(6, 0), eo(5, 12));
}

TEST(LeaderEpochCache, AnEarlierEpochEndsWhereTheNextStarts) {
  LeaderEpochCache cache = cache_of({{1, 11}, {1, 12}, {2, 13}, {2, 14}, {3, 15}, {3, 16}});
  EXPECT_EQ(cache.end_offset_for(2, 17), eo(2, 15));
}

TEST(LeaderEpochCache, AnUnknownEpochIsAnsweredWithTheLargestSmallerOne) {
  LeaderEpochCache cache = cache_of({{0, 10}, {2, 13}, {4, 17}});
  EXPECT_EQ(cache.end_offset_for(1, 0), eo(0, 13));
  EXPECT_EQ(cache.end_offset_for(2, 0), eo(2, 17));
  EXPECT_EQ(cache.end_offset_for(3, 0), eo(2, 17));
}

TEST(LeaderEpochCache, AnEpochNewerThanAnyKnownIsUndefined) {
  EXPECT_EQ(cache_of({{2, 100}}).end_offset_for(3, 100), kUndefined);
}

TEST(LeaderEpochCache, TracksLeaderChanges) {
  LeaderEpochCache cache = cache_of({{0, 0}, {1, 0}});
  EXPECT_EQ(cache.latest_epoch(), 1);
  EXPECT_EQ(cache.end_offset_for(1, 0), eo(1, 0));
  EXPECT_EQ(cache.end_offset_for(0, 0), eo(0, 0));
  EXPECT_EQ(cache.end_offset_for(1, 5), eo(1, 5));
  EXPECT_EQ(cache.end_offset_for(0, 5), eo(0, 0));
  cache.assign(2, 5);
  EXPECT_EQ(cache.end_offset_for(2, 10), eo(2, 10));
  EXPECT_EQ(cache.end_offset_for(1, 10), eo(1, 5));
  EXPECT_EQ(cache.end_offset_for(0, 10), eo(0, 0));
}

TEST(LeaderEpochCache, TracksAFollowerReceivingManyBatches) {
  LeaderEpochCache cache;
  for (int64_t offset = 0; offset < 9; ++offset) cache.assign(static_cast<int32_t>(offset / 3), offset);
  EXPECT_EQ(cache.entries(), (Entries{{0, 0}, {1, 3}, {2, 6}}));
  EXPECT_EQ(cache.end_offset_for(2, 9), eo(2, 9));
  EXPECT_EQ(cache.end_offset_for(0, 9), eo(0, 3));
  EXPECT_EQ(cache.end_offset_for(1, 9), eo(1, 6));
}

TEST(LeaderEpochCache, TruncateFromEndDropsEntriesAtOrAboveTheCut) {
  LeaderEpochCache on_boundary = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_TRUE(on_boundary.truncate_from_end(8));
  EXPECT_EQ(on_boundary.entries(), (Entries{{2, 6}}));
  LeaderEpochCache between = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_TRUE(between.truncate_from_end(9));
  EXPECT_EQ(between.latest_epoch(), 3);
  EXPECT_EQ(between.entries(), (Entries{{2, 6}, {3, 8}}));
  LeaderEpochCache undefined = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_FALSE(undefined.truncate_from_end(kUndefinedEpochOffset));
  EXPECT_EQ(undefined.entries().size(), 3u);
  LeaderEpochCache empty;
  EXPECT_FALSE(empty.truncate_from_end(7));
}

TEST(LeaderEpochCache, TruncateFromStartMovesTheCoveringEntryToTheNewStart) {
  LeaderEpochCache at_boundary = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_TRUE(at_boundary.truncate_from_start(8));
  EXPECT_EQ(at_boundary.entries(), (Entries{{3, 8}, {4, 11}}));
  LeaderEpochCache too_early = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_FALSE(too_early.truncate_from_start(1));
  EXPECT_EQ(too_early.entries(), (Entries{{2, 6}, {3, 8}, {4, 11}}));
  LeaderEpochCache first_offset = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_FALSE(first_offset.truncate_from_start(6));
  EXPECT_EQ(first_offset.entries(), (Entries{{2, 6}, {3, 8}, {4, 11}}));
  LeaderEpochCache all_but_latest = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_TRUE(all_but_latest.truncate_from_start(11));
  EXPECT_EQ(all_but_latest.entries(), (Entries{{4, 11}}));
  LeaderEpochCache between = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_TRUE(between.truncate_from_start(9));
  EXPECT_EQ(between.entries(), (Entries{{3, 9}, {4, 11}}));
  LeaderEpochCache first_two = cache_of({{0, 0}, {1, 7}, {2, 10}});
  EXPECT_TRUE(first_two.truncate_from_start(5));
  EXPECT_EQ(first_two.entries(), (Entries{{0, 5}, {1, 7}, {2, 10}}));
  LeaderEpochCache past_all = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_TRUE(past_all.truncate_from_start(15));
  EXPECT_EQ(past_all.entries(), (Entries{{4, 15}}));
  LeaderEpochCache undefined = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_FALSE(undefined.truncate_from_start(kUndefinedEpochOffset));
  EXPECT_EQ(undefined.entries().size(), 3u);
  LeaderEpochCache empty;
  EXPECT_FALSE(empty.truncate_from_start(7));
}

TEST(LeaderEpochCache, EpochForOffsetIsTheEntryCoveringIt) {
  LeaderEpochCache cache = cache_of({{2, 6}, {3, 8}, {4, 11}});
  EXPECT_EQ(cache.epoch_for_offset(5), std::nullopt);
  EXPECT_EQ(cache.epoch_for_offset(6), 2);
  EXPECT_EQ(cache.epoch_for_offset(7), 2);
  EXPECT_EQ(cache.epoch_for_offset(8), 3);
  EXPECT_EQ(cache.epoch_for_offset(10), 3);
  EXPECT_EQ(cache.epoch_for_offset(11), 4);
  EXPECT_EQ(cache.epoch_for_offset(1000), 4);
  EXPECT_EQ(LeaderEpochCache().epoch_for_offset(0), std::nullopt);
  EXPECT_EQ(cache.first_entry_after(2), (EpochEntry{3, 8}));
  EXPECT_EQ(cache.first_entry_after(1), (EpochEntry{2, 6}));
  EXPECT_EQ(cache.first_entry_after(4), std::nullopt);
}

TEST(LeaderEpochCheckpoint, EncodesKafkasTextLayout) {
  EXPECT_EQ(encode_leader_epoch_checkpoint({}), "0\n0\n");
  EXPECT_EQ(encode_leader_epoch_checkpoint({{0, 0}, {3, 120}}), "0\n2\n0 0\n3 120\n");
  auto decoded = decode_leader_epoch_checkpoint("0\n2\n0 0\n3 120\n");
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(*decoded, (Entries{{0, 0}, {3, 120}}));
  auto empty = decode_leader_epoch_checkpoint("0\n0\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(LeaderEpochCheckpoint, RefusesWhatItCannotTrust) {
  for (const char* text : {"", "1\n0\n", "0\n", "0\nx\n", "0\n2\n0 0\n", "0\n1\n0 0\n1 5\n", "0\n1\n0\n",
                           "0\n1\n0 x\n", "0\n1\n-1 0\n", "0\n2\n3 5\n2 9\n", "0\n2\n2 5\n3 5\n", "0\n1\n0  0\n",
                           "0\n1\n0 0 0\n"}) {
    auto decoded = decode_leader_epoch_checkpoint(text);
    EXPECT_FALSE(decoded.ok()) << "accepted: " << text;
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.status().code(), Code::kCorruption) << text;
    }
  }
}

TEST(LeaderEpochCheckpoint, PersistsAcrossInstancesThroughTheFile) {
  log_testing::OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    ASSERT_TRUE(env.fs.create_dirs("p").ok());
    auto missing = read_leader_epoch_checkpoint(env.fs, "p");
    ASSERT_TRUE(missing.ok());
    EXPECT_FALSE(missing->has_value());
    ASSERT_TRUE(write_leader_epoch_checkpoint(env.fs, "p", {{2, 6}}).ok());
    auto read = read_leader_epoch_checkpoint(env.fs, "p");
    ASSERT_TRUE(read.ok() && read->has_value());
    EXPECT_EQ(LeaderEpochCache(**read).entries(), (Entries{{2, 6}}));
    EXPECT_FALSE(env.fs.exists("p/leader-epoch-checkpoint.tmp").value());
  }));
}

}  // namespace
}  // namespace sluice::storage
