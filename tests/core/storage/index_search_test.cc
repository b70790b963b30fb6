// Released indexes (issue 20, memory that follows the open segments, not the history): an OffsetIndex and a
// TimeIndex whose entries left memory answer every lookup from their files as they answered from memory, refuse a
// stretch read out of order, and load back only the entries they released; a log's closed segments hold none in
// memory and still serve every offset and timestamp, and a truncation into one loads its entries back.
#include "core/storage/index_search.h"

#include <gtest/gtest.h>

#include "core/storage/log_format.h"
#include "core/storage/offset_index.h"
#include "core/storage/time_index.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

constexpr int64_t kBase = 1000;
constexpr int kEntries = 3000;  // past kIndexSearchBlockEntries several times: bisection, then a stretch

std::shared_ptr<File> open_read(Env env, const std::string& path) {
  Result<std::unique_ptr<File>> file = env.fs.open(path, OpenMode::kRead);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  return file.ok() ? std::shared_ptr<File>(std::move(*file)) : nullptr;
}

// Flips the byte at `at` of `path` (a latent error under a released index).
void damage(Env env, const std::string& path, uint64_t at) {
  Result<std::unique_ptr<File>> file = env.fs.open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(file.ok());
  uint8_t byte = 0;
  ASSERT_TRUE((*file)->pread(at, MutableByteView(&byte, 1)).ok());
  byte ^= 0xff;
  ASSERT_TRUE((*file)->pwrite(at, ByteView(&byte, 1)).ok());
  ASSERT_TRUE((*file)->close().ok());
}

TEST(IndexSearch, AReleasedOffsetIndexAnswersFromItsFileAsFromMemory) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto index = OffsetIndex::open(env.fs, "i.index", kBase, 1 << 20);
    ASSERT_TRUE(index.ok());
    // Entries at every third offset, 100 bytes apart.
    for (int i = 0; i < kEntries; ++i) ASSERT_TRUE((*index)->append(kBase + 1 + 3 * i, 100 + 100 * i).ok());
    std::vector<OffsetPosition> from_memory;
    for (int64_t target = kBase - 1; target <= kBase + 3 * kEntries + 2; ++target) {
      from_memory.push_back((*index)->lookup(std::max(target, kBase)));
    }
    (*index)->release_file();
    (*index)->release_entries();
    EXPECT_FALSE((*index)->entries_loaded());
    EXPECT_EQ((*index)->entry_count(), static_cast<size_t>(kEntries));
    EXPECT_EQ((*index)->last().offset, kBase + 1 + 3 * (kEntries - 1));
    const std::shared_ptr<File> file = open_read(env, "i.index");
    size_t i = 0;
    for (int64_t target = kBase - 1; target <= kBase + 3 * kEntries + 2; ++target, ++i) {
      Result<OffsetPosition> found = (*index)->lookup_in_file(*file, std::max(target, kBase));
      ASSERT_TRUE(found.ok()) << found.status().to_string();
      ASSERT_EQ(found->offset, from_memory[i].offset) << target;
      ASSERT_EQ(found->position, from_memory[i].position) << target;
    }

    // An entry out of order on read is damage, never an answer; loading back refuses it too.
    damage(env, "i.index", 1500 * kOffsetIndexEntryBytes + 4);  // entry 1500's position
    Result<OffsetPosition> damaged = (*index)->lookup_in_file(*file, kBase + 1 + 3 * 1500);
    EXPECT_EQ(damaged.status().code(), Code::kCorruption) << damaged.status().to_string();
    ASSERT_TRUE((*index)->reopen_file().ok());
    EXPECT_EQ((*index)->reload_entries().code(), Code::kCorruption);
    damage(env, "i.index", 1500 * kOffsetIndexEntryBytes + 4);  // repaired: it loads back
    ASSERT_TRUE((*index)->reload_entries().ok());
    EXPECT_TRUE((*index)->entries_loaded());
    EXPECT_EQ((*index)->lookup(kBase + 1 + 3 * 1500).position, 100u + 100 * 1500);
    ASSERT_TRUE((*index)->close().ok());
  }));
}

