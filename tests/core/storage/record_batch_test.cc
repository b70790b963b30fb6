// The record codec: batches captured from a real client (kafka-python) checked field by field against the layout in
// record_batch.h and kafka-protocol.md §3, byte-identical rebuilding, build → parse → decode round trips for every
// codec and option, and strict decoding of malformed batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "core/base/crc32c.h"
#include "core/storage/compression.h"
#include "core/storage/record_batch.h"
#include "tests/core/storage/batch_test_util.h"
#include "tests/core/storage/kafka_python_batches.h"

namespace sluice::storage {
namespace {

using namespace testing_batches;  // NOLINT: test helpers

constexpr int64_t kT0 = 1700000000000;

std::vector<Record> kafka_python_small_records() {
  return {make_record(0, kT0, "k0", "v0", {{"h", to_bytes("x")}}), make_record(1, kT0 + 5, std::nullopt, "no key"),
          make_record(2, kT0 + 3, "gone", std::nullopt, {{"a", std::nullopt}, {"bb", Bytes()}})};
}

std::vector<Record> kafka_python_big_records() {
  std::string value;
  for (int i = 0; i < 36; ++i) value += "sluice ";
  std::vector<Record> records;
  for (int i = 0; i < 130; ++i) records.push_back(make_record(i, kT0 + i, "k" + std::to_string(i % 3), value));
  return records;
}

TEST(RecordBatch, KafkaPythonBatchMatchesTheDocumentedLayout) {
  const Bytes batch = from_hex(golden::kKafkaPythonSmall);
  ASSERT_EQ(batch.size(), 107u);
  Result<BatchHeader> header = parse_batch_header(batch);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_EQ(header->base_offset, 0);
  EXPECT_EQ(header->batch_length, 95);
  EXPECT_EQ(header->size_bytes(), batch.size());
  EXPECT_EQ(header->partition_leader_epoch, 0);  // kafka-python writes 0, the Java client -1
  EXPECT_EQ(header->magic, 2);
  EXPECT_EQ(header->crc, 0x3db6b16cu);
  EXPECT_EQ(header->crc, crc32c(ByteView(batch).subspan(21)));
  EXPECT_EQ(header->attributes, 0);
  EXPECT_EQ(header->last_offset_delta, 2);
  EXPECT_EQ(header->base_timestamp, kT0);
  EXPECT_EQ(header->max_timestamp, kT0 + 5);
  EXPECT_EQ(header->producer_id, -1);
  EXPECT_EQ(header->producer_epoch, -1);
  EXPECT_EQ(header->base_sequence, -1);
  EXPECT_EQ(header->record_count, 3);
  EXPECT_TRUE(batch_crc_ok(batch));
  // The first record, byte by byte: length 14, attributes, timestamp delta 0, offset delta 0, key "k0", value
  // "v0", one header "h" = "x" (every length a zigzag varint: 2 → 0x04, 1 → 0x02).
  const Bytes first = {0x1c, 0x00, 0x00, 0x00, 0x04, 'k', '0', 0x04, 'v', '0', 0x02, 0x02, 'h', 0x02, 'x'};
  EXPECT_EQ(Bytes(batch.begin() + 61, batch.begin() + 61 + first.size()), first);
  // The second record: length, attributes, timestamp delta 5 (0x0a), offset delta 1 (0x02), then its null key as
  // varint -1 (0x01).
  const size_t second = 61 + first.size();
  EXPECT_EQ(batch[second + 2], 0x0a);
  EXPECT_EQ(batch[second + 3], 0x02);
  EXPECT_EQ(batch[second + 4], 0x01);
}

TEST(RecordBatch, DecodesKafkaPythonBatchesOfEveryCodec) {
  Result<std::vector<Record>> small = decode_records(from_hex(golden::kKafkaPythonSmall));
  ASSERT_TRUE(small.ok()) << small.status().to_string();
  expect_same_records(*small, kafka_python_small_records());

  const std::pair<const char*, Compression> cases[] = {{golden::kKafkaPythonGzip, Compression::kGzip},
                                                        {golden::kKafkaPythonSnappy, Compression::kSnappy},
                                                        {golden::kKafkaPythonLz4, Compression::kLz4},
                                                        {golden::kKafkaPythonZstd, Compression::kZstd}};
  for (const auto& [hex, codec] : cases) {
    const Bytes batch = from_hex(hex);
    Result<BatchHeader> header = parse_batch_header(batch);
    ASSERT_TRUE(header.ok());
    EXPECT_EQ(header->compression(), codec);
    EXPECT_EQ(header->producer_id, 7);
    EXPECT_EQ(header->base_sequence, 0);
    EXPECT_TRUE(batch_crc_ok(batch)) << int(codec);
    Result<std::vector<Record>> records = decode_records(batch);
    ASSERT_TRUE(records.ok()) << int(codec) << ": " << records.status().to_string();
    expect_same_records(*records, kafka_python_big_records());
  }
}

TEST(RecordBatch, RebuildsTheKafkaPythonBatchByteForByte) {
  BatchOptions options;
  options.partition_leader_epoch = 0;
  Result<Bytes> built = build_batch(kafka_python_small_records(), options);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  EXPECT_EQ(*built, from_hex(golden::kKafkaPythonSmall));
}

// The same records as views over bytes the caller keeps (a producer's): the golden batch again, byte for byte, and the
// same bytes as from Records under a codec.
TEST(RecordBatch, RecordRefsBuildTheSameBatchAsRecords) {
  const std::vector<Record> records = kafka_python_small_records();
  std::vector<RecordRef> refs;
  for (const Record& record : records) {
    RecordRef& ref = refs.emplace_back();
    ref.timestamp = record.timestamp;
    ref.offset = record.offset;
    if (record.key) ref.key = ByteView(*record.key);
    if (record.value) ref.value = ByteView(*record.value);
    ref.headers = record.headers;
  }
  BatchOptions options;
  options.partition_leader_epoch = 0;
  Result<Bytes> built = build_batch(std::span<const RecordRef>(refs), options);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  EXPECT_EQ(*built, from_hex(golden::kKafkaPythonSmall));
  options.compression = Compression::kLz4;
  Result<Bytes> from_refs = build_batch(std::span<const RecordRef>(refs), options);
  Result<Bytes> from_records = build_batch(records, options);
  ASSERT_TRUE(from_refs.ok() && from_records.ok());
  EXPECT_EQ(*from_refs, *from_records);
  EXPECT_FALSE(build_batch(std::span<const RecordRef>(), options).ok()) << "a batch needs a record";
}

TEST(RecordBatch, RoundTripsEveryCodec) {
  const std::vector<Record> records = sample_records(1000, kT0);
  for (Compression codec : kAllCodecs) {
    BatchOptions options;
    options.compression = codec;
    Result<Bytes> batch = build_batch(records, options);
    ASSERT_TRUE(batch.ok()) << batch.status().to_string();
    ASSERT_TRUE(batch_crc_ok(*batch));
    Result<BatchHeader> header = parse_batch_header(*batch);
    ASSERT_TRUE(header.ok());
    EXPECT_EQ(header->compression(), codec);
    EXPECT_EQ(header->base_offset, 1000);
    EXPECT_EQ(header->last_offset_delta, 4);
    EXPECT_EQ(header->record_count, 5);
    EXPECT_EQ(header->base_timestamp, kT0);
    EXPECT_EQ(header->max_timestamp, kT0 + 100);
    if (codec != Compression::kNone) {
      EXPECT_LT(header->size_bytes(), 10000u);  // the 70 KB value compresses
    }
    Result<std::vector<Record>> decoded = decode_records(*batch);
    ASSERT_TRUE(decoded.ok()) << int(codec) << ": " << decoded.status().to_string();
    expect_same_records(*decoded, records);
  }
}

TEST(RecordBatch, HeaderOptionsAndInPlaceEdits) {
  const std::vector<Record> records = sample_records(0, kT0);
  BatchOptions options;
  options.producer_id = 42;
  options.producer_epoch = 3;
  options.base_sequence = 17;
  options.partition_leader_epoch = 9;
  options.transactional = true;
  Result<Bytes> batch = build_batch(records, options);
  ASSERT_TRUE(batch.ok());
  Result<BatchHeader> header = parse_batch_header(*batch);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->producer_id, 42);
  EXPECT_EQ(header->producer_epoch, 3);
  EXPECT_EQ(header->base_sequence, 17);
  EXPECT_EQ(header->partition_leader_epoch, 9);
  EXPECT_TRUE(header->transactional());
  EXPECT_FALSE(header->control());
  EXPECT_FALSE(header->log_append_time());

