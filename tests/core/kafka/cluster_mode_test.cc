// Cluster mode end to end in the simulator (issue 22's boot path): three brokers booted through broker::Node with
// node.id and controller.quorum.voters, each on its own simulated disk and network endpoint, and a client node
// speaking the Kafka wire protocol to whichever broker a step names. CreateTopics on a follower of the metadata,
// every node naming the same partition leader, acks=all produce and fetch at the leader, a produce at a follower
// forwarded to the leader and a fetch there answered NOT_LEADER_OR_FOLLOWER, the leader's node killed and a new
// leader serving every acknowledged record, DeleteTopics removing the partitions on every node (the killed one too,
// once it restarts and catches up). The cluster and its helpers: cluster_test_util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_cluster.h"
#include "core/protocol/messages/find_coordinator.h"
#include "core/protocol/messages/init_producer_id.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/cluster_test_util.h"

namespace sluice::kafka::testing {
namespace {

constexpr int16_t kInvalidReplicationFactor = 38;

int32_t metadata_follower(KafkaCluster& c) {
  for (int32_t id = 1; id <= c.size(); ++id) {
    if (c.broker(id)->cluster()->node().metadata_leader() != static_cast<raft::NodeId>(id)) return id;
  }
  return -1;
}

void create_produce_fail_over_and_delete(uint64_t seed) {
  KafkaCluster c(3, seed);
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  const int32_t follower = metadata_follower(c);
  ASSERT_GE(follower, 1);

  int32_t leader = -1;
  int64_t first_base = -1;
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, follower);
    protocol::CreateTopicsRequest::Topic too_many = new_topic("wide");
    too_many.replication_factor = 4;
    protocol::CreateTopicsResponse refused = create_topics(client, {too_many});
    ASSERT_EQ(refused.topics.size(), 1u);
    EXPECT_EQ(refused.topics[0].error_code, kInvalidReplicationFactor);

    protocol::CreateTopicsRequest::Topic orders = new_topic("orders");
    orders.replication_factor = 3;
    protocol::CreateTopicsResponse created = create_topics(client, {orders});
    ASSERT_EQ(created.topics.size(), 1u);
    ASSERT_EQ(created.topics[0].error_code, 0) << created.topics[0].error_message.value_or("");
    EXPECT_EQ(created.topics[0].replication_factor, 3);
    EXPECT_NE(c.broker(follower)->topics().find("orders"), nullptr) << "the answer waits for the local table";

    leader = agreed_leader(env, all, "orders");
    ASSERT_GE(leader, 1);
    const ProduceResponse::PartitionResponse first = produce(env, leader, "orders", 5);
    EXPECT_EQ(first.error_code, 0);
    EXPECT_GE(first.base_offset, 1) << "after the leader's LeaderChange batch";
    first_base = first.base_offset;
    const ProduceResponse::PartitionResponse second = produce(env, leader, "orders", 3);
    EXPECT_EQ(second.error_code, 0);
    EXPECT_EQ(second.base_offset, first_base + 5);
    const auto [error, offsets] = fetch_all(env, leader, "orders");
    EXPECT_EQ(error, 0);
    EXPECT_EQ(offsets, range(first_base, first_base + 8));

    const int32_t not_leader = leader == 1 ? 2 : 1;
    const ProduceResponse::PartitionResponse forwarded = produce(env, not_leader, "orders", 1);
    EXPECT_EQ(forwarded.error_code, 0) << "forwarded to the leader (produce_forwarding_test.cc)";
    EXPECT_EQ(forwarded.base_offset, first_base + 8);
    EXPECT_EQ(fetch_all(env, not_leader, "orders").first, kNotLeaderOrFollower);
  }));
  ASSERT_GE(leader, 1);
  for (int32_t id : all) {
    ASSERT_NE(c.broker(id)->partitions().find({"orders", 0}), nullptr) << "node " << id << " is a replica";
    EXPECT_TRUE(c.broker(id)->partitions().find({"orders", 0})->replicated());
  }

  c.crash(leader);
  std::vector<int32_t> survivors;
  for (int32_t id : all) {
    if (id != leader) survivors.push_back(id);
  }
  int32_t new_leader = -1;
  ASSERT_TRUE(c.on_client([&](Env env) {
    new_leader = agreed_leader(env, survivors, "orders", leader);
    ASSERT_GE(new_leader, 1);
    // The new leader's LeaderChange batch now ends the committed log: a consumer sees neither it nor an end past
    // it (kafka-python 2.0.2 would return it as a record; a caught-up consumer would show a lag of 1).
    env.scheduler.sleep_for(1s);
    const FetchedFrom tail = fetch_from(env, new_leader, "orders", first_base + 9);
    EXPECT_EQ(tail.error, 0);
    EXPECT_TRUE(tail.offsets.empty());
    EXPECT_EQ(tail.control_batches, 0);
    EXPECT_EQ(tail.high_watermark, first_base + 9) << "the end is after the last data record";
    const ProduceResponse::PartitionResponse after = produce(env, new_leader, "orders", 2);
    EXPECT_EQ(after.error_code, 0);
    EXPECT_GT(after.base_offset, first_base + 8) << "the new records follow every acknowledged one";
    const auto [error, offsets] = fetch_all(env, new_leader, "orders");
    EXPECT_EQ(error, 0);
    EXPECT_EQ(offsets, joined(range(first_base, first_base + 9), range(after.base_offset, after.base_offset + 2)))
        << "every acknowledged record is still readable at the new leader";
  }));
  ASSERT_NE(new_leader, leader);

  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, survivors.front());
    protocol::DeleteTopicsRequest request;
    request.topic_names = {"orders"};
    request.timeout_ms = 10000;
    auto response = client.call<protocol::DeleteTopicsResponse>(request, 4);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    ASSERT_EQ(response->responses.size(), 1u);
    EXPECT_EQ(response->responses[0].error_code, 0);
  }));
  // The killed node still holds its replica on disk; once it restarts and catches up with the metadata, it goes.
  c.boot(leader);
  ASSERT_TRUE(c.run_until([&] {
    if (!c.registered(all)) return false;
    for (int32_t id : all) {
      if (c.broker(id)->partitions().find({"orders", 0}) != nullptr) return false;
      if (c.broker(id)->topics().find("orders") != nullptr) return false;
    }
    return true;
  }));
}

