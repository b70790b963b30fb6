// The cluster metadata records' encoding: every record type round-trips with every field drawn, the layout is the
// one records.h documents, and untrusted bytes (truncated, flipped, forged) are refused with an error or decode to
// the canonical encoding of something, never assert or over-allocate.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "core/cluster/metadata/records.h"
#include "tests/core/cluster/metadata_test_util.h"

namespace sluice::cluster::metadata {
namespace {

using testing::random_batch;
using testing::random_record;

std::string bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

TEST(MetadataRecords, EveryRecordTypeRoundTripsWithRandomFields) {
  Random rng(7);
  for (uint8_t type = 1; type <= kMaxRecordType; ++type) {
    for (int round = 0; round < 200; ++round) {
      const Record record = random_record(rng, static_cast<RecordType>(type));
      ASSERT_EQ(record_type(record), static_cast<RecordType>(type));
      const std::string payload = encode_record(record);
      Result<Batch> decoded = decode_batch(payload);
      ASSERT_TRUE(decoded.ok()) << record_type_name(record_type(record)) << ": " << decoded.status().to_string();
      ASSERT_EQ(decoded->records.size(), 1u);
      EXPECT_EQ(decoded->records[0], record) << record_type_name(record_type(record));
    }
  }
}

TEST(MetadataRecords, BatchesOfSeveralRecordsRoundTripInOrder) {
  Random rng(11);
  for (int round = 0; round < 300; ++round) {
    const Batch batch = random_batch(rng, 8);
    Result<Batch> decoded = decode_batch(encode_batch(batch));
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(*decoded, batch);
  }
}

TEST(MetadataRecords, TheLayoutIsBigEndianWithFormatTypeVersionAndBodyLength) {
  const std::string payload = encode_record(AllocateProducerIds{3, 1000, 1000});
  const std::string expected = bytes({1,                     // batch format
                                      0, 0, 0, 1,            // one record
                                      6, 0,                  // AllocateProducerIds, version 0
                                      0, 0, 0, 16,           // body length
                                      0, 0, 0, 3,            // node id
                                      0, 0, 0, 0, 0, 0, 3, 0xe8,  // first producer id 1000
                                      0, 0, 3, 0xe8});       // count 1000
  EXPECT_EQ(payload, expected);
}

TEST(MetadataRecords, AnOptionalIsAFlagByteAndAStringIsALengthAndItsBytes) {
  const std::string payload = encode_record(RegisterBroker{1, "h", 9092, "r1", 5});
  const std::string body = bytes({0, 0, 0, 1,  // node id
                                  0, 0, 0, 1, 'h',  // host
                                  0, 0, 0x23, 0x84,  // port 9092
                                  1, 0, 0, 0, 2, 'r', '1',  // rack present
                                  0, 0, 0, 0, 0, 0, 0, 5});  // incarnation
  EXPECT_EQ(payload.substr(11), body);
  EXPECT_EQ(payload.substr(5, 6), bytes({1, 0, 0, 0, 0, static_cast<int>(body.size())}));
}

TEST(MetadataRecords, AnEmptyBatchEncodesAndDecodes) {
  EXPECT_EQ(encode_batch(Batch{}), bytes({1, 0, 0, 0, 0}));
  Result<Batch> decoded = decode_batch(bytes({1, 0, 0, 0, 0}));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->records.empty());
}

TEST(MetadataRecords, EveryTruncationIsRefused) {
  Random rng(13);
  for (int round = 0; round < 40; ++round) {
    Batch batch = random_batch(rng, 4);
    batch.records.push_back(random_record(rng));
    const std::string payload = encode_batch(batch);
    for (size_t cut = 0; cut < payload.size(); ++cut) {
      Result<Batch> decoded = decode_batch(std::string_view(payload).substr(0, cut));
      ASSERT_FALSE(decoded.ok()) << "cut at " << cut << " of " << payload.size();
      EXPECT_EQ(decoded.status().code(), Code::kCorruption);
    }
  }
}

TEST(MetadataRecords, TrailingBytesAfterTheBatchOrInsideARecordAreRefused) {
  const std::string payload = encode_record(DeleteTopic{TopicRef{"t", {}}});
  EXPECT_FALSE(decode_batch(payload + '\0').ok());
  // The body claims one byte more than DeleteTopic reads, and the batch holds that byte.
  std::string longer = payload + 'x';
  longer[10] = static_cast<char>(longer[10] + 1);
  Result<Batch> decoded = decode_batch(longer);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("trailing"), std::string::npos) << decoded.status().to_string();
}

