// first_record_at_or_after (segment_read.cc, ListOffsets by timestamp within one batch), on batches the fuzzer
// (fuzz/batch_fuzzer.cc) drives it with: timestamps whose sums wrap, and a small compressed batch of millions of
// tiny records, which it used to decode into a vector of Records (~100 bytes of heap each) before searching.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <climits>
#include <cstdlib>

#include "core/base/varint.h"
#include "core/storage/compression.h"
#include "core/storage/segment.h"

namespace sluice::storage {
namespace {

void put_be(uint8_t* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[bytes - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

Record record_at(int64_t offset, int64_t timestamp) {
  Record record;
  record.offset = offset;
  record.timestamp = timestamp;
  record.value = Bytes{1, 2, 3};
  return record;
}

// Record timestamps are deltas from the batch's base timestamp: a producer's deltas may carry a sum past INT64_MAX,
// which wraps (as decode_records' does) instead of being undefined behaviour (UBSan's report in the dev build).
TEST(FirstRecordAtOrAfter, TimestampSumsWrap) {
  for (Compression codec : {Compression::kNone, Compression::kZstd}) {
    BatchOptions options;
    options.compression = codec;
    Result<Bytes> batch = build_batch({record_at(0, INT64_MAX - 1), record_at(1, INT64_MIN + 5)}, options);
    ASSERT_TRUE(batch.ok());
    Result<BatchHeader> header = parse_batch_header(*batch);
    ASSERT_TRUE(header.ok());
    auto first = first_record_at_or_after(*batch, *header, INT64_MAX - 1, 0);
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    ASSERT_TRUE(first->has_value());
    EXPECT_EQ((*first)->offset, 0);
    EXPECT_EQ((*first)->timestamp, INT64_MAX - 1);
    auto second = first_record_at_or_after(*batch, *header, INT64_MAX - 1, 1);  // the wrapped one is older
    ASSERT_TRUE(second.ok()) << second.status().to_string();
    EXPECT_FALSE(second->has_value());
  }
}

// A zstd batch of `count` minimal records (7 bytes each, timestamps 0, 1, 2, ...): a few KiB on the wire.
Bytes tiny_records_batch(int32_t count) {
  Bytes section;
  for (int32_t i = 0; i < count; ++i) {
    Bytes body{0};  // attributes
    put_varlong(&body, i);  // timestamp delta
    put_varint(&body, i);   // offset delta
    put_varint(&body, -1);  // key
    put_varint(&body, -1);  // value
    put_varint(&body, 0);   // headers
    put_varint(&section, static_cast<int32_t>(body.size()));
    section.insert(section.end(), body.begin(), body.end());
  }
  Bytes compressed = std::move(compress(Compression::kZstd, section)).value();
  Bytes batch = std::move(build_batch({record_at(0, 0)})).value();
  batch.resize(kBatchHeaderBytes);
  batch.insert(batch.end(), compressed.begin(), compressed.end());
  put_be(batch.data() + 8, batch.size() - kBatchLogOverheadBytes, 4);          // batch_length
  put_be(batch.data() + 21, static_cast<uint16_t>(Compression::kZstd), 2);      // attributes
  put_be(batch.data() + 23, static_cast<uint32_t>(count - 1), 4);              // last_offset_delta
  put_be(batch.data() + 35, static_cast<uint64_t>(count - 1), 8);              // max_timestamp
  put_be(batch.data() + 57, static_cast<uint32_t>(count), 4);                  // record_count
  put_be(batch.data() + kBatchCrcOffset, compute_batch_crc(batch), 4);
  return batch;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// 2 M records (~22 MiB decompressed, within kMaxDecompressedBytes): the search walks them in place. Decoding them
// first took ~220 MiB more. Measured in a fresh process (a death test in the threadsafe style re-runs this test
// alone), so that the peak resident size is this search's own.
TEST(FirstRecordAtOrAfter, ASmallBatchOfMillionsOfTinyRecordsIsSearchedInPlace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        constexpr int32_t kCount = 2 << 20;
        const Bytes batch = tiny_records_batch(kCount);
        const BatchHeader header = std::move(parse_batch_header(batch)).value();
        const long before = peak_rss_kib();
        auto found = first_record_at_or_after(batch, header, kCount - 1, 0);
        const long grown_mib = (peak_rss_kib() - before) / 1024;
        const bool right = found.ok() && found->has_value() && (*found)->offset == kCount - 1;
        std::fprintf(stderr, "found %s, peak resident size grew by %ld MiB\n", right ? "right" : "WRONG", grown_mib);
        std::exit(right && grown_mib < 150 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "found right");
}

}  // namespace
}  // namespace sluice::storage