TEST(ClusterMode, ThreeBrokersCreateProduceFailOverAndDeleteATopic) {
  for (const uint64_t seed : {5, 11, 23, 42}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    create_produce_fail_over_and_delete(seed);
    if (HasFatalFailure()) return;
  }
}

TEST(ClusterMode, EveryNodeAnswersMetadataDescribeClusterFindCoordinatorAndProducerIds) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    std::vector<int64_t> producer_ids;
    for (int32_t id : all) {
      KafkaClient client = connect(env, id);
      auto cluster = client.call<protocol::DescribeClusterResponse>(protocol::DescribeClusterRequest{}, 0);
      ASSERT_TRUE(cluster.ok()) << cluster.status().to_string();
      EXPECT_EQ(cluster->brokers.size(), 3u);
      EXPECT_GE(cluster->controller_id, 1);

      // The first FindCoordinator makes __consumer_offsets: COORDINATOR_NOT_AVAILABLE until its partition leads.
      protocol::FindCoordinatorRequest find;
      find.key = "g";
      Result<protocol::FindCoordinatorResponse> coordinator = Status(Code::kTimedOut, "not asked");
      for (int attempt = 0; attempt < 100; ++attempt) {
        coordinator = client.call<protocol::FindCoordinatorResponse>(find, 3);
        if (!coordinator.ok() || coordinator->error_code == 0) break;
        env.scheduler.sleep_for(100ms);
      }
      ASSERT_TRUE(coordinator.ok()) << coordinator.status().to_string();
      EXPECT_EQ(coordinator->error_code, 0) << coordinator->error_message.value_or("");
      EXPECT_GE(coordinator->node_id, 1) << "the leader of the group's __consumer_offsets partition";

      auto pid = client.call<protocol::InitProducerIdResponse>(protocol::InitProducerIdRequest{}, 3);
      ASSERT_TRUE(pid.ok()) << pid.status().to_string();
      EXPECT_EQ(pid->error_code, 0);
      producer_ids.push_back(pid->producer_id);
    }
    // Each node's block is its own: no id is handed out twice.
    std::sort(producer_ids.begin(), producer_ids.end());
    EXPECT_EQ(std::adjacent_find(producer_ids.begin(), producer_ids.end()), producer_ids.end());

    // Auto-creation on one node; every node then answers for the topic.
    {
      KafkaClient client = connect(env, 2);
      auto_create(client, {"auto"});
    }
    for (int32_t id : all) {
      KafkaClient client = connect(env, id);
      MetadataRequest request;
      request.topics->push_back({.name = "auto"});
      request.allow_auto_topic_creation = false;
      auto response = client.call<MetadataResponse>(request, 9);
      ASSERT_TRUE(response.ok()) << response.status().to_string();
      EXPECT_EQ(response->brokers.size(), 3u);
      ASSERT_EQ(response->topics.size(), 1u);
      EXPECT_EQ(response->topics[0].error_code, 0) << "node " << id;
      ASSERT_EQ(response->topics[0].partitions.size(), 1u);
      EXPECT_EQ(response->topics[0].partitions[0].replica_nodes.size(), 1u) << "default.replication.factor 1";
    }

    // A config change on one node reaches every node's topic table (and the hosting node's partition).
    KafkaClient client = connect(env, 3);
    const protocol::IncrementalAlterConfigsResponse::Resource altered =
        alter_incrementally(client, "auto", {{"retention.ms", 0, "60000"}});
    EXPECT_EQ(altered.error_code, 0) << altered.error_message.value_or("");
    EXPECT_EQ(c.broker(3)->topics().find("auto")->config.retention_ms, 60000) << "the answer waits for this node";
  }));
  ASSERT_TRUE(c.run_until([&] {
    for (int32_t id : all) {
      const TopicInfo* info = c.broker(id)->topics().find("auto");
      if (info == nullptr || info->config.retention_ms != 60000) return false;
      const std::shared_ptr<cluster::Partition> partition = c.broker(id)->partitions().find({"auto", 0});
      if (partition != nullptr && partition->config().retention_ms != 60000) return false;
    }
    return true;
  }));
}

