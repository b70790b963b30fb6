// The cleaner's batch-level pieces (cleaner_batches.h): a batch that survives whole is copied byte for byte, a
// partly surviving one is rebuilt exactly as decoding it and calling build_batch on the survivors would (offsets,
// timestamps, headers, codec and producer fields kept), the key map sees only [from, to), and the log streams in
// bounded chunks.
#include "core/storage/cleaner_batches.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/core/storage/batch_test_util.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace testing_batches;
using log_testing::OneNode;

constexpr int64_t kNow = 1767225600000;

// Each record's key as the latest at its own offset: everything survives unless a test says otherwise.
KeyOffsetMap map_of(const std::vector<Record>& records) {
  KeyOffsetMap map(uint64_t{24} << 10, 0.9);
  for (const Record& r : records) {
    if (r.key.has_value()) {
      EXPECT_TRUE(map.put(*r.key, r.offset));
    }
  }
  return map;
}

CleanRules rules_with(const KeyOffsetMap& map, int64_t cleaned_end = INT64_MAX) {
  CleanRules rules;
  rules.map = &map;
  rules.cleaned_end = cleaned_end;
  rules.now_ms = kNow;
  rules.horizon_ms = kNow + 86400000;
  return rules;
}

BatchOptions producer_options(Compression codec) {
  BatchOptions options;
  options.compression = codec;
  options.producer_id = 77;
  options.producer_epoch = 3;
  options.base_sequence = 10;
  options.partition_leader_epoch = 5;
  options.transactional = true;
  return options;
}

// Keyed records with headers, out-of-order timestamps and a gap in the offsets (a batch compacted before).
std::vector<Record> keyed_records(int64_t base) {
  std::vector<Record> records;
  records.push_back(make_record(base, kNow - 50, "k0", "v0", {{"h", to_bytes("x")}}));
  records.push_back(make_record(base + 1, kNow - 90, "k1", "v1"));
  records.push_back(make_record(base + 3, kNow - 10, "k3", "v3", {{"a", std::nullopt}, {"bb", Bytes()}}));
  records.push_back(make_record(base + 4, kNow - 70, "k4", std::string(3000, 'z')));
  records.push_back(make_record(base + 6, kNow - 20, "k6", ""));
  return records;
}

struct Filtered {
  Bytes out;
  FilterTally tally;
};

Filtered run_filter(ByteView batch, const CleanRules& rules) {
  Filtered result;
  const BatchHeader header = parse_batch_header(batch).value();
  BatchFilter filter(rules);
  const Status status = filter.filter(batch, header, &result.out, &result.tally);
  EXPECT_TRUE(status.ok()) << status.to_string();
  return result;
}

TEST(CleanerBatches, ABatchThatSurvivesWholeIsCopiedByteForByte) {
  for (Compression codec : kAllCodecs) {
    const std::vector<Record> records = keyed_records(100);
    const Bytes batch = build_batch(records, producer_options(codec)).value();
    const KeyOffsetMap map = map_of(records);
    const Filtered f = run_filter(batch, rules_with(map));
    EXPECT_EQ(f.out, batch) << static_cast<int>(codec);
    EXPECT_FALSE(f.tally.changed);
    EXPECT_EQ(f.tally.removed, 0);
    EXPECT_EQ(f.tally.rebuilt, 0);
  }
}