  set_base_offset(*batch, 5000);
  set_partition_leader_epoch(*batch, 11);
  EXPECT_TRUE(batch_crc_ok(*batch));  // neither field is covered by the CRC
  Result<std::vector<Record>> decoded = decode_records(*batch);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ((*decoded)[0].offset, 5000);
  EXPECT_EQ((*decoded)[4].offset, 5004);

  set_log_append_time(*batch, kT0 + 777);
  ASSERT_TRUE(batch_crc_ok(*batch));
  decoded = decode_records(*batch);
  ASSERT_TRUE(decoded.ok());
  for (const Record& r : *decoded) EXPECT_EQ(r.timestamp, kT0 + 777);  // LogAppendTime: max_timestamp for all
}

// The leader path's edit: base offset and partition leader epoch, both outside the CRC, over one batch or many.
TEST(RecordBatch, SetsOffsetsAndEpochInPlace) {
  Result<Bytes> one = build_batch(sample_records(0, kT0));
  ASSERT_TRUE(one.ok());
  set_base_offset_and_epoch(*one, 700, 4);
  Result<BatchHeader> header = parse_batch_header(*one);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->base_offset, 700);
  EXPECT_EQ(header->partition_leader_epoch, 4);
  EXPECT_TRUE(batch_crc_ok(*one));

