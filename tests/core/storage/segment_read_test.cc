// Segment's read side (segment_read.cc): one pread per read and windowed header walks, and the position hints a
// read leaves where it ended. A read through a hint must serve exactly the bytes a segment without hints serves;
// truncation (and anything else that cuts the .log) must forget every hint.
#include <gtest/gtest.h>

#include "core/storage/segment.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "seg";

// No index entries: every walk without a hint starts at byte 0.
SegmentConfig sparse_config() { return SegmentConfig{.index_bytes = 1 << 20, .index_interval_bytes = 1 << 30}; }

// Appends one batch of `records` records at the segment's next offset; values padded by `pad` bytes.
void append_batch(Segment& segment, int records, size_t pad, const std::string& tag = "v") {
  Bytes batch = batch_of(records, 1000 + segment.next_offset(), tag, pad);
  set_base_offset(batch, segment.next_offset());
  Result<BatchHeader> header = parse_batch_header(batch);
  ASSERT_TRUE(header.ok());
  const ByteView part(batch);
  const BatchSpan span{*header, 0};
  ASSERT_TRUE(segment.append(std::span(&part, 1), std::span(&span, 1)).ok());
}

// The same files seen by a segment that has served nothing (so has no hints).
std::unique_ptr<Segment> fresh_view(Env env, const SegmentConfig& config) {
  auto segment = Segment::open(env, kDir, 0, config);
  EXPECT_TRUE(segment.ok()) << segment.status().to_string();
  EXPECT_TRUE((*segment)->load_trusted().ok());
  EXPECT_EQ((*segment)->position_hints().size(), 0u);
  return std::move(*segment);
}

Bytes read_from(const Segment& segment, int64_t offset, size_t max_bytes, int64_t upper_bound = INT64_MAX) {
  Result<std::optional<Bytes>> read = segment.read_from(offset, max_bytes, upper_bound);
  EXPECT_TRUE(read.ok()) << read.status().to_string();
  return read.ok() && read->has_value() ? **read : Bytes();
}

int64_t next_offset_after(ByteView bytes) { return headers_of(bytes).back().last_offset() + 1; }

TEST(SegmentRead, AConsumerFollowingTheTailReadsThroughHintsTheBytesAFreshWalkReads) {
  OneNode world(11);
  ASSERT_TRUE(world.run([&](Env env) {
    const SegmentConfig config = sparse_config();
    ASSERT_TRUE(env.fs.create_dirs(kDir).ok());
    auto created = Segment::create(env, kDir, 0, config);
    ASSERT_TRUE(created.ok());
    Segment& segment = **created;
    for (int i = 0; i < 40; ++i) append_batch(segment, 1 + i % 3, static_cast<size_t>(i * 7));
    int64_t offset = 0;
    size_t reads = 0;
    while (offset < segment.next_offset()) {
      const Bytes hinted = read_from(segment, offset, 700);
      ASSERT_FALSE(hinted.empty());
      if (offset > 0) {
        EXPECT_TRUE(segment.position_hints().find(offset).has_value()) << "offset " << offset;
      }
      EXPECT_EQ(hinted, read_from(*fresh_view(env, config), offset, 700)) << "offset " << offset;
      offset = next_offset_after(hinted);
      ++reads;
      if (reads % 4 == 0) append_batch(segment, 2, 30, "late");  // the tail grows behind the hint
    }
    EXPECT_EQ(offset, segment.next_offset());
    // Caught up: no batch holds the hinted offset yet.
    EXPECT_FALSE(read_from(segment, offset, 700).size() > 0);
  }));
}

TEST(SegmentRead, ServesTheFirstBatchWholeAboveMaxBytesAndStopsAtTheUpperBound) {
  OneNode world(12);
  ASSERT_TRUE(world.run([&](Env env) {
    ASSERT_TRUE(env.fs.create_dirs(kDir).ok());
    auto created = Segment::create(env, kDir, 0, sparse_config());
    ASSERT_TRUE(created.ok());
    Segment& segment = **created;
    append_batch(segment, 2, 500);  // offsets 0-1, > 1 KB
    append_batch(segment, 1, 10);   // 2
    append_batch(segment, 1, 10);   // 3
    const Bytes first = read_from(segment, 0, 10);
    ASSERT_EQ(headers_of(first).size(), 1u);
    EXPECT_EQ(headers_of(first)[0].last_offset(), 1);
    // The hint the oversized read left serves offset 2; the upper bound stops before offset 3.
    const Bytes next = read_from(segment, 2, 1 << 20, 3);
    ASSERT_EQ(headers_of(next).size(), 1u);
    EXPECT_EQ(headers_of(next)[0].base_offset, 2);
    EXPECT_TRUE(read_from(segment, 3, 1 << 20, 3).empty());
    // max_bytes counts whole batches: two small ones fit exactly, one byte less keeps one.
    const Bytes both = read_from(segment, 2, 1 << 20);
    ASSERT_EQ(headers_of(both).size(), 2u);
    EXPECT_EQ(headers_of(read_from(segment, 2, both.size())).size(), 2u);
    EXPECT_EQ(headers_of(read_from(segment, 2, both.size() - 1)).size(), 1u);
  }));
}

