// Idempotent producers: the rules of one partition (PartitionProducers) as Kafka 3.9's ProducerAppendInfo and
// ProducerStateEntry apply them, then InitProducerId and idempotent Produce through a simulated broker, across a
// restart.
#include <gtest/gtest.h>

#include <limits>

#include "core/kafka/producer_state.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/produce.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
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


// ---- Through the broker ----

using protocol::InitProducerIdRequest;
using protocol::InitProducerIdResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;
using namespace testing;

// `count` records from producer `id` at `epoch`, first sequence `sequence`.
Bytes idempotent_batch(int64_t id, int16_t epoch, int32_t sequence, int count = 1) {
  std::vector<storage::Record> records(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    records[static_cast<size_t>(i)].offset = i;
    records[static_cast<size_t>(i)].timestamp = 1700000000000 + i;
    records[static_cast<size_t>(i)].value = Bytes{'v', static_cast<uint8_t>(i)};
  }
  storage::BatchOptions options;
  options.producer_id = id;
  options.producer_epoch = epoch;
  options.base_sequence = sequence;
  Result<Bytes> built = storage::build_batch(records, options);
  EXPECT_TRUE(built.ok());
  return built.ok() ? *built : Bytes();
}

struct Answer {
  int16_t error_code = -100;
  int64_t base_offset = -100;
};

Answer send(KafkaClient& client, const Bytes& batch, int16_t version = 7) {
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 1000;
  request.topic_data.push_back({"idem", {{0, protocol::Records::own(batch)}}});
  auto response = client.call<ProduceResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok()) return {};
  const auto& partition = response->responses.at(0).partition_responses.at(0);
  return {partition.error_code, partition.base_offset};
}

int64_t new_producer_id(KafkaClient& client, int16_t version = 4) {
  auto response = client.call<InitProducerIdResponse>(InitProducerIdRequest{}, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok()) return -1;
  EXPECT_EQ(response->error_code, 0);
  EXPECT_EQ(response->producer_epoch, 0);
  return response->producer_id;
}

int64_t log_end(Broker& broker) { return broker.logs().find({"idem", 0})->log_end_offset(); }

TEST(InitProducerId, HandsOutNewIdsAtEveryVersionAndRefusesTransactionalIds) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    int64_t last = -1;
    for (int16_t version = 0; version <= 5; ++version) {
      const int64_t id = new_producer_id(client, version);
      EXPECT_GT(id, last) << "v" << version;
      last = id;
    }
    InitProducerIdRequest bump;
    bump.producer_id = last;
    bump.producer_epoch = 0;
    EXPECT_GT(new_producer_id(client, 4), last) << "a null transactional id always gets a new id, epoch 0";
    for (const char* txn : {"my-txn", ""}) {
      InitProducerIdRequest transactional;
      transactional.transactional_id = txn;
      auto refused = client.call<InitProducerIdResponse>(transactional, 4);
      ASSERT_TRUE(refused.ok());
      EXPECT_EQ(refused->error_code, 53) << "TRANSACTIONAL_ID_AUTHORIZATION_FAILED";
      EXPECT_EQ(refused->producer_id, -1);
      EXPECT_EQ(refused->producer_epoch, -1);
    }
  }));
}

TEST(InitProducerId, IdsNeverRepeatAcrossRestarts) {
  BrokerHarness harness;
  std::vector<int64_t> ids;
  for (int run = 0; run < 3; ++run) {
    ASSERT_TRUE(harness.run([&ids](Env, KafkaClient& client, Broker&) {
      for (int i = 0; i < 3; ++i) ids.push_back(new_producer_id(client));
    }));
  }
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i], ids[i - 1]) << "allocation " << i;
  EXPECT_EQ(ids[3], kProducerIdBlockSize) << "a restart skips the rest of the reserved block";
}

TEST(IdempotentProduce, ARetriedBatchGetsItsOriginalOffsetAndIsNotAppendedAgain) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"idem"});
    const int64_t id = new_producer_id(client);
    const Bytes first = idempotent_batch(id, 0, 0, 3);
    EXPECT_EQ(send(client, first).base_offset, 0);
    EXPECT_EQ(send(client, idempotent_batch(id, 0, 3, 2)).base_offset, 3);
    const Answer retry = send(client, first, 8);
    EXPECT_EQ(retry.error_code, 0) << "NONE, not DUPLICATE_SEQUENCE_NUMBER";
    EXPECT_EQ(retry.base_offset, 0);
    EXPECT_EQ(log_end(broker), 5);
    EXPECT_EQ(send(client, idempotent_batch(id, 0, 5)).base_offset, 5);
  }));
}

TEST(IdempotentProduce, OutOfOrderSequencesAndOldEpochsAreRefused) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"idem"});
    const int64_t id = new_producer_id(client);
    ASSERT_EQ(send(client, idempotent_batch(id, 1, 0, 2)).error_code, 0);
    const Answer gap = send(client, idempotent_batch(id, 1, 5));
    EXPECT_EQ(gap.error_code, 45);
    EXPECT_EQ(gap.base_offset, -1);
    EXPECT_EQ(send(client, idempotent_batch(id, 0, 2)).error_code, 47) << "fenced: an older epoch";
    EXPECT_EQ(send(client, idempotent_batch(id, 2, 2)).error_code, 45) << "a new epoch starts at 0";
    EXPECT_EQ(log_end(broker), 2);
    EXPECT_EQ(send(client, idempotent_batch(id, 2, 0)).base_offset, 2) << "a new epoch resets";
    EXPECT_EQ(send(client, idempotent_batch(id, 1, 2)).error_code, 47);
    EXPECT_EQ(send(client, idempotent_batch(id, 2, 1)).base_offset, 3);
  }));
}

TEST(IdempotentProduce, StateSurvivesARestart) {
  BrokerHarness harness;
  int64_t id = -1;
  ASSERT_TRUE(harness.run([&id](Env, KafkaClient& client, Broker&) {
    auto_create(client, {"idem"});
    id = new_producer_id(client);
    for (int i = 0; i < 7; ++i) ASSERT_EQ(send(client, idempotent_batch(id, 0, i * 2, 2)).base_offset, i * 2);
  }));
  ASSERT_TRUE(harness.run([&id](Env, KafkaClient& client, Broker& broker) {
    for (int i = 2; i < 7; ++i) {
      const Answer retry = send(client, idempotent_batch(id, 0, i * 2, 2));
      EXPECT_EQ(retry.error_code, 0);
      EXPECT_EQ(retry.base_offset, i * 2) << "the original offset, rebuilt from the log";
    }
    EXPECT_EQ(log_end(broker), 14);
    EXPECT_EQ(send(client, idempotent_batch(id, 0, 16)).error_code, 45);
    EXPECT_EQ(send(client, idempotent_batch(id, 0, 14)).base_offset, 14);
    auto producers = broker.producers().producers({"idem", 0});
    ASSERT_TRUE(producers.ok());
    EXPECT_EQ((*producers)->find(id)->batches.size(), kProducerBatchesRetained);
  }));
}

}  // namespace
}  // namespace sluice::kafka