TEST(IndexSearch, AReleasedTimeIndexAnswersFromItsFileAsFromMemory) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto index = TimeIndex::open(env.fs, "i.timeindex", kBase, 1 << 20);
    ASSERT_TRUE(index.ok());
    // Timestamps 10 ms apart, offsets every other one (two entries may share an offset's neighbourhood).
    for (int i = 0; i < kEntries; ++i) ASSERT_TRUE((*index)->maybe_append(50000 + 10 * i, kBase + 2 * i).ok());
    std::vector<TimestampOffset> from_memory;
    for (int64_t target = 49990; target <= 50000 + 10 * kEntries + 10; target += 3) {
      from_memory.push_back((*index)->lookup_below(target));
    }
    (*index)->release_file();
    (*index)->release_entries();
    EXPECT_EQ((*index)->last().timestamp, 50000 + 10 * (kEntries - 1));
    const std::shared_ptr<File> file = open_read(env, "i.timeindex");
    size_t i = 0;
    for (int64_t target = 49990; target <= 50000 + 10 * kEntries + 10; target += 3, ++i) {
      Result<TimestampOffset> found = (*index)->lookup_below_in_file(*file, target);
      ASSERT_TRUE(found.ok()) << found.status().to_string();
      ASSERT_EQ(found->timestamp, from_memory[i].timestamp) << target;
      ASSERT_EQ(found->offset, from_memory[i].offset) << target;
    }
    damage(env, "i.timeindex", 2999 * kTimeIndexEntryBytes - 5);  // entry 2998's timestamp, in the last stretch
    EXPECT_EQ((*index)->lookup_below_in_file(*file, 50000 + 10 * 2999).status().code(), Code::kCorruption);
    ASSERT_TRUE((*index)->close().ok());
  }));
}

// A closed segment of many indexed batches, its files and index entries released: reads from every offset and
// searches by every timestamp answer as before, and a truncation into it loads its entries back.
TEST(IndexSearch, ClosedSegmentsServeEveryOffsetAndTimestampWithTheirEntriesReleased) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();  // an index entry for every batch
    settings.segment_bytes = 40000;
    settings.file_cache = std::make_shared<SegmentFileCache>(env.fs, 4);
    auto log = PartitionLog::open(env, "p", settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    constexpr int kBatches = 1200;
    for (int i = 0; i < kBatches; ++i) {
      ASSERT_TRUE((*log)->append(batch_of(2, 100000 + 10 * i, "v" + std::to_string(i))).ok());
    }
    const std::vector<SegmentInfo> segments = (*log)->segments();
    const std::vector<SegmentFiles> files = (*log)->segment_files();
    ASSERT_GE(segments.size(), 3u);
    ASSERT_EQ(files.size(), segments.size());
    for (size_t s = 0; s + 1 < segments.size(); ++s) {
      EXPECT_EQ(segments[s].index_entries_in_memory, 0u) << s;
      EXPECT_GT(file_bytes(env.fs, files[s].index_file), 100 * kOffsetIndexEntryBytes) << s;
    }
    EXPECT_GT(segments.back().index_entries_in_memory, 100u);
    for (int64_t offset = 0; offset < 2 * kBatches; offset += 7) {
      Result<ReadResult> read = (*log)->read(offset, 1, 2 * kBatches);
      ASSERT_TRUE(read.ok()) << read.status().to_string();
      const std::vector<BatchHeader> headers = headers_of(read->records);
      ASSERT_FALSE(headers.empty()) << offset;
      EXPECT_EQ(headers.front().base_offset, offset - offset % 2) << offset;
    }
    for (int i = 0; i < kBatches; i += 13) {
      Result<std::optional<OffsetAndTimestamp>> found = (*log)->offset_for_timestamp(100000 + 10 * i - 5);
      ASSERT_TRUE(found.ok()) << found.status().to_string();
      ASSERT_TRUE(found->has_value()) << i;
      EXPECT_EQ((*found)->offset, 2 * i) << i;
    }
    // Truncation into the first segment: it becomes the active one with its entries back.
    const int64_t cut = segments[0].next_offset - 12;  // a batch boundary: batches of two from offset 0
    ASSERT_EQ(cut % 2, 0);
    ASSERT_TRUE((*log)->truncate_to(cut).ok());
    ASSERT_EQ((*log)->segments().size(), 1u);
    EXPECT_GT((*log)->segments().front().index_entries_in_memory, 100u);
    ASSERT_TRUE((*log)->append(batch_of(1, 900000, "after")).ok());
    Result<ReadResult> tail = (*log)->read(cut - 2, 1 << 20, (*log)->log_end_offset());
    ASSERT_TRUE(tail.ok());
    EXPECT_EQ(headers_of(tail->records).back().base_offset, cut);
    ASSERT_TRUE((*log)->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