TEST(MetadataRecords, UnknownTypesAreCorruptAndNewerVersionsAreNotSupported) {
  std::string payload = encode_record(DeleteTopic{TopicRef{"t", {}}});
  for (int type : {0, kMaxRecordType + 1, 255}) {
    std::string forged = payload;
    forged[5] = static_cast<char>(type);
    Result<Batch> decoded = decode_batch(forged);
    ASSERT_FALSE(decoded.ok()) << type;
    EXPECT_EQ(decoded.status().code(), Code::kCorruption) << type;
  }
  std::string newer_record = payload;
  newer_record[6] = 1;
  EXPECT_EQ(decode_batch(newer_record).status().code(), Code::kNotSupported);
  std::string newer_batch = payload;
  newer_batch[0] = 2;
  EXPECT_EQ(decode_batch(newer_batch).status().code(), Code::kNotSupported);
}

TEST(MetadataRecords, AFlagByteOtherThanZeroOrOneIsRefused) {
  std::string payload = encode_record(RegisterBroker{1, "h", 9092, std::nullopt, 5});
  const size_t rack_flag = 11 + 4 + 5 + 4;
  ASSERT_EQ(payload[rack_flag], 0);
  payload[rack_flag] = 2;
  EXPECT_EQ(decode_batch(payload).status().code(), Code::kCorruption);
}

TEST(MetadataRecords, ConfigNamesOutOfOrderOrRepeatedAreRefused) {
  CreateTopic topic{"t", {}, {{"a", "1"}, {"b", "2"}}, {}};
  std::string payload = encode_record(topic);
  const size_t first_name = payload.find('a');
  const size_t second_name = payload.find('b');
  ASSERT_NE(first_name, std::string::npos);
  ASSERT_NE(second_name, std::string::npos);
  std::string swapped = payload;
  std::swap(swapped[first_name], swapped[second_name]);
  EXPECT_EQ(decode_batch(swapped).status().code(), Code::kCorruption) << "b before a";
  std::string repeated = payload;
  repeated[second_name] = 'a';
  EXPECT_EQ(decode_batch(repeated).status().code(), Code::kCorruption) << "a twice";
}

TEST(MetadataRecords, AForgedCountLargerThanTheInputIsRefusedBeforeAllocating) {
  // A batch claiming 2^32 - 1 records in five bytes, and a CreateTopic claiming 2^32 - 1 partitions.
  EXPECT_EQ(decode_batch(bytes({1, 0xff, 0xff, 0xff, 0xff})).status().code(), Code::kCorruption);
  std::string payload = encode_record(CreateTopic{"t", {}, {}, {}});
  payload.replace(payload.size() - 4, 4, bytes({0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(decode_batch(payload).status().code(), Code::kCorruption);
}

// Any bytes: decoding either refuses them or yields records whose encoding is exactly those bytes (the encoding is
// canonical), and it never asserts.
RC_GTEST_PROP(MetadataRecordsProperty, GarbageIsRefusedOrCanonical, (const std::vector<uint8_t>& garbage)) {
  std::string payload(garbage.begin(), garbage.end());
  if (*rc::gen::arbitrary<bool>()) payload.insert(0, 1, static_cast<char>(kBatchFormat));
  Result<Batch> decoded = decode_batch(payload);
  if (decoded.ok()) RC_ASSERT(encode_batch(*decoded) == payload);
}

// A valid batch with some bytes overwritten: refused, or decodes to a batch that encodes back to the damaged bytes.
RC_GTEST_PROP(MetadataRecordsProperty, DamagedBatchesAreRefusedOrCanonical, (uint64_t seed)) {
  Random rng(seed);
  std::string payload = encode_batch(random_batch(rng, 5));
  const size_t flips = *rc::gen::inRange<size_t>(1, 4);
  for (size_t i = 0; i < flips; ++i) {
    payload[rng.uniform(payload.size())] = static_cast<char>(rng.uniform(256));
  }
  Result<Batch> decoded = decode_batch(payload);
  if (decoded.ok()) RC_ASSERT(encode_batch(*decoded) == payload);
}

RC_GTEST_PROP(MetadataRecordsProperty, RandomBatchesRoundTrip, (uint64_t seed)) {
  Random rng(seed);
  const Batch batch = random_batch(rng, 6);
  Result<Batch> decoded = decode_batch(encode_batch(batch));
  RC_ASSERT(decoded.ok());
  RC_ASSERT(*decoded == batch);
}

}  // namespace
}  // namespace sluice::cluster::metadata