TEST(SegmentRead, TruncationForgetsEveryHintAndReadsFindTheNewBatches) {
  OneNode world(13);
  ASSERT_TRUE(world.run([&](Env env) {
    const SegmentConfig config = sparse_config();
    ASSERT_TRUE(env.fs.create_dirs(kDir).ok());
    auto created = Segment::create(env, kDir, 0, config);
    ASSERT_TRUE(created.ok());
    Segment& segment = **created;
    for (int i = 0; i < 10; ++i) append_batch(segment, 2, 20);
    const Bytes head = read_from(segment, 0, 3 * 100);
    const int64_t hinted_offset = next_offset_after(head);
    const std::optional<uint64_t> old_position = segment.position_hints().find(hinted_offset);
    ASSERT_TRUE(old_position.has_value());
    ASSERT_TRUE(read_from(segment, hinted_offset, 1 << 20).size() > 0);
    EXPECT_GE(segment.position_hints().size(), 1u);

    // Cut below the hinted boundary, then append batches of another size: the old position is no boundary now.
    ASSERT_TRUE(segment.truncate_to(1).ok());
    EXPECT_EQ(segment.position_hints().size(), 0u);
    while (segment.next_offset() <= hinted_offset + 2) append_batch(segment, 1, 3, "new");
    const Bytes after = read_from(segment, hinted_offset, 1 << 20);
    EXPECT_EQ(after, read_from(*fresh_view(env, config), hinted_offset, 1 << 20));
    ASSERT_FALSE(after.empty());
    EXPECT_EQ(headers_of(after)[0].base_offset, hinted_offset);
    std::optional<uint64_t> position = segment.find_position(hinted_offset).value();
    ASSERT_TRUE(position.has_value());
    EXPECT_NE(*position, *old_position);
  }));
}

TEST(SegmentRead, ARecoveryScanForgetsTheHints) {
  OneNode world(14);
  ASSERT_TRUE(world.run([&](Env env) {
    ASSERT_TRUE(env.fs.create_dirs(kDir).ok());
    auto created = Segment::create(env, kDir, 0, sparse_config());
    ASSERT_TRUE(created.ok());
    Segment& segment = **created;
    for (int i = 0; i < 5; ++i) append_batch(segment, 1, 8);
    read_from(segment, 0, 1 << 20);
    EXPECT_EQ(segment.position_hints().size(), 1u);
    ASSERT_TRUE(segment.recover().ok());
    EXPECT_EQ(segment.position_hints().size(), 0u);
    EXPECT_EQ(headers_of(read_from(segment, 2, 1 << 20)).size(), 3u);
  }));
}

TEST(PositionHints, KeepsTheNewestHintsRoundRobinAndForgetsThemAllAtOnce) {
  PositionHints hints;
  for (int64_t i = 1; i <= static_cast<int64_t>(PositionHints::kCapacity) + 3; ++i) {
    EXPECT_TRUE(hints.remember(i * 10, static_cast<uint64_t>(i) * 100));
  }
  EXPECT_EQ(hints.size(), PositionHints::kCapacity);
  EXPECT_FALSE(hints.find(10).has_value());
  EXPECT_EQ(hints.find(110), std::optional<uint64_t>(1100));
  const uint64_t generation = hints.generation();
  hints.forget_all();
  EXPECT_EQ(hints.size(), 0u);
  EXPECT_GT(hints.generation(), generation);
  EXPECT_FALSE(hints.find(110).has_value());
}

TEST(PositionHints, ABoundaryThatContradictsAnotherIsNotRemembered) {
  PositionHints hints;
  ASSERT_TRUE(hints.remember(10, 1000));
  EXPECT_FALSE(hints.remember(20, 900));   // a later offset before an earlier boundary: a damaged base offset
  EXPECT_FALSE(hints.remember(10, 1100));  // one offset, two positions
  EXPECT_FALSE(hints.remember(12, 1000));  // one position, two offsets
  EXPECT_TRUE(hints.remember(20, 2000));
  EXPECT_EQ(hints.size(), 2u);
}

}  // namespace
}  // namespace sluice::storage