TEST(CleanerBatches, APartlySurvivingBatchIsWhatBuildBatchMakesOfTheSurvivors) {
  for (Compression codec : kAllCodecs) {
    const std::vector<Record> records = keyed_records(100);
    const BatchOptions options = producer_options(codec);
    const Bytes batch = build_batch(records, options).value();
    KeyOffsetMap map = map_of(records);
    ASSERT_TRUE(map.put(to_bytes("k1"), 500));  // superseded later in the log
    ASSERT_TRUE(map.put(to_bytes("k4"), 501));
    const Filtered f = run_filter(batch, rules_with(map));
    EXPECT_TRUE(f.tally.changed);
    EXPECT_EQ(f.tally.removed, 2);
    EXPECT_EQ(f.tally.rebuilt, 1);
    const std::vector<Record> survivors = {records[0], records[2], records[4]};
    EXPECT_EQ(f.out, build_batch(survivors, options).value()) << static_cast<int>(codec);
    ASSERT_TRUE(batch_crc_ok(f.out));
    const BatchHeader header = parse_batch_header(f.out).value();
    EXPECT_EQ(header.compression(), codec);
    EXPECT_EQ(header.producer_id, 77);
    EXPECT_EQ(header.producer_epoch, 3);
    EXPECT_EQ(header.base_sequence, 10);
    EXPECT_EQ(header.partition_leader_epoch, 5);
    EXPECT_TRUE(header.transactional());
    EXPECT_FALSE(header.has_delete_horizon());
    EXPECT_EQ(header.base_offset, 100);
    EXPECT_EQ(header.last_offset(), 106);
    EXPECT_EQ(header.max_timestamp, kNow - 10);
    expect_same_records(decode_records(f.out).value(), survivors);
  }
}

TEST(CleanerBatches, DroppingTheFirstRecordRebasesOffsetsAndTimestamps) {
  for (Compression codec : {Compression::kNone, Compression::kLz4}) {
    const std::vector<Record> records = keyed_records(40);
    const Bytes batch = build_batch(records, producer_options(codec)).value();
    KeyOffsetMap map = map_of(records);
    ASSERT_TRUE(map.put(to_bytes("k0"), 900));
    ASSERT_TRUE(map.put(to_bytes("k6"), 901));
    const Filtered f = run_filter(batch, rules_with(map));
    const std::vector<Record> survivors = {records[1], records[2], records[3]};
    const BatchHeader header = parse_batch_header(f.out).value();
    EXPECT_EQ(header.base_offset, 41);
    EXPECT_EQ(header.last_offset(), 44);
    EXPECT_EQ(header.base_timestamp, kNow - 90);
    EXPECT_EQ(header.max_timestamp, kNow - 10);
    // Record timestamps below and above the new base both come back exactly.
    expect_same_records(decode_records(f.out).value(), survivors);
    EXPECT_EQ(f.out, build_batch(survivors, producer_options(codec)).value());
  }
}

TEST(CleanerBatches, LogAppendTimeSurvivorsKeepTheBatchTimestamp) {
  const std::vector<Record> records = keyed_records(0);
  BatchOptions options = producer_options(Compression::kNone);
  options.log_append_time = true;
  Bytes batch = build_batch(records, options).value();
  set_log_append_time(batch, kNow - 5);
  KeyOffsetMap map = map_of(records);
  ASSERT_TRUE(map.put(to_bytes("k0"), 900));
  const Filtered f = run_filter(batch, rules_with(map));
  const BatchHeader header = parse_batch_header(f.out).value();
  EXPECT_TRUE(header.log_append_time());
  EXPECT_EQ(header.max_timestamp, kNow - 5);
  const std::vector<Record> decoded = decode_records(f.out).value();
  ASSERT_EQ(decoded.size(), 4u);
  for (const Record& r : decoded) EXPECT_EQ(r.timestamp, kNow - 5);
  EXPECT_EQ(decoded.front().offset, 1);
}

TEST(CleanerBatches, ARetainedTombstoneGetsTheDeleteHorizon) {
  const std::vector<Record> records = {make_record(7, kNow - 30, "a", "1"),
                                       make_record(8, kNow - 20, "b", std::nullopt)};
  const Bytes batch = build_batch(records, producer_options(Compression::kGzip)).value();
  const KeyOffsetMap map = map_of(records);
  const CleanRules rules = rules_with(map);
  const Filtered f = run_filter(batch, rules);
  EXPECT_TRUE(f.tally.changed);
  EXPECT_EQ(f.tally.removed, 0);
  const BatchHeader header = parse_batch_header(f.out).value();
  EXPECT_TRUE(header.has_delete_horizon());
  EXPECT_EQ(header.base_timestamp, rules.horizon_ms);
  EXPECT_EQ(header.compression(), Compression::kGzip);
  BatchOptions options = producer_options(Compression::kGzip);
  options.delete_horizon_ms = rules.horizon_ms;
  EXPECT_EQ(f.out, build_batch(records, options).value());
}