  Result<Bytes> two = build_batch(sample_records(0, kT0));
  ASSERT_TRUE(two.ok());
  Bytes both = *one;
  both.insert(both.end(), two->begin(), two->end());
  Result<int64_t> next = set_offsets_and_epoch(both, 10, 6);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 20);  // five records each
  size_t consumed = 0;
  Result<std::vector<BatchSpan>> spans = split_batches(both, &consumed);
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((*spans)[0].header.base_offset, 10);
  EXPECT_EQ((*spans)[1].header.base_offset, 15);
  for (const BatchSpan& span : *spans) {
    EXPECT_EQ(span.header.partition_leader_epoch, 6);
    EXPECT_TRUE(batch_crc_ok(ByteView(both).subspan(span.position, span.header.size_bytes())));
  }
  Bytes torn(both.begin(), both.end() - 1);
  EXPECT_EQ(set_offsets_and_epoch(torn, 0, 1).status().code(), Code::kCorruption);
}

// for_each_batch walks as split_batches lists: the same spans in order, a torn tail left out, a bad header an error
// with the whole batches before it consumed; a visit that fails stops the walk, counting the batch it failed on.
TEST(RecordBatch, ForEachBatchVisitsWhatSplitBatchesLists) {
  Bytes three;
  for (int64_t base : {0, 5, 10}) {
    Bytes batch = build_batch(sample_records(base, kT0)).value();
    ASSERT_TRUE(set_offsets_and_epoch(batch, base, 1).ok());
    three.insert(three.end(), batch.begin(), batch.end());
  }
  const Bytes torn(three.begin(), three.end() - 3);
  for (const Bytes* buffer : {static_cast<const Bytes*>(&three), &torn}) {
    size_t split_consumed = 0;
    const std::vector<BatchSpan> spans = split_batches(*buffer, &split_consumed).value();
    std::vector<BatchSpan> visited;
    size_t consumed = 0;
    ASSERT_TRUE(for_each_batch(*buffer, &consumed, [&](const BatchSpan& span) {
      visited.push_back(span);
      return Status();
    }).ok());
    EXPECT_EQ(consumed, split_consumed);
    ASSERT_EQ(visited.size(), spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
      EXPECT_EQ(visited[i].position, spans[i].position);
      EXPECT_EQ(visited[i].header.base_offset, spans[i].header.base_offset);
    }
  }
  EXPECT_EQ(split_batches(torn, nullptr).value().size(), 2u);

  int visits = 0;
  size_t consumed = 0;
  const Status stopped = for_each_batch(three, &consumed, [&](const BatchSpan& span) {
    ++visits;
    return span.header.base_offset == 5 ? corruption("stop here") : Status();
  });
  EXPECT_EQ(stopped.message(), "stop here");
  EXPECT_EQ(visits, 2);
  EXPECT_EQ(consumed, split_batches(three, nullptr).value()[2].position);

  Bytes bad = three;
  patch_be(&bad, split_batches(three, nullptr).value()[1].position + 8, static_cast<uint64_t>(-5), 4);  // length
  visits = 0;
  const Status failed = for_each_batch(bad, &consumed, [&](const BatchSpan&) {
    ++visits;
    return Status();
  });
  EXPECT_EQ(failed.code(), Code::kCorruption);
  EXPECT_EQ(visits, 1);
  EXPECT_EQ(consumed, split_batches(three, nullptr).value()[1].position);
}