// A data directory a single node wrote (topics, no cluster metadata) is refused in cluster mode: the reconciler
// would remove every partition the metadata does not name.
TEST(ClusterMode, RefusesADataDirectoryOfASingleNodeBroker) {
  SimCluster cluster(11, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  std::optional<Status> single;
  std::optional<Status> clustered;
  node.boot([&](Env env) {
    broker::NodeOptions options;
    options.listen = KafkaCluster::address(1);
    options.data_dir = "data";
    broker::Node first(env, options);
    single = first.run([&](Broker& broker, const Address&) {
      EXPECT_TRUE(broker.topics().create("orders", 2, storage::TopicConfig{}).ok());
      first.stop();
    });
    options.broker.node_id = 1;
    options.broker.controller_quorum_voters[1] = Address{"n1", kRaftPort};
    broker::Node second(env, options);
    clustered = second.run([&](Broker&, const Address&) { second.stop(); });
  });
  ASSERT_TRUE(cluster.world().run_until([&] { return clustered.has_value(); }, cluster.world().now() + 60s));
  EXPECT_TRUE(single->ok()) << single->to_string();
  EXPECT_FALSE(clustered->ok());
  EXPECT_NE(clustered->to_string().find("holds topics of a single-node broker (orders)"), std::string::npos)
      << clustered->to_string();
}

// Seed 19 of cluster_crashes_partitions: a node restarted while the metadata had no quorum serves Kafka before its
// registration is applied (its image has no broker yet). Metadata with auto-creation must not try to create a topic
// the cluster has (it answered INVALID_REPLICATION_FACTOR, 'larger than available brokers: 0', non-retriable): it
// answers LEADER_NOT_AVAILABLE (retriable) until the node has caught up, and then the topic as the cluster has it.
TEST(ClusterMode, ANodeNotCaughtUpWithTheMetadataNeverAutoCreates) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  protocol::Uuid id;
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, 1);
    protocol::CreateTopicsRequest::Topic orders = new_topic("orders");
    orders.replication_factor = 3;
    protocol::CreateTopicsResponse created = create_topics(client, {orders});
    ASSERT_EQ(created.topics.size(), 1u);
    ASSERT_EQ(created.topics[0].error_code, 0) << created.topics[0].error_message.value_or("");
    id = created.topics[0].topic_id;
  }));
  ASSERT_TRUE(c.run_until([&] { return c.broker(3) != nullptr && c.broker(3)->topics().find("orders") != nullptr; }));
  // Node 3 comes back alone: no quorum, so its registration cannot apply.
  c.crash(1);
  c.crash(2);
  c.crash(3);
  c.boot(3);
  ASSERT_TRUE(c.run_until([&] { return c.broker(3) != nullptr; }));
  ASSERT_FALSE(c.broker(3)->cluster()->caught_up());
  const auto ask = [](Env env) {
    KafkaClient client = connect(env, 3);
    MetadataRequest request;
    request.topics->push_back({.name = "orders"});
    request.allow_auto_topic_creation = true;
    auto response = client.call<MetadataResponse>(request, 12);
    EXPECT_TRUE(response.ok()) << response.status().to_string();
    return response.ok() ? *response : MetadataResponse{};
  };
  ASSERT_TRUE(c.on_client([&](Env env) {
    const MetadataResponse response = ask(env);
    ASSERT_EQ(response.topics.size(), 1u);
    EXPECT_EQ(response.topics[0].error_code, 5) << "LEADER_NOT_AVAILABLE, retriable; never INVALID_REPLICATION_FACTOR";
  }));
  c.boot(1);
  c.boot(2);
  ASSERT_TRUE(c.run_until([&] { return c.registered(all) && c.broker(3)->cluster()->caught_up(); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    const MetadataResponse response = ask(env);
    ASSERT_EQ(response.topics.size(), 1u);
    EXPECT_EQ(response.topics[0].error_code, 0);
    EXPECT_EQ(response.topics[0].topic_id, id) << "the cluster's topic, not a new one";
  }));
}

}  // namespace
}  // namespace sluice::kafka::testing
