// Admin on a simulated three-broker cluster beyond CreateTopics and DeleteTopics (cluster_mode_test.cc):
// CreatePartitions proposed at a follower of the metadata, its new partitions placed on every replica with the
// topic's replication factor, led, and taking records; a manual assignment held to Kafka's rules. And
// auto.leader.rebalance: leadership goes back to a partition's preferred replica once it is in sync again.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/protocol/messages/create_partitions.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/cluster_test_util.h"

namespace sluice::kafka::testing {
namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;

constexpr int16_t kInvalidReplicaAssignment = 39;

CreatePartitionsResponse::Result grow(Env env, int32_t node, const std::string& topic, int32_t count,
                                      std::optional<std::vector<CreatePartitionsRequest::Assignment>> assignments) {
  KafkaClient client = connect(env, node);
  CreatePartitionsRequest request;
  request.topics.push_back({topic, count, std::move(assignments)});
  request.timeout_ms = 10000;
  auto response = client.call<CreatePartitionsResponse>(request, 3);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->results.size() != 1) return {topic, -100, "no answer"};
  return response->results[0];
}

// Every partition's leader in node `id`'s Metadata answer (-1 for one without).
std::vector<int32_t> leaders_seen_by(Env env, int32_t id, const std::string& topic) {
  KafkaClient client = connect(env, id);
  MetadataRequest request;
  request.topics->push_back({.name = topic});
  auto response = client.call<MetadataResponse>(request, 9);
  std::vector<int32_t> leaders;
  if (!response.ok() || response->topics.size() != 1) return leaders;
  for (const MetadataResponse::Partition& partition : response->topics[0].partitions) {
    leaders.push_back(partition.error_code == 0 ? partition.leader_id : -1);
  }
  return leaders;
}

// acks=all Produce of `count` records to `partition` at node `id` (forwarded to its leader), retried while the
// partition has no leader yet. The answer's error code (0: acknowledged).
int16_t produce_to(Env env, int32_t id, const std::string& topic, int32_t partition, int count) {
  int16_t error = -100;
  for (int attempt = 0; attempt < 100; ++attempt) {
    KafkaClient client = connect(env, id);
    ProduceRequest request;
    request.acks = -1;
    request.timeout_ms = 10000;
    request.topic_data.push_back({topic, {{partition, protocol::Records::own(make_records(count))}}});
    auto response = client.call<ProduceResponse>(request, 8);
    if (response.ok() && response->responses.size() == 1 && response->responses[0].partition_responses.size() == 1) {
      error = response->responses[0].partition_responses[0].error_code;
      if (error == 0) return error;
    }
    env.scheduler.sleep_for(100ms);
  }
  return error;
}

TEST(ClusterAdmin, CreatePartitionsAtAMetadataFollowerPlacesLeadsAndTakesRecords) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  int32_t follower = -1;
  for (int32_t id : all) {
    if (c.broker(id)->cluster()->node().metadata_leader() != static_cast<raft::NodeId>(id)) follower = id;
  }
  ASSERT_GE(follower, 1);
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, follower);
    protocol::CreateTopicsRequest::Topic orders = new_topic("orders");
    orders.replication_factor = 3;
    ASSERT_EQ(create_topics(client, {orders}).topics[0].error_code, 0);

    // Two replicas where the topic has three: Kafka's INVALID_REPLICA_ASSIGNMENT, and nothing changes.
    const CreatePartitionsResponse::Result refused =
        grow(env, follower, "orders", 2, std::vector<CreatePartitionsRequest::Assignment>{{{1, 2}}});
    EXPECT_EQ(refused.error_code, kInvalidReplicaAssignment) << refused.error_message.value_or("");
    EXPECT_EQ(c.broker(follower)->topics().find("orders")->partitions, 1);

    const CreatePartitionsResponse::Result placed = grow(env, follower, "orders", 3, std::nullopt);
    ASSERT_EQ(placed.error_code, 0) << placed.error_message.value_or("");
    EXPECT_EQ(c.broker(follower)->topics().find("orders")->partitions, 3) << "the answer waits for the local table";
    const CreatePartitionsResponse::Result manual =
        grow(env, follower, "orders", 4, std::vector<CreatePartitionsRequest::Assignment>{{{3, 1, 2}}});
    ASSERT_EQ(manual.error_code, 0) << manual.error_message.value_or("");

    for (int32_t p = 0; p < 4; ++p) EXPECT_EQ(produce_to(env, follower, "orders", p, 3), 0) << "partition " << p;
    for (int32_t id : all) {
      const std::vector<int32_t> leaders = leaders_seen_by(env, id, "orders");
      ASSERT_EQ(leaders.size(), 4u) << "node " << id;
      for (int32_t leader : leaders) EXPECT_GE(leader, 1) << "node " << id;
    }
  }));
  for (int32_t id : all) {
    for (int32_t p = 0; p < 4; ++p) {
      const std::shared_ptr<cluster::Partition> replica = c.broker(id)->partitions().find({"orders", p});
      ASSERT_NE(replica, nullptr) << "node " << id << " partition " << p;
      EXPECT_TRUE(replica->replicated());
    }
    EXPECT_EQ(c.broker(id)->cluster()->image().topic("orders")->partitions[3].replicas, (std::vector<int32_t>{3, 1, 2}))
        << "the manual assignment, in its order (the first is the preferred leader)";
  }
}

