// The produce path's planted bug (core/base/mutations.h) really bites: the same pipelined produces, without the
// mutation and with it, get the same answers, but with it they are answered before their records are appended.
#include <gtest/gtest.h>

#include "core/protocol/messages/produce.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

ProduceRequest two_records_to(const std::string& topic, const Bytes& batch) {
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 30000;
  request.topic_data.push_back({topic, {{0, protocol::Records::own(batch)}}});
  return request;
}

// Two produces of two records each, pipelined on one connection: the base offsets answered, the log end as each
// answer arrives, and the log end a while later.
struct Produced {
  std::vector<int64_t> bases;
  std::vector<int64_t> log_end_at_answer;
  int64_t log_end_later = -1;
};

Produced produce_twice(const MutationSet& mutations) {
  BrokerConfig config;
  config.mutations = mutations;
  BrokerHarness harness(1, config);
  Produced out;
  EXPECT_TRUE(harness.run([&](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    const Bytes batch = make_records(2);
    ASSERT_TRUE(client.send(two_records_to("t", batch), 8).ok());
    ASSERT_TRUE(client.send(two_records_to("t", batch), 8).ok());
    for (int i = 0; i < 2; ++i) {
      Result<ProduceResponse> answer = client.receive<ProduceResponse>(protocol::ApiKey::kProduce, 8);
      ASSERT_TRUE(answer.ok()) << answer.status().to_string();
      const ProduceResponse::PartitionResponse& partition = answer->responses.at(0).partition_responses.at(0);
      EXPECT_EQ(partition.error_code, 0);
      out.bases.push_back(partition.base_offset);
      out.log_end_at_answer.push_back(broker.logs().find({"t", 0})->log_end_offset());
    }
    env.scheduler.sleep_for(cluster::DeferredAppends::kDelay * 5);
    out.log_end_later = broker.logs().find({"t", 0})->log_end_offset();
  }));
  return out;
}

TEST(KafkaMutations, AckBeforeAppendAnswersWithTheOffsetsBeforeTheRecordsAreAppended) {
  const Produced right = produce_twice({});
  EXPECT_EQ(right.bases, (std::vector<int64_t>{0, 2}));
  ASSERT_EQ(right.log_end_at_answer.size(), 2u);
  EXPECT_GE(right.log_end_at_answer[0], 2) << "each answered after its own append";
  EXPECT_EQ(right.log_end_at_answer[1], 4);
  EXPECT_EQ(right.log_end_later, 4);
  MutationSet planted;
  planted.add(Mutation::kAckBeforeAppend);
  const Produced early = produce_twice(planted);
  EXPECT_EQ(early.bases, (std::vector<int64_t>{0, 2})) << "the offsets the appends get";
  EXPECT_EQ(early.log_end_at_answer, (std::vector<int64_t>{0, 0})) << "answered before anything was appended";
  EXPECT_EQ(early.log_end_later, 4) << "appended a little later";
}

}  // namespace
}  // namespace sluice::kafka