// LogValidator's setMaxTimestamp: only max_timestamp, the timestamp-type bit and the CRC change; the records
// section stays byte for byte (no recompression), and a header that already agrees is not copied at all.
TEST(RecordBatch, CreateTimeMaxTimestampRewritesOnlyTheHeader) {
  for (Compression codec : kAllCodecs) {
    BatchOptions options;
    options.compression = codec;
    const Bytes built = build_batch(sample_records(0, kT0), options).value();
    Bytes sent = built;
    patch_be(&sent, 35, static_cast<uint64_t>(-1), 8);  // what sarama writes
    reseal(&sent);
    Bytes storage;
    const ByteView fixed = with_create_time_max_timestamp(sent, kT0 + 100, &storage);
    EXPECT_EQ(fixed.data(), storage.data()) << int(codec);
    EXPECT_EQ(Bytes(fixed.begin(), fixed.end()), built) << int(codec) << ": the header build_batch writes";
    EXPECT_TRUE(batch_crc_ok(fixed));
    EXPECT_TRUE(std::equal(fixed.begin() + kBatchHeaderBytes, fixed.end(), sent.begin() + kBatchHeaderBytes));

    Bytes untouched;
    const ByteView same = with_create_time_max_timestamp(built, kT0 + 100, &untouched);
    EXPECT_EQ(same.data(), built.data()) << "already right: stored as it came";
    EXPECT_TRUE(untouched.empty());
  }
  // A LogAppendTime batch becomes CreateTime, as Kafka stores one on a CreateTime topic.
  Bytes lat = build_batch(sample_records(0, kT0)).value();
  set_log_append_time(lat, kT0 + 7);
  Bytes storage;
  const ByteView fixed = with_create_time_max_timestamp(lat, kT0 + 7, &storage);
  ASSERT_EQ(fixed.data(), storage.data());
  Result<BatchHeader> header = parse_batch_header(fixed);
  ASSERT_TRUE(header.ok());
  EXPECT_FALSE(header->log_append_time());
  EXPECT_EQ(header->max_timestamp, kT0 + 7);
  EXPECT_TRUE(batch_crc_ok(fixed));
}

TEST(RecordBatch, DeleteHorizonAndControlOptions) {
  const std::vector<Record> records = sample_records(0, kT0);
  BatchOptions options;
  options.delete_horizon_ms = kT0 + 86400000;
  options.control = true;
  options.log_append_time = true;
  Result<Bytes> batch = build_batch(records, options);
  ASSERT_TRUE(batch.ok());
  Result<BatchHeader> header = parse_batch_header(*batch);
  ASSERT_TRUE(header.ok());
  EXPECT_TRUE(header->has_delete_horizon());
  EXPECT_TRUE(header->control());
  EXPECT_TRUE(header->log_append_time());
  EXPECT_EQ(header->base_timestamp, kT0 + 86400000);  // KIP-534: the horizon, with deltas relative to it
  options.log_append_time = false;
  batch = build_batch(records, options);
  ASSERT_TRUE(batch.ok());
  Result<std::vector<Record>> decoded = decode_records(*batch);
  ASSERT_TRUE(decoded.ok());
  expect_same_records(*decoded, records);
}

TEST(RecordBatch, CompactedBatchesWithOffsetGapsDecode) {
  std::vector<Record> records = {make_record(10, kT0, "a", "1"), make_record(12, kT0, "b", "2"),
                                 make_record(15, kT0, "c", std::nullopt)};
  Result<Bytes> batch = build_batch(records);
  ASSERT_TRUE(batch.ok());
  Result<BatchHeader> header = parse_batch_header(*batch);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->last_offset_delta, 5);
  EXPECT_EQ(header->record_count, 3);
  Result<std::vector<Record>> decoded = decode_records(*batch);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  expect_same_records(*decoded, records);
}

TEST(RecordBatch, EmptyBatchesLeftByCompactionDecode) {
  for (Compression codec : {Compression::kNone, Compression::kZstd}) {
    Result<Bytes> one = build_batch({make_record(0, kT0, "k", "v")});
    ASSERT_TRUE(one.ok());
    Bytes empty(one->begin(), one->begin() + kBatchHeaderBytes);
    patch_be(&empty, 21, static_cast<uint64_t>(codec), 2);
    patch_be(&empty, 57, 0, 4);  // no records
    reseal(&empty);
    Result<std::vector<Record>> decoded = decode_records(empty);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_TRUE(decoded->empty());
  }
}