// The partition's preferred leader (its first replica) in node `id`'s metadata image.
int32_t preferred_leader(KafkaCluster& c, int32_t id, const std::string& topic) {
  return c.broker(id)->cluster()->image().topic(topic)->partitions[0].preferred_leader();
}

// Creates `topic` (3 replicas) and makes another replica lead it while its preferred leader is up and in sync: when
// the first election chose the preferred one, kills it, waits for another leader and boots it again.
struct Failover {
  int32_t preferred = -1;
  int32_t interim = -1;  // the leader while the preferred replica came back
};

Failover lead_elsewhere(KafkaCluster& c, const std::string& topic) {
  const std::vector<int32_t> all{1, 2, 3};
  Failover out;
  EXPECT_TRUE(c.run_until([&] { return c.registered(all); }));
  EXPECT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, 1);
    protocol::CreateTopicsRequest::Topic created = new_topic(topic);
    created.replication_factor = 3;
    ASSERT_EQ(create_topics(client, {created}).topics[0].error_code, 0);
    out.preferred = preferred_leader(c, 1, topic);
    out.interim = agreed_leader(env, all, topic);
  }));
  if (out.interim != out.preferred || out.preferred < 1) return out;
  c.crash(out.preferred);
  std::vector<int32_t> survivors;
  for (int32_t id : all) {
    if (id != out.preferred) survivors.push_back(id);
  }
  EXPECT_TRUE(c.on_client([&](Env env) { out.interim = agreed_leader(env, survivors, topic, out.preferred); }));
  EXPECT_GE(out.interim, 1);
  c.boot(out.preferred);
  EXPECT_TRUE(c.run_until([&] { return c.registered(all); }));
  return out;
}

TEST(ClusterAdmin, LeadershipReturnsToThePreferredReplicaOnceItIsInSync) {
  KafkaCluster c(3, 5, {}, [](BrokerConfig& config) { config.leader_imbalance_check_interval = 2s; });
  const Failover failover = lead_elsewhere(c, "orders");
  ASSERT_GE(failover.interim, 1);
  ASSERT_NE(failover.interim, failover.preferred);
  ASSERT_TRUE(c.on_client([&](Env env) {
    EXPECT_EQ(agreed_leader(env, {1, 2, 3}, "orders", failover.interim), failover.preferred);
    EXPECT_EQ(produce(env, failover.preferred, "orders", 4).error_code, 0) << "the preferred replica leads again";
  }));
  EXPECT_GE(c.broker(failover.interim)->cluster()->stats().leadership_handed_back, 1u);
}

// Kafka's controller makes a new partition's preferred replica its leader; here that replica campaigns as it joins
// the new group, and a first leader elected otherwise (the preferred replica joined after the others) hands the
// partition over, auto.leader.rebalance or not. Without it, the node that created its partitions first (the
// metadata leader) won most elections: leaders { 1, 2, 2, 1, 2, 2 } here, node 3 leading nothing.
TEST(ClusterAdmin, NewPartitionsStartLedByTheirPreferredReplicas) {
  KafkaCluster c(3, 11, {}, [](BrokerConfig& config) { config.auto_leader_rebalance_enable = false; });
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, 1);
    protocol::CreateTopicsRequest::Topic created = new_topic("spread", 6);
    created.replication_factor = 3;
    ASSERT_EQ(create_topics(client, {created}).topics[0].error_code, 0);
    const auto& partitions = c.broker(2)->cluster()->image().topic("spread")->partitions;
    std::vector<int32_t> preferred;
    for (const auto& partition : partitions) preferred.push_back(partition.preferred_leader());
    std::vector<int32_t> leaders;
    for (int attempt = 0; attempt < 100 && leaders != preferred; ++attempt) {
      env.scheduler.sleep_for(100ms);
      leaders = leaders_seen_by(env, 2, "spread");
    }
    EXPECT_EQ(leaders, preferred);
    EXPECT_EQ(std::set<int32_t>(leaders.begin(), leaders.end()).size(), 3u) << "the placement spreads them";
  }));
  uint64_t handed_over = 0;
  for (int32_t id : all) handed_over += c.broker(id)->cluster()->stats().new_partitions_handed_over;
  EXPECT_GE(handed_over, 1u) << "in this seed node 3 joined first and campaigned before the others had the groups";
}

TEST(ClusterAdmin, WithoutAutoLeaderRebalanceTheLeadershipStays) {
  KafkaCluster c(3, 5, {}, [](BrokerConfig& config) {
    config.leader_imbalance_check_interval = 2s;
    config.auto_leader_rebalance_enable = false;
  });
  const Failover failover = lead_elsewhere(c, "orders");
  ASSERT_GE(failover.interim, 1);
  ASSERT_NE(failover.interim, failover.preferred);
  ASSERT_TRUE(c.on_client([&](Env env) {
    env.scheduler.sleep_for(10s);
    EXPECT_EQ(agreed_leader(env, {1, 2, 3}, "orders"), failover.interim);
  }));
  EXPECT_EQ(c.broker(failover.interim)->cluster()->stats().leadership_handed_back, 0u);
}

}  // namespace
}  // namespace sluice::kafka::testing
