// Produce to `persisted` topics through a simulated broker: an answer comes only after its records are synced,
// requests pipelined on one connection share sync rounds and are answered in order, idempotent retries wait for
// their original's sync, and a failed sync answers KAFKA_STORAGE_ERROR.
#include <gtest/gtest.h>

#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ApiVersionsRequest;
using protocol::ApiVersionsResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;
using protocol::Records;

constexpr int kPipelined = 20;
constexpr int kPastTheQueueBound = 600;  // answers queued per connection: at most 256

Bytes one_record_batch(storage::BatchOptions options = {}) {
  storage::Record record;
  record.timestamp = 1700000000000;
  record.key = Bytes{'k'};
  record.value = Bytes(100, 'v');
  Result<Bytes> batch = storage::build_batch({record}, options);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? *batch : Bytes();
}

ProduceRequest request_for(const std::string& topic, const Bytes& batch, int16_t acks = -1) {
  ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = 30000;
  request.topic_data.push_back({topic, {{0, Records::own(batch)}}});
  return request;
}

BrokerHarness persisted_harness() {
  BrokerConfig config;
  config.storage.topic_defaults.durability = storage::Durability::kPersisted;
  return BrokerHarness(1, config);
}

// The partition's one answer, and the log's recovery point when the answer arrived.
struct Answer {
  int16_t error_code = -100;
  int64_t base_offset = -1;
  int64_t recovery_point = -1;
};

Answer receive_answer(KafkaClient& client, Broker& broker, const std::string& topic) {
  Answer answer;
  auto response = client.receive<ProduceResponse>(protocol::ApiKey::kProduce, 8);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok()) return answer;
  const ProduceResponse::PartitionResponse& partition = response->responses.at(0).partition_responses.at(0);
  answer.error_code = partition.error_code;
  answer.base_offset = partition.base_offset;
  storage::PartitionLog* log = broker.logs().find({topic, 0});
  if (log != nullptr) answer.recovery_point = log->recovery_point();
  return answer;
}

TEST(PersistedProduce, PipelinedProducesShareSyncRoundsAndAreAnsweredInOrderAfterTheirSync) {
  BrokerHarness harness = persisted_harness();
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(env, {"p"});
    ASSERT_TRUE(client.send(request_for("p", one_record_batch()), 8).ok());
    ASSERT_EQ(receive_answer(client, broker, "p").error_code, 0);
    storage::PartitionLog* log = broker.logs().find({"p", 0});
    ASSERT_NE(log, nullptr);
    const uint64_t rounds_before = log->stats().sync_rounds;
    for (int i = 0; i < kPipelined; ++i) ASSERT_TRUE(client.send(request_for("p", one_record_batch()), 8).ok());
    ASSERT_TRUE(client.send(ApiVersionsRequest{}, 3).ok());  // a ready answer behind waiting ones
    for (int i = 0; i < kPipelined; ++i) {
      const Answer answer = receive_answer(client, broker, "p");
      EXPECT_EQ(answer.error_code, 0);
      EXPECT_EQ(answer.base_offset, i + 1) << "answers in request order";
      EXPECT_GT(answer.recovery_point, answer.base_offset) << "answered only once synced";
      EXPECT_EQ(client.last_correlation_id(), i + 2);
    }
    ASSERT_TRUE(client.receive<ApiVersionsResponse>(protocol::ApiKey::kApiVersions, 3).ok());
    EXPECT_EQ(client.last_correlation_id(), kPipelined + 2);
    const uint64_t rounds = log->stats().sync_rounds - rounds_before;
    EXPECT_GE(rounds, 1u);
    EXPECT_LT(rounds, static_cast<uint64_t>(kPipelined) / 2) << "pipelined appends share sync rounds";
    EXPECT_EQ(log->high_watermark(), kPipelined + 1);
  }));
}

// More requests than a connection queues answers for: the reader stops at the bound and goes on as answers leave.
TEST(PersistedProduce, PipeliningPastTheQueueBoundAnswersEveryRequestInOrder) {
  BrokerHarness harness = persisted_harness();
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"b"});
    int answered = 0;
    FiberRef reader = env.scheduler.spawn("answers", [&] {
      for (int i = 0; i < kPastTheQueueBound; ++i) {
        const Answer answer = receive_answer(client, broker, "b");
        if (answer.error_code != 0 || answer.base_offset != i) {
          ADD_FAILURE() << "answer " << i << ": error " << answer.error_code << ", offset " << answer.base_offset;
          return;
        }
        ++answered;
      }
    });
    for (int i = 0; i < kPastTheQueueBound; ++i) ASSERT_TRUE(client.send(request_for("b", one_record_batch()), 8).ok());
    env.scheduler.join(reader);
    EXPECT_EQ(answered, kPastTheQueueBound);
    EXPECT_EQ(broker.logs().find({"b", 0})->high_watermark(), kPastTheQueueBound);
  }));
}

