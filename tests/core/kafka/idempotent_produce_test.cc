// Idempotent producers through a simulated broker: InitProducerId, and idempotent Produce (retries, sequences,
// epochs), across a restart. The per-partition rules alone: tests/core/cluster/producer_state_test.cc.
#include <gtest/gtest.h>

#include "core/cluster/producer_state.h"
#include "core/kafka/producer_ids.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/produce.h"
#include "tests/core/kafka/kafka_test_util.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::kafka {
namespace {

using protocol::InitProducerIdRequest;
using protocol::InitProducerIdResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;
using namespace testing;
using storage::log_testing::idempotent_batch;

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
    auto producers = broker.partitions().find({"idem", 0})->producers();
    ASSERT_TRUE(producers.ok());
    EXPECT_EQ((*producers)->find(id)->batches.size(), cluster::kProducerBatchesRetained);
  }));
}

}  // namespace
}  // namespace sluice::kafka
