// validate_produce_batch: one test per Kafka rule with the error code it must give, the real client's batches, and
// RapidCheck properties that random mutations never crash the validator or the decoder (run under ASan).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/storage/record_batch.h"
#include "tests/core/storage/batch_test_util.h"
#include "tests/core/storage/kafka_python_batches.h"

namespace sluice::storage {
namespace {

using namespace testing_batches;  // NOLINT: test helpers

constexpr int64_t kT0 = 1700000000000;

ValidationRules rules_at(int64_t now) {
  ValidationRules rules;
  rules.now_ms = now;
  return rules;
}

Bytes valid_batch(Compression codec = Compression::kNone, std::vector<Record> records = sample_records(0, kT0)) {
  BatchOptions options;
  options.compression = codec;
  Result<Bytes> batch = build_batch(records, options);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? std::move(batch).value() : Bytes();
}

ErrorCode validate(const Bytes& batch, const ValidationRules& rules = rules_at(kT0)) {
  return to_error_code(validate_produce_batch(batch, rules).status());
}

Bytes patched(Bytes batch, size_t offset, uint64_t v, size_t bytes) {
  patch_be(&batch, offset, v, bytes);
  reseal(&batch);
  return batch;
}

TEST(BatchValidation, AcceptsValidBatchesOfEveryCodec) {
  for (Compression codec : kAllCodecs) EXPECT_EQ(validate(valid_batch(codec)), ErrorCode::kNone) << int(codec);
}

TEST(BatchValidation, AcceptsTheKafkaPythonBatches) {
  for (const char* hex : {golden::kKafkaPythonSmall, golden::kKafkaPythonGzip, golden::kKafkaPythonSnappy,
                          golden::kKafkaPythonLz4, golden::kKafkaPythonZstd}) {
    EXPECT_EQ(validate(from_hex(hex)), ErrorCode::kNone);
  }
}

TEST(BatchValidation, FramingErrors) {
  const Bytes good = valid_batch();
  EXPECT_EQ(validate(Bytes()), ErrorCode::kInvalidRecord);                              // no batch at all
  EXPECT_EQ(validate(Bytes(good.begin(), good.begin() + 16)), ErrorCode::kInvalidRecord);
  EXPECT_EQ(validate(Bytes(good.begin(), good.end() - 1)), ErrorCode::kInvalidRecord);  // truncated
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(validate(trailing), ErrorCode::kInvalidRecord);  // not exactly one batch
  Bytes two = good;
  two.insert(two.end(), good.begin(), good.end());
  EXPECT_EQ(validate(two), ErrorCode::kInvalidRecord);
  Bytes magic1 = good;
  magic1[16] = 1;
  EXPECT_EQ(validate(magic1), ErrorCode::kInvalidRecord);
  Bytes short_length = good;
  patch_be(&short_length, 8, 48, 4);  // below the 49 bytes a header needs
  EXPECT_EQ(validate(short_length), ErrorCode::kCorruptMessage);
}

TEST(BatchValidation, BaseOffsetMustBeZero) {
  Bytes batch = valid_batch();
  set_base_offset(batch, 1);
  EXPECT_EQ(validate(batch), ErrorCode::kInvalidRecord);
}

TEST(BatchValidation, LeaderEpochIsIgnored) {
  Bytes batch = valid_batch();
  set_partition_leader_epoch(batch, 77);
  EXPECT_EQ(validate(batch), ErrorCode::kNone);
}

// kafka-protocol.md trap 12: sarama writes -1 as the header's max timestamp. The answer is the records' own max.
TEST(BatchValidation, TheMaxTimestampComesFromTheRecordsNotTheHeader) {
  for (Compression codec : kAllCodecs) {
    const Bytes sent = valid_batch(codec);  // record 4 is the latest, at kT0 + 100
    for (int64_t header_max : {int64_t{-1}, kT0, kT0 + 1000000}) {
      Result<ValidBatch> valid = validate_produce_batch(patched(sent, 35, static_cast<uint64_t>(header_max), 8),
                                                        rules_at(kT0));
      ASSERT_TRUE(valid.ok()) << valid.status().to_string();
      EXPECT_EQ(valid->records_max_timestamp, kT0 + 100) << int(codec) << " header " << header_max;
    }
  }
  // Records without timestamps (-1), or only below -1, leave no max timestamp, as Kafka's starts at -1.
  for (int64_t timestamp : {int64_t{-1}, int64_t{-50}}) {
    const Bytes none = valid_batch(Compression::kNone, {make_record(0, timestamp, "a", "1"),
                                                        make_record(1, timestamp, "b", "2")});
    EXPECT_EQ(validate_produce_batch(patched(none, 35, kT0, 8), rules_at(kT0))->records_max_timestamp, -1);
  }
  // A LogAppendTime batch's records carry its max timestamp (a CreateTime topic accepts one inside the window).
  Bytes lat = valid_batch();
  set_log_append_time(lat, kT0 + 7);
  EXPECT_EQ(validate_produce_batch(lat, rules_at(kT0))->records_max_timestamp, kT0 + 7);
}

TEST(BatchValidation, MessageTooLarge) {
  const Bytes batch = valid_batch();
  ValidationRules rules = rules_at(kT0);
  rules.max_message_bytes = static_cast<int64_t>(batch.size());
  EXPECT_EQ(validate(batch, rules), ErrorCode::kNone);
  rules.max_message_bytes = static_cast<int64_t>(batch.size()) - 1;
  EXPECT_EQ(validate(batch, rules), ErrorCode::kMessageTooLarge);
}

TEST(BatchValidation, CrcMismatchIsCorruptMessage) {
  for (size_t position : {size_t{21}, size_t{40}, size_t{61}, size_t{100}}) {
    Bytes batch = valid_batch();
    batch[position] ^= 0x10;
    EXPECT_EQ(validate(batch), ErrorCode::kCorruptMessage) << position;
  }
  Bytes crc = valid_batch();
  crc[kBatchCrcOffset] ^= 0x01;
  EXPECT_EQ(validate(crc), ErrorCode::kCorruptMessage);
}

TEST(BatchValidation, CountAndLastOffsetDeltaMustAgree) {
  const Bytes good = valid_batch();  // 5 records, last offset delta 4
  EXPECT_EQ(validate(patched(good, 57, 0, 4)), ErrorCode::kInvalidRecord);            // no records
  EXPECT_EQ(validate(patched(good, 57, 0xffffffff, 4)), ErrorCode::kInvalidRecord);   // negative count
  EXPECT_EQ(validate(patched(good, 23, 0xffffffff, 4)), ErrorCode::kInvalidRecord);   // negative delta
  EXPECT_EQ(validate(patched(good, 23, 5, 4)), ErrorCode::kInvalidRecord);            // 6 offsets, 5 records
  EXPECT_EQ(validate(patched(patched(good, 23, 5, 4), 57, 6, 4)), ErrorCode::kInvalidRecord);  // 6 claimed, 5 there
  EXPECT_EQ(validate(patched(patched(good, 23, 3, 4), 57, 4, 4)), ErrorCode::kInvalidRecord);  // 4 claimed, 5 there
}

TEST(BatchValidation, InnerOffsetDeltasMustBeZeroToNMinusOne) {
  // Offsets 0, 2, 3 with the header claiming 3 records over deltas 0..2: consistent header, wrong inner deltas.
  const Bytes gap = valid_batch(Compression::kGzip, {make_record(0, kT0, "a", "1"), make_record(2, kT0, "b", "2"),
                                                     make_record(3, kT0, "c", "3")});
  EXPECT_EQ(validate(gap), ErrorCode::kInvalidRecord);  // last offset delta 3 with 3 records
  EXPECT_EQ(validate(patched(gap, 23, 2, 4)), ErrorCode::kInvalidRecord);
  Status status = validate_produce_batch(patched(gap, 23, 2, 4), rules_at(kT0)).status();
  EXPECT_NE(status.message().find("record 1 has offset delta 2"), std::string::npos) << status.message();
}

TEST(BatchValidation, ClientsMayNotWriteControlBatches) {
  BatchOptions options;
  options.control = true;
  Result<Bytes> batch = build_batch({make_record(0, kT0, "ctl", "x")}, options);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(validate(*batch), ErrorCode::kInvalidRecord);
}

TEST(BatchValidation, ProducerIdNeedsABaseSequence) {
  const std::vector<Record> records = {make_record(0, kT0, "k", "v")};
  BatchOptions options;
  options.producer_id = 5;
  options.base_sequence = -1;
  EXPECT_EQ(validate(build_batch(records, options).value()), ErrorCode::kInvalidRecord);
  options.base_sequence = 0;
  EXPECT_EQ(validate(build_batch(records, options).value()), ErrorCode::kNone);
  options.producer_id = -1;  // kafkajs sends base sequence 0 without a producer id: accepted
  EXPECT_EQ(validate(build_batch(records, options).value()), ErrorCode::kNone);
}

TEST(BatchValidation, CompactedTopicsNeedKeys) {
  ValidationRules rules = rules_at(kT0);
  rules.compacted = true;
  for (Compression codec : kAllCodecs) {
    const Bytes batch = valid_batch(codec);  // record 1 has a null key
    Status status = validate_produce_batch(batch, rules).status();
    EXPECT_EQ(to_error_code(status), ErrorCode::kInvalidRecord) << int(codec);
    EXPECT_NE(status.message().find("record 1 has no key"), std::string::npos) << status.message();
  }
  // A tombstone has a key and an empty key is a key: both are fine.
  const Bytes keyed = valid_batch(Compression::kNone, {make_record(0, kT0, "gone", std::nullopt),
                                                       make_record(1, kT0, "", "v")});
  EXPECT_EQ(validate(keyed, rules), ErrorCode::kNone);
}

TEST(BatchValidation, CreateTimeWindow) {
  const Bytes batch = valid_batch();  // timestamps kT0 - 3 .. kT0 + 100
  ValidationRules rules = rules_at(kT0);
  rules.timestamp_before_max_ms = 3;
  rules.timestamp_after_max_ms = 100;
  EXPECT_EQ(validate(batch, rules), ErrorCode::kNone);  // both ends inclusive
  rules.timestamp_before_max_ms = 2;
  EXPECT_EQ(validate(batch, rules), ErrorCode::kInvalidTimestamp);
  rules.timestamp_before_max_ms = 3;
  rules.timestamp_after_max_ms = 99;
  EXPECT_EQ(validate(batch, rules), ErrorCode::kInvalidTimestamp);
  rules.log_append_time = true;  // the broker's clock decides: client timestamps are not checked
  EXPECT_EQ(validate(batch, rules), ErrorCode::kNone);
}

TEST(BatchValidation, ExtremeTimestampsDoNotOverflow) {
  ValidationRules rules = rules_at(kT0);
  rules.timestamp_before_max_ms = 1000;
  rules.timestamp_after_max_ms = 1000;
  for (int64_t ts : {INT64_MIN, INT64_MAX, int64_t{-2}}) {
    EXPECT_EQ(validate(valid_batch(Compression::kNone, {make_record(0, ts, "k", "v")}), rules),
              ErrorCode::kInvalidTimestamp)
        << ts;
  }
  // -1 is "no timestamp": Kafka skips the window for it.
  EXPECT_EQ(validate(valid_batch(Compression::kNone, {make_record(0, -1, "k", "v")}), rules), ErrorCode::kNone);
  // The default bounds (INT64_MAX, as in Kafka) admit any timestamp within 2^63 - 1 of now, computed exactly.
  for (int64_t ts : {INT64_MAX, -kT0, int64_t{0}}) {
    EXPECT_EQ(validate(valid_batch(Compression::kNone, {make_record(0, ts, "k", "v")})), ErrorCode::kNone) << ts;
  }
}

TEST(BatchValidation, ProducersMayNotSetLogAppendTime) {
  BatchOptions options;
  options.log_append_time = true;
  const Bytes batch = build_batch({make_record(0, kT0, "k", "v")}, options).value();
  ValidationRules rules = rules_at(kT0);
  rules.log_append_time = true;
  EXPECT_EQ(validate(batch, rules), ErrorCode::kInvalidTimestamp);
}

// On a CreateTime topic Kafka checks the timestamp a record reports (a LogAppendTime batch's max timestamp) and
// only refuses the type when that timestamp is missing.
TEST(BatchValidation, ACreateTimeTopicChecksALogAppendTimeBatchByItsMaxTimestamp) {
  BatchOptions options;
  options.log_append_time = true;
  ValidationRules rules = rules_at(kT0);
  rules.timestamp_before_max_ms = 10;
  EXPECT_EQ(validate(build_batch({make_record(0, kT0, "k", "v")}, options).value(), rules), ErrorCode::kNone);
  EXPECT_EQ(validate(build_batch({make_record(0, kT0 - 1000, "k", "v")}, options).value(), rules),
            ErrorCode::kInvalidTimestamp);
  EXPECT_EQ(validate(build_batch({make_record(0, -1, "k", "v")}, options).value(), rules),
            ErrorCode::kInvalidTimestamp);
}

TEST(BatchValidation, TimestampErrorsWinOverKeyErrors) {
  ValidationRules rules = rules_at(kT0);
  rules.compacted = true;
  rules.timestamp_before_max_ms = 10;
  const Bytes batch = valid_batch(Compression::kNone, {make_record(0, kT0, std::nullopt, "v"),
                                                       make_record(1, kT0 - 1000, "k", "v")});
  EXPECT_EQ(validate(batch, rules), ErrorCode::kInvalidTimestamp);
}

TEST(BatchValidation, MalformedRecordsAndCompressionAreInvalidRecord) {
  const Bytes good = valid_batch();
  Bytes garbage_codec = good;
  patch_be(&garbage_codec, 21, 1, 2);  // claims gzip over plain records
  reseal(&garbage_codec);
  EXPECT_EQ(validate(garbage_codec), ErrorCode::kInvalidRecord);
  EXPECT_EQ(validate(patched(good, 21, 5, 2)), ErrorCode::kInvalidRecord);  // codec 5 does not exist
  Bytes bad_record = good;
  bad_record[kBatchHeaderBytes + 4] = 0x7e;  // the first key's length runs past its record
  reseal(&bad_record);
  EXPECT_EQ(validate(bad_record), ErrorCode::kInvalidRecord);
}

// --- properties ---

std::vector<Record> property_records() {
  std::vector<Record> records = sample_records(0, kT0);
  records.pop_back();  // the 70 KB value would soak up nearly every mutation
  return records;
}

const Bytes& base_batch(Compression codec) {
  static const std::vector<Bytes> batches = [] {
    std::vector<Bytes> out;
    for (Compression c : kAllCodecs) out.push_back(valid_batch(c, property_records()));
    return out;
  }();
  return batches[static_cast<size_t>(codec)];
}

rc::Gen<Compression> codec_gen() {
  return rc::gen::elementOf(std::vector<Compression>(std::begin(kAllCodecs), std::end(kAllCodecs)));
}

void mutate(Bytes* batch, const std::vector<std::pair<uint32_t, uint8_t>>& mutations) {
  for (const auto& [position, mask] : mutations) (*batch)[position % batch->size()] ^= mask;
}

bool changed(const Bytes& a, const Bytes& b, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (a[i] != b[i]) return true;
  }
  return false;
}

RC_GTEST_PROP(BatchValidationProperty, MutationsAreRejectedOrOutsideTheCrc, ()) {
  const Compression codec = *codec_gen();
  const auto mutations = *rc::gen::arbitrary<std::vector<std::pair<uint32_t, uint8_t>>>();
  const Bytes& original = base_batch(codec);
  Bytes batch = original;
  mutate(&batch, mutations);
  const bool inside_crc = changed(batch, original, kBatchCrcCoveredFrom, batch.size());
  // Base offset, length and magic are checked before the CRC; the leader epoch (12..15) is not checked at all.
  const bool framing = changed(batch, original, 0, 12) || changed(batch, original, 16, 17);
  const Status status = validate_produce_batch(batch, rules_at(kT0)).status();
  if (inside_crc) RC_ASSERT(!status.ok());
  if (inside_crc && !framing) RC_ASSERT(to_error_code(status) == ErrorCode::kCorruptMessage);
  if (status.ok()) {
    // Only the leader epoch, a no-op flip, or nothing changed; the batch still parses and decodes.
    RC_ASSERT(parse_batch_header(batch).ok());
    Result<std::vector<Record>> records = decode_records(batch);
    RC_ASSERT(records.ok());
    RC_ASSERT(records->size() == property_records().size());
  }
  decode_records(batch).status().ignore();  // must not crash either
}

RC_GTEST_PROP(BatchValidationProperty, MutationsBehindAValidCrcNeverCrash, ()) {
  // Resealing the CRC lets the mutation reach the header fields, the decompressors and the record parser.
  const Compression codec = *codec_gen();
  const auto mutations = *rc::gen::arbitrary<std::vector<std::pair<uint32_t, uint8_t>>>();
  Bytes batch = base_batch(codec);
  mutate(&batch, mutations);
  patch_be(&batch, 8, batch.size() - kBatchLogOverheadBytes, 4);
  batch[16] = static_cast<uint8_t>(kMagicV2);
  patch_be(&batch, kBatchCrcOffset, compute_batch_crc(batch), 4);
  const Status status = validate_produce_batch(batch, rules_at(kT0)).status();
  const ErrorCode code = to_error_code(status);
  RC_ASSERT(code == ErrorCode::kNone || code == ErrorCode::kInvalidRecord || code == ErrorCode::kInvalidTimestamp);
  Result<std::vector<Record>> records = decode_records(batch);
  if (status.ok()) {
    RC_ASSERT(records.ok());
    RC_ASSERT(static_cast<int32_t>(records->size()) == parse_batch_header(batch)->record_count);
  }
}

}  // namespace
}  // namespace sluice::storage
