// segment.index.bytes below one index entry: the topic config accepts 4 (Kafka's minimum), and the indexes used to
// assert at least one entry's size, so such a topic took the broker down on its first segment (found by
// fuzz/loader_fuzzer.cc, which opens segments with small index sizes). Now each index holds one entry and the log
// rolls after every batch that makes one.
#include <gtest/gtest.h>

#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

std::unique_ptr<PartitionLog> open_log(Env env, const LogSettings& settings) {
  auto log = PartitionLog::open(env, "p0", settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

TEST(SegmentIndexBytes, BelowOneEntryTheLogStillAppendsRollsAndReads) {
  for (int64_t index_bytes : {4, 8, 11}) {
    OneNode world;
    ASSERT_TRUE(world.run([index_bytes](Env env) {
      LogSettings settings = small_settings();
      settings.segment_index_bytes = index_bytes;
      auto log = open_log(env, settings);
      ASSERT_NE(log, nullptr);
      for (int i = 0; i < 6; ++i) ASSERT_TRUE(log->append(batch_of(1, 100 + i)).ok()) << index_bytes;
      EXPECT_GT(log->segments().size(), 2u) << index_bytes;
      for (int64_t offset = 0; offset < 6; ++offset) {
        auto read = log->read(offset, 1, INT64_MAX);
        ASSERT_TRUE(read.ok()) << read.status().to_string();
        EXPECT_EQ(headers_of(read->records).at(0).base_offset, offset);
      }
      ASSERT_TRUE(log->close().ok());
      auto reopened = open_log(env, settings);  // a clean load with the same tiny indexes
      ASSERT_NE(reopened, nullptr);
      EXPECT_EQ(reopened->log_end_offset(), 6);
      ASSERT_TRUE(reopened->close().ok());
    }));
  }
}

}  // namespace
}  // namespace sluice::storage