TEST(RecordBatch, BuildRejectsImpossibleInput) {
  EXPECT_EQ(build_batch(std::vector<Record>{}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(build_batch({make_record(5, kT0, "a", "1"), make_record(5, kT0, "b", "2")}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(build_batch({make_record(0, kT0, "a", "1"), make_record(int64_t{1} << 31, kT0, "b", "2")})
                .status()
                .code(),
            Code::kInvalidArgument);
  BatchOptions options;
  options.compression = static_cast<Compression>(6);
  EXPECT_EQ(build_batch({make_record(0, kT0, "a", "1")}, options).status().code(), Code::kInvalidArgument);
}

// Rewrites the records section of an uncompressed batch with `records` and reseals it.
Bytes with_section(const Bytes& batch, const Bytes& section) {
  Bytes out(batch.begin(), batch.begin() + kBatchHeaderBytes);
  out.insert(out.end(), section.begin(), section.end());
  reseal(&out);
  return out;
}

TEST(RecordBatch, DecodeIsStrict) {
  const Bytes good = from_hex(golden::kKafkaPythonSmall);
  auto expect_corrupt = [](const Bytes& b, const char* why) {
    Result<std::vector<Record>> r = decode_records(b);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.status().code(), Code::kCorruption) << why;
  };
  Bytes trailing = good;
  trailing.push_back(0);
  expect_corrupt(trailing, "a byte after the batch");
  Bytes more = good;
  patch_be(&more, 57, 4, 4);
  reseal(&more);
  expect_corrupt(more, "count above the records");
  Bytes fewer = good;
  patch_be(&fewer, 57, 2, 4);
  reseal(&fewer);
  expect_corrupt(fewer, "count below the records");
  Bytes short_delta = good;
  patch_be(&short_delta, 23, 1, 4);
  reseal(&short_delta);
  expect_corrupt(short_delta, "an offset delta past last_offset_delta");
  const Bytes section(good.begin() + kBatchHeaderBytes, good.end());
  Bytes inner_trailing = section;
  inner_trailing.push_back(0x00);
  expect_corrupt(with_section(good, inner_trailing), "bytes after the last record");
  Bytes long_length = section;
  long_length[0] = 0x7e;  // record length 63: past the section
  expect_corrupt(with_section(good, long_length), "a record length past the end");
  Bytes long_key = section;
  long_key[4] = 0x7e;  // key length 63: past the record
  expect_corrupt(with_section(good, long_key), "a key length past the record");
  Bytes null_header_key = section;
  null_header_key[11] = 0x01;  // header key length -1
  expect_corrupt(with_section(good, null_header_key), "a null header key");
  Bytes gzip_garbage = good;
  patch_be(&gzip_garbage, 21, 1, 2);
  reseal(&gzip_garbage);
  expect_corrupt(gzip_garbage, "records that do not decompress");
  for (size_t cut = 0; cut < good.size(); ++cut) {
    expect_corrupt(Bytes(good.begin(), good.begin() + cut), "a truncated batch");
  }
}

TEST(RecordBatch, DecodeBoundsTheDeclaredCountBeforeReserving) {
  Bytes huge = from_hex(golden::kKafkaPythonSmall);
  patch_be(&huge, 57, 0x7fffffff, 4);
  patch_be(&huge, 23, 0x7ffffffe, 4);
  reseal(&huge);
  EXPECT_EQ(decode_records(huge).status().code(), Code::kCorruption);  // and no 2^31-record reservation
}

// A header whose last offset (base offset + last offset delta) would pass 2^63 - 1 is corrupt: every layer asks
// for last_offset(), and the sum was undefined (UBSan, found by fuzz/batch_fuzzer.cc through a ListOffsets lookup).
TEST(RecordBatch, AHeaderWhoseLastOffsetPassesTheLargestOffsetIsCorrupt) {
  Bytes batch = from_hex(golden::kKafkaPythonSmall);
  const int64_t delta = parse_batch_header(batch)->last_offset_delta;
  ASSERT_GT(delta, 0);
  set_base_offset(batch, INT64_MAX - delta);  // the largest base offset that still fits
  ASSERT_TRUE(parse_batch_header(batch).ok());
  EXPECT_EQ(parse_batch_header(batch)->last_offset(), INT64_MAX);
  set_base_offset(batch, INT64_MAX - delta + 1);
  Result<BatchHeader> header = parse_batch_header(batch);
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().code(), Code::kCorruption);
  EXPECT_NE(header.status().message().find("past 2^63 - 1"), std::string::npos) << header.status().message();
  size_t consumed = 0;
  EXPECT_FALSE(split_batches(batch, &consumed).ok());
  EXPECT_EQ(consumed, 0u);
}

}  // namespace
}  // namespace sluice::storage