TEST(CleanerBatches, TombstonesGoOnceTheHorizonHasPassed) {
  const std::vector<Record> records = {make_record(7, kNow - 30, "a", "1"),
                                       make_record(8, kNow - 20, "b", std::nullopt)};
  BatchOptions options = producer_options(Compression::kNone);
  options.delete_horizon_ms = kNow + 1;
  const Bytes before_horizon = build_batch(records, options).value();
  const KeyOffsetMap map = map_of(records);
  EXPECT_EQ(run_filter(before_horizon, rules_with(map)).out, before_horizon) << "not yet: the batch stays as it is";

  options.delete_horizon_ms = kNow;
  const Bytes past_horizon = build_batch(records, options).value();
  const Filtered f = run_filter(past_horizon, rules_with(map));
  EXPECT_EQ(f.tally.removed, 1);
  const BatchHeader header = parse_batch_header(f.out).value();
  EXPECT_TRUE(header.has_delete_horizon());
  EXPECT_EQ(header.base_timestamp, kNow);
  const std::vector<Record> decoded = decode_records(f.out).value();
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].offset, 7);
  EXPECT_EQ(f.out, build_batch({decoded[0]}, options).value());
}

TEST(CleanerBatches, NoSurvivorsLeaveNothingAndUnkeyedRecordsGo) {
  const std::vector<Record> records = {make_record(3, kNow, std::nullopt, "x"), make_record(4, kNow, "k", "old")};
  const Bytes batch = build_batch(records, producer_options(Compression::kSnappy)).value();
  KeyOffsetMap map(uint64_t{24} << 6, 0.9);
  ASSERT_TRUE(map.put(to_bytes("k"), 9));
  const Filtered f = run_filter(batch, rules_with(map));
  EXPECT_TRUE(f.out.empty());
  EXPECT_TRUE(f.tally.changed);
  EXPECT_EQ(f.tally.removed, 2);
  EXPECT_EQ(f.tally.rebuilt, 0);
}

TEST(CleanerBatches, OnlyRecordsBelowTheCleanedEndAreJudged) {
  const std::vector<Record> records = keyed_records(10);  // offsets 10, 11, 13, 14, 16
  const Bytes batch = build_batch(records, producer_options(Compression::kNone)).value();
  KeyOffsetMap map(uint64_t{24} << 6, 0.9);
  for (const char* key : {"k0", "k1", "k3", "k4", "k6"}) ASSERT_TRUE(map.put(to_bytes(key), 99));
  // A batch from the cleaned end on is not looked into.
  EXPECT_EQ(run_filter(batch, rules_with(map, 10)).out, batch);
  // One straddling it keeps its records at or above the end, whatever the map says.
  const Filtered f = run_filter(batch, rules_with(map, 14));
  EXPECT_EQ(f.tally.removed, 3);
  expect_same_records(decode_records(f.out).value(), {records[3], records[4]});
}

TEST(CleanerBatches, ControlBatchesAreCopiedAsTheyAre) {
  BatchOptions options = producer_options(Compression::kNone);
  options.control = true;
  const Bytes batch = build_batch({make_record(5, kNow, "ctl", "marker")}, options).value();
  KeyOffsetMap map(uint64_t{24} << 6, 0.9);
  ASSERT_TRUE(map.put(to_bytes("ctl"), 50));
  const Filtered f = run_filter(batch, rules_with(map));
  EXPECT_EQ(f.out, batch);
  EXPECT_FALSE(f.tally.changed);
}

