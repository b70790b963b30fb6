// Follower forwarding (issue 22 step 4; core/kafka/produce_forwarder.h) with three simulated brokers in cluster
// mode: a Produce at a node that does not lead the partition (a replica of it, or a node without one) is forwarded
// to the leader and answered as the leader answers, for acks=all, 1 and 0, and every record is readable at the
// leader at the offsets answered; the follower-drops-acks0 mutation loses the acks=0 records, and this test sees
// it; a forwarded request is never forwarded again; a node that knows no leader, or cannot reach it, answers
// NOT_LEADER_OR_FOLLOWER.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/mutations.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/cluster_test_util.h"

namespace sluice::kafka::testing {
namespace {

const std::vector<int32_t> kAll{1, 2, 3};

void create(Env env, int32_t at, const std::string& name, int16_t replication_factor) {
  KafkaClient client = connect(env, at);
  protocol::CreateTopicsRequest::Topic topic = new_topic(name);
  topic.replication_factor = replication_factor;
  const protocol::CreateTopicsResponse created = create_topics(client, {topic});
  ASSERT_EQ(created.topics.size(), 1u);
  ASSERT_EQ(created.topics[0].error_code, 0) << created.topics[0].error_message.value_or("");
}

ProduceRequest produce_request(const std::string& topic, int count, int16_t acks) {
  ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = 10000;
  request.topic_data.push_back({topic, {{0, protocol::Records::own(make_records(count))}}});
  return request;
}

// acks=0: nothing comes back. The connection stays open a moment, as a client's would.
void produce_without_acks(Env env, int32_t id, const std::string& topic, int count) {
  KafkaClient client = connect(env, id);
  const Status sent = client.send(produce_request(topic, count, 0), 8);
  ASSERT_TRUE(sent.ok()) << sent.to_string();
  env.scheduler.sleep_for(100ms);
}

// The data offsets node `id` serves, once it serves at least `want` (or after 5 s of trying).
std::vector<int64_t> served_offsets(Env env, int32_t id, const std::string& topic, size_t want) {
  std::vector<int64_t> offsets;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto [error, served] = fetch_all(env, id, topic);
    offsets = std::move(served);
    if (error == 0 && offsets.size() >= want) break;
    env.scheduler.sleep_for(100ms);
  }
  return offsets;
}

// Produces acks=all (5 records), acks=1 (3) and acks=0 (4) to a new topic at a node that does not lead it, checks
// the answers and that the leader serves the acks=all and acks=1 records at the answered offsets. True when the
// acks=0 records reached the leader too, right after them.
bool produce_through_a_follower(KafkaCluster& c, const std::string& topic, int16_t replication_factor) {
  bool acks0_arrived = false;
  EXPECT_TRUE(c.on_client([&](Env env) {
    create(env, 1, topic, replication_factor);
    if (::testing::Test::HasFatalFailure()) return;
    const int32_t leader = agreed_leader(env, kAll, topic);
    ASSERT_GE(leader, 1);
    const int32_t follower = leader % 3 + 1;
    EXPECT_EQ(c.broker(follower)->partitions().find({topic, 0}) != nullptr, replication_factor == 3);

    const ProduceResponse::PartitionResponse all_acks = produce(env, follower, topic, 5, -1);
    ASSERT_EQ(all_acks.error_code, 0) << all_acks.error_message.value_or("");
    EXPECT_GE(all_acks.base_offset, 1) << "after the leader's LeaderChange batch";
    const ProduceResponse::PartitionResponse one_ack = produce(env, follower, topic, 3, 1);
    ASSERT_EQ(one_ack.error_code, 0) << one_ack.error_message.value_or("");
    EXPECT_EQ(one_ack.base_offset, all_acks.base_offset + 5);
    produce_without_acks(env, follower, topic, 4);

    const std::vector<int64_t> answered = joined(range(all_acks.base_offset, all_acks.base_offset + 5),
                                                 range(one_ack.base_offset, one_ack.base_offset + 3));
    const std::vector<int64_t> served = served_offsets(env, leader, topic, 12);
    ASSERT_GE(served.size(), answered.size());
    EXPECT_EQ(std::vector<int64_t>(served.begin(), served.begin() + 8), answered);
    acks0_arrived = served == joined(answered, range(one_ack.base_offset + 3, one_ack.base_offset + 7));
    EXPECT_GE(c.broker(follower)->cluster()->forwarder().forwarded(), 2u);
  }));
  return acks0_arrived;
}

// Creates `topic` (one partition on all three nodes) and crashes its leader and one more node: the node left up,
// -1 when the topic got no leader. Without a quorum, its replica knows no leader once its election timeout passes.
int32_t leave_one_replica_up(KafkaCluster& c, const std::string& topic) {
  if (!c.run_until([&] { return c.registered(kAll); })) return -1;
  int32_t leader = -1;
  if (!c.on_client([&](Env env) {
        create(env, 1, topic, 3);
        if (!::testing::Test::HasFatalFailure()) leader = agreed_leader(env, kAll, topic);
      })) {
    return -1;
  }
  if (leader < 1) return -1;
  const int32_t survivor = leader % 3 + 1;
  for (int32_t id : kAll) {
    if (id != survivor) c.crash(id);
  }
  return survivor;
}

const std::vector<uint64_t> kSeeds{5, 11, 23, 42};

TEST(ProduceForwarding, AFollowerForwardsAcksAllOneAndZeroToTheLeader) {
  for (const uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    KafkaCluster c(3, seed);
    ASSERT_TRUE(c.run_until([&] { return c.registered(kAll); }));
    EXPECT_TRUE(produce_through_a_follower(c, "replicated", 3)) << "a replica that is not the leader forwards";
    EXPECT_TRUE(produce_through_a_follower(c, "single", 1)) << "a node without a replica forwards";
  }
}

TEST(ProduceForwarding, TheFollowerDropsAcks0MutationIsCaught) {
  MutationSet mutations;
  mutations.add(Mutation::kFollowerDropsAcks0);
  for (const uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    KafkaCluster c(3, seed, mutations);
    ASSERT_TRUE(c.run_until([&] { return c.registered(kAll); }));
    EXPECT_FALSE(produce_through_a_follower(c, "replicated", 3)) << "the acks=0 records never reach the leader";
  }
}

TEST(ProduceForwarding, AForwardedProduceIsNeverForwardedAgain) {
  KafkaCluster c;
  ASSERT_TRUE(c.run_until([&] { return c.registered(kAll); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    create(env, 1, "orders", 3);
    if (::testing::Test::HasFatalFailure()) return;
    const int32_t leader = agreed_leader(env, kAll, "orders");
    ASSERT_GE(leader, 1);
    KafkaClient client = connect(env, leader % 3 + 1);
    client.set_client_id("sluice-forward/" + std::to_string(leader));
    auto response = client.call<ProduceResponse>(produce_request("orders", 2, -1), 8);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    ASSERT_EQ(response->responses.size(), 1u);
    ASSERT_EQ(response->responses[0].partition_responses.size(), 1u);
    EXPECT_EQ(response->responses[0].partition_responses[0].error_code, kNotLeaderOrFollower);
    EXPECT_EQ(c.broker(leader % 3 + 1)->cluster()->forwarder().forwarded(), 0u);
  }));
}

TEST(ProduceForwarding, WithoutAReachableLeaderAFollowerAnswersNotLeaderOrFollower) {
  KafkaCluster c;
  const int32_t survivor = leave_one_replica_up(c, "orders");
  ASSERT_GE(survivor, 1);
  ASSERT_TRUE(c.on_client([&](Env env) {
    // The survivor has no quorum: its replica knows no leader once its election timeout passes, and the metadata
    // still names the dead one.
    env.scheduler.sleep_for(2s);
    for (const int16_t acks : {int16_t{-1}, int16_t{1}}) {
      const ProduceResponse::PartitionResponse answer = produce(env, survivor, "orders", 1, acks);
      EXPECT_EQ(answer.error_code, kNotLeaderOrFollower) << "acks=" << acks << ": "
                                                         << answer.error_message.value_or("");
    }
  }));
}

TEST(ProduceForwarding, WhileNoLeaderIsKnownAFollowerAnswersNotLeaderOrFollowerWithoutForwarding) {
  KafkaCluster c;
  ASSERT_TRUE(c.run_until([&] { return c.registered(kAll); }));
  c.crash(3);  // registered, but down: a partition placed only on it never gets a leader
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, 1);
    protocol::CreateTopicsRequest::Topic orphan = new_topic("orphan");
    orphan.num_partitions = -1;
    orphan.replication_factor = -1;
    orphan.assignments.push_back({.partition_index = 0, .broker_ids = {3}});
    const protocol::CreateTopicsResponse created = create_topics(client, {orphan});
    ASSERT_EQ(created.topics.size(), 1u);
    ASSERT_EQ(created.topics[0].error_code, 0) << created.topics[0].error_message.value_or("");
    for (const int16_t acks : {int16_t{-1}, int16_t{1}}) {
      const ProduceResponse::PartitionResponse answer = produce(env, 1, "orphan", 1, acks);
      EXPECT_EQ(answer.error_code, kNotLeaderOrFollower) << "acks=" << acks;
      EXPECT_EQ(answer.error_message.value_or("").find("forwarding"), std::string::npos)
          << "nothing to forward to: " << answer.error_message.value_or("");
    }
    EXPECT_EQ(c.broker(1)->cluster()->forwarder().forwarded(), 0u);
  }));
}

