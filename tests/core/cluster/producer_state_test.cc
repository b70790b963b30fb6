// Idempotent producers: the rules of one partition (PartitionProducers) as Kafka 3.9's ProducerAppendInfo and
// ProducerStateEntry apply them. Through a Partition: tests/core/cluster/partition_test.cc; through a simulated
// broker, with InitProducerId and a restart: tests/core/kafka/idempotent_produce_test.cc.
#include <gtest/gtest.h>

#include <limits>

#include "core/cluster/producer_state.h"
#include "core/protocol/error_codes.h"

namespace sluice::cluster {
namespace {

using storage::BatchHeader;

BatchHeader batch(int64_t producer_id, int16_t epoch, int32_t base_sequence, int32_t records,
                  int64_t base_offset = 0) {
  BatchHeader header;
  header.producer_id = producer_id;
  header.producer_epoch = epoch;
  header.base_sequence = base_sequence;
  header.record_count = records;
  header.last_offset_delta = records - 1;
  header.base_offset = base_offset;
  header.max_timestamp = 1000;
  return header;
}

ErrorCode error_of(const Result<std::optional<ProducerBatch>>& result) {
  return result.ok() ? ErrorCode::kNone : to_error_code(result.status());
}

bool appends(const PartitionProducers& producers, const BatchHeader& header) {
  Result<std::optional<ProducerBatch>> result = producers.check(header);
  return result.ok() && !result->has_value();
}

TEST(ProducerState, LastSequenceWrapsAfterInt32Max) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(last_sequence(batch(1, 0, 10, 5)), 14);
  EXPECT_EQ(last_sequence(batch(1, 0, kMax, 1)), kMax);
  EXPECT_EQ(last_sequence(batch(1, 0, kMax, 2)), 0);
  EXPECT_EQ(last_sequence(batch(1, 0, kMax - 1, 4)), 1);
  EXPECT_EQ(last_sequence(batch(-1, -1, -1, 3)), -1);
}

TEST(ProducerState, AnUnknownProducerMayStartAtAnySequence) {
  PartitionProducers producers;
  EXPECT_TRUE(appends(producers, batch(1, 0, 0, 1)));
  EXPECT_TRUE(appends(producers, batch(1, 0, 57, 1))) << "state lost to retention: Kafka accepts, no error 59";
  EXPECT_TRUE(appends(producers, batch(1, 3, 9, 1)));
}

TEST(ProducerState, SequencesMustFollowOnWithinAnEpoch) {
  PartitionProducers producers;
  producers.record(batch(1, 0, 0, 3, 0), 1000, 1000);  // sequences 0..2
  EXPECT_TRUE(appends(producers, batch(1, 0, 3, 2)));
  EXPECT_EQ(error_of(producers.check(batch(1, 0, 4, 1))), ErrorCode::kOutOfOrderSequenceNumber) << "a gap";
  EXPECT_EQ(error_of(producers.check(batch(1, 0, 1, 1))), ErrorCode::kOutOfOrderSequenceNumber)
      << "overlaps but is not one of the batches";
  EXPECT_TRUE(appends(producers, batch(2, 0, 7, 1))) << "other producers are independent";
}

TEST(ProducerState, SequencesWrapToZero) {
  PartitionProducers producers;
  producers.record(batch(1, 0, std::numeric_limits<int32_t>::max() - 1, 2, 0), 1000, 1000);
  EXPECT_TRUE(appends(producers, batch(1, 0, 0, 1)));
  EXPECT_EQ(error_of(producers.check(batch(1, 0, 1, 1))), ErrorCode::kOutOfOrderSequenceNumber);
}

TEST(ProducerState, ARetryOfOneOfTheLastFiveBatchesIsADuplicate) {
  PartitionProducers producers;
  for (int i = 0; i < 7; ++i) producers.record(batch(1, 0, i * 2, 2, 100 + i * 2), 1000 + i, 1000);
  ASSERT_EQ(producers.find(1)->batches.size(), kProducerBatchesRetained);
  for (int i = 2; i < 7; ++i) {
    Result<std::optional<ProducerBatch>> result = producers.check(batch(1, 0, i * 2, 2));
    ASSERT_TRUE(result.ok() && result->has_value()) << "batch " << i;
    EXPECT_EQ((*result)->first_offset, 100 + i * 2);
    EXPECT_EQ((*result)->last_offset, 101 + i * 2);
    EXPECT_EQ((*result)->timestamp, 1000 + i);
  }
  EXPECT_EQ(error_of(producers.check(batch(1, 0, 2, 2))), ErrorCode::kOutOfOrderSequenceNumber)
      << "older than the last five: Kafka no longer knows it";
  EXPECT_EQ(error_of(producers.check(batch(1, 0, 12, 1))), ErrorCode::kOutOfOrderSequenceNumber)
      << "same first sequence, different last: not the same batch";
}

TEST(ProducerState, AnOlderEpochIsFencedAndANewerOneRestartsAtZero) {
  PartitionProducers producers;
  producers.record(batch(1, 2, 0, 5, 0), 1000, 1000);
  EXPECT_EQ(error_of(producers.check(batch(1, 1, 5, 1))), ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(error_of(producers.check(batch(1, 1, 0, 5))), ErrorCode::kInvalidProducerEpoch)
      << "a retry from the old epoch is not a duplicate";
  EXPECT_EQ(error_of(producers.check(batch(1, 3, 5, 1))), ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_TRUE(appends(producers, batch(1, 3, 0, 1)));
  producers.record(batch(1, 3, 0, 1, 5), 1000, 1000);
  EXPECT_EQ(producers.find(1)->epoch, 3);
  EXPECT_EQ(producers.find(1)->batches.size(), 1u) << "the new epoch forgets the old batches";
  EXPECT_EQ(error_of(producers.check(batch(1, 2, 5, 1))), ErrorCode::kInvalidProducerEpoch);
}

TEST(ProducerState, ForgetsProducersBelowTheLogStartOrExpired) {
  PartitionProducers producers;
  producers.record(batch(1, 0, 0, 1, 10), /*timestamp=*/1, /*now_ms=*/5000);
  producers.record(batch(2, 0, 0, 1, 20), /*timestamp=*/1, /*now_ms=*/5000);
  producers.record(batch(3, 0, 0, 1, 30), /*timestamp=*/9000, /*now_ms=*/100);
  producers.forget(/*log_start_offset=*/15, /*expire_before_ms=*/1000);
  EXPECT_EQ(producers.find(1), nullptr) << "its last batch was deleted";
  EXPECT_NE(producers.find(2), nullptr) << "old record timestamps, but seen recently";
  EXPECT_EQ(producers.find(3), nullptr) << "not seen since before the expiry";
  EXPECT_TRUE(appends(producers, batch(1, 0, 40, 1))) << "a forgotten producer starts afresh";
}

}  // namespace
}  // namespace sluice::cluster