TEST(CleanerBatches, OffsetDeltasBeyondTheHeaderAreCorruption) {
  Bytes batch = build_batch({make_record(0, kNow, "a", "1"), make_record(1, kNow, "b", "2")}).value();
  patch_be(&batch, 23, 0, 4);  // last_offset_delta 0, but the second record says 1
  reseal(&batch);
  const BatchHeader header = parse_batch_header(batch).value();
  KeyOffsetMap map(uint64_t{24} << 6, 0.9);
  Bytes out;
  FilterTally tally;
  BatchFilter filter(rules_with(map));
  EXPECT_EQ(filter.filter(batch, header, &out, &tally).code(), Code::kCorruption);
  Bytes scratch;
  EXPECT_EQ(map_batch_keys(batch, header, 0, 10, map, scratch).status().code(), Code::kCorruption);
}

TEST(CleanerBatches, MapBatchKeysTakesTheKeysInRangeUntilTheMapIsFull) {
  for (Compression codec : {Compression::kNone, Compression::kZstd}) {
    std::vector<Record> records = keyed_records(20);  // offsets 20, 21, 23, 24, 26
    records.push_back(make_record(27, kNow, std::nullopt, "unkeyed"));
    const Bytes batch = build_batch(records, producer_options(codec)).value();
    const BatchHeader header = parse_batch_header(batch).value();
    Bytes scratch;
    KeyOffsetMap map(uint64_t{24} << 6, 0.9);
    EXPECT_TRUE(map_batch_keys(batch, header, 21, 26, map, scratch).value());
    EXPECT_EQ(map.size(), 3u);
    EXPECT_FALSE(map.get(to_bytes("k0")).has_value());
    EXPECT_EQ(map.get(to_bytes("k1")), 21);
    EXPECT_EQ(map.get(to_bytes("k4")), 24);
    EXPECT_FALSE(map.get(to_bytes("k6")).has_value());
    EXPECT_EQ(map.latest_offset(), 24);

    KeyOffsetMap tiny(24 * 3, 1.0);  // two keys fit
    EXPECT_FALSE(map_batch_keys(batch, header, 0, 100, tiny, scratch).value());
    EXPECT_EQ(tiny.size(), 2u);
    EXPECT_EQ(tiny.latest_offset(), 21) << "a partial pass ends after the last key that went in";
  }
}

TEST(CleanerBatches, TheStreamReadsInBoundedChunksFromTheBatchHoldingFrom) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = log_testing::small_settings();
    settings.segment_bytes = 4 << 20;
    auto log = PartitionLog::open(env, "p0", settings).value();
    // 400 batches of 4 records and ~10 KiB: about four chunks.
    for (int i = 0; i < 400; ++i) {
      std::vector<Record> records;
      for (int r = 0; r < 4; ++r) {
        records.push_back(make_record(r, kNow, "k" + std::to_string(r), std::string(2500, 'v')));
      }
      ASSERT_TRUE(log->append(build_batch(records).value()).ok());
    }
    ASSERT_GT(static_cast<double>(log->segments().front().size_bytes), 3.5 * kCleanerChunkBytes);
    BatchStream stream(*log, 402, 1203);  // inside batch 100 .. the batch 300 reaching 1203 is excluded
    ByteView batch;
    BatchHeader header;
    std::vector<int64_t> bases;
    while (stream.next(&batch, &header).value()) {
      ASSERT_EQ(batch.size(), header.size_bytes());
      ASSERT_TRUE(batch_crc_ok(batch));
      bases.push_back(header.base_offset);
    }
    ASSERT_EQ(bases.size(), 200u);
    EXPECT_EQ(bases.front(), 400);
    EXPECT_EQ(bases.back(), 1196);
    for (size_t i = 1; i < bases.size(); ++i) ASSERT_EQ(bases[i], bases[i - 1] + 4);
    ASSERT_TRUE(log->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