// An acks=0 produce reaching a node whose replica knows no leader (an election in progress) waits for one rather
// than drop the records, since its client never learns of a failure: here the two other nodes are down when it
// arrives and come back while it waits, and the leader they elect serves the records.
TEST(ProduceForwarding, AnAcks0ProduceDuringAnElectionWaitsForTheLeader) {
  KafkaCluster c;
  const int32_t survivor = leave_one_replica_up(c, "orders");
  ASSERT_GE(survivor, 1);
  ASSERT_TRUE(c.on_client([&](Env env) {
    env.scheduler.sleep_for(2s);  // past the survivor's election timeout: its replica knows no leader
    ASSERT_NE(c.broker(survivor)->partitions().find({"orders", 0}), nullptr);
    EXPECT_LT(c.broker(survivor)->partitions().find({"orders", 0})->leader(), 0);
    produce_without_acks(env, survivor, "orders", 4);
  }));
  for (int32_t id : kAll) {
    if (id != survivor) c.boot(id);  // the two come back while the produce waits
  }
  ASSERT_TRUE(c.on_client([&](Env env) {
    const int32_t elected = agreed_leader(env, kAll, "orders");
    ASSERT_GE(elected, 1);
    EXPECT_EQ(served_offsets(env, elected, "orders", 4).size(), 4u) << "the acks=0 records reached the new leader";
  }));
}

}  // namespace
}  // namespace sluice::kafka::testing