// A client that goes away with answers still queued loses nothing it was told, and the broker carries on.
TEST(PersistedProduce, AClientLeavingWithAnswersQueuedLeavesTheBrokerServing) {
  BrokerHarness harness = persisted_harness();
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"g"});
    {
      KafkaClient leaving = BrokerHarness::connect(env);
      for (int i = 0; i < 50; ++i) ASSERT_TRUE(leaving.send(request_for("g", one_record_batch()), 8).ok());
      leaving.stream().close();
    }
    env.scheduler.sleep_for(1s);
    ASSERT_TRUE(client.send(request_for("g", one_record_batch()), 8).ok());
    const Answer answer = receive_answer(client, broker, "g");
    EXPECT_EQ(answer.error_code, 0);
    storage::PartitionLog* log = broker.logs().find({"g", 0});
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(answer.base_offset, log->log_end_offset() - 1);
    EXPECT_EQ(log->recovery_point(), log->log_end_offset()) << "every append was synced";
    EXPECT_EQ(broker.open_connections(), 1u);
  }));
}

TEST(PersistedProduce, AReplicatedTopicIsAnsweredWithoutWaitingForASync) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"r"});
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.send(request_for("r", one_record_batch()), 8).ok());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(receive_answer(client, broker, "r").base_offset, i);
    EXPECT_EQ(broker.logs().find({"r", 0})->stats().sync_rounds, 0u);
  }));
}

TEST(PersistedProduce, AnIdempotentRetryIsAnsweredOnlyOnceItsOriginalIsSynced) {
  BrokerHarness harness = persisted_harness();
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"i"});
    storage::BatchOptions idempotent;
    idempotent.producer_id = 7;
    idempotent.producer_epoch = 0;
    idempotent.base_sequence = 0;
    const Bytes batch = one_record_batch(idempotent);
    ASSERT_TRUE(client.send(request_for("i", batch), 8).ok());
    ASSERT_TRUE(client.send(request_for("i", batch), 8).ok());  // the retry, before the original's answer
    for (int i = 0; i < 2; ++i) {
      const Answer answer = receive_answer(client, broker, "i");
      EXPECT_EQ(answer.error_code, 0);
      EXPECT_EQ(answer.base_offset, 0) << "the retry gets the original's offset";
      EXPECT_GE(answer.recovery_point, 1);
    }
    EXPECT_EQ(broker.logs().find({"i", 0})->log_end_offset(), 1) << "appended once";
  }));
}

TEST(PersistedProduce, AFailedSyncAnswersKafkaStorageError) {
  BrokerHarness harness = persisted_harness();
  harness.allow_failed_close();  // the partition is offline
  ASSERT_TRUE(harness.run([&harness](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"f"});
    ASSERT_TRUE(client.send(request_for("f", one_record_batch()), 8).ok());
    ASSERT_EQ(receive_answer(client, broker, "f").error_code, 0);
    harness.server().disk().fail_next(DiskOp::kSync, 1000, "data/f-0");
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.send(request_for("f", one_record_batch()), 8).ok());
    for (int i = 0; i < 3; ++i) {
      const Answer answer = receive_answer(client, broker, "f");
      EXPECT_EQ(answer.error_code, 56) << "request " << i;
      EXPECT_EQ(answer.recovery_point, 1) << "nothing after the failure counts as durable";
    }
    EXPECT_EQ(broker.logs().find({"f", 0})->high_watermark(), 1) << "consumers never see the unsynced records";
  }));
}

TEST(PersistedProduce, AcksZeroProducesSendNothingAndTheNextAnswerFollows) {
  BrokerHarness harness = persisted_harness();
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(env, {"z"});
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.send(request_for("z", one_record_batch(), 0), 8).ok());
    ASSERT_TRUE(client.send(request_for("z", one_record_batch()), 8).ok());
    const Answer answer = receive_answer(client, broker, "z");
    EXPECT_EQ(answer.base_offset, 5);
    EXPECT_EQ(client.last_correlation_id(), 6) << "no frame for the acks=0 requests";
    EXPECT_EQ(answer.recovery_point, 6);
  }));
}

}  // namespace
}  // namespace sluice::kafka
