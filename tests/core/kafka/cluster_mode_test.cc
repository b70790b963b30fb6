// Cluster mode end to end in the simulator (issue 22's boot path): three brokers booted through broker::Node with
// node.id and controller.quorum.voters, each on its own simulated disk and network endpoint, and a client node
// speaking the Kafka wire protocol to whichever broker a step names. CreateTopics on a follower of the metadata,
// every node naming the same partition leader, acks=all produce and fetch at the leader, NOT_LEADER_OR_FOLLOWER at
// a follower, the leader's node killed and a new leader serving every acknowledged record, DeleteTopics removing
// the partitions on every node (the killed one too, once it restarts and catches up).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/broker/node.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_cluster.h"
#include "core/protocol/messages/find_coordinator.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/produce.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka::testing {
namespace {

using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

constexpr uint16_t kKafkaPort = 9092;
constexpr uint16_t kRaftPort = 9192;
constexpr int16_t kNotLeaderOrFollower = 6;
constexpr int16_t kInvalidReplicationFactor = 38;

class KafkaCluster {
 public:
  explicit KafkaCluster(int32_t nodes = 3, uint64_t seed = 5) : cluster_(seed, LogLevel::kOff), nodes_(nodes) {
    for (int32_t i = 0; i < nodes; ++i) {
      cluster_.add_node();
      states_.push_back(std::make_unique<State>());
    }
    client_ = &cluster_.add_node("c1");
    client_->boot([](Env env) {
      Event forever(env.scheduler);
      forever.wait();
    });
    for (int32_t id = 1; id <= nodes; ++id) boot(id);
  }
  // The brokers' fibers reference the states: unwind them first.
  ~KafkaCluster() {
    for (size_t i = 0; i < cluster_.size(); ++i) {
      if (cluster_.node(i).up()) cluster_.node(i).crash();
    }
  }

  void boot(int32_t id) {
    SimNode& node = cluster_.node(static_cast<size_t>(id - 1));
    if (node.up()) node.crash();
    node.boot([this, id](Env env) { main(env, id); });
  }
  void crash(int32_t id) { cluster_.node(static_cast<size_t>(id - 1)).crash(); }

  int32_t size() const { return nodes_; }
  Broker* broker(int32_t id) { return states_[static_cast<size_t>(id - 1)]->broker; }
  static Address address(int32_t id) { return Address{"n" + std::to_string(id), kKafkaPort}; }

  bool run_until(const std::function<bool()>& done, Duration limit = 60s) {
    return cluster_.world().run_until(done, cluster_.world().now() + limit);
  }
  // Every running broker is registered and sees every broker registered.
  bool registered(const std::vector<int32_t>& ids) {
    for (int32_t id : ids) {
      Broker* b = broker(id);
      if (b == nullptr || b->cluster() == nullptr || !b->cluster()->node().registered()) return false;
      if (b->cluster()->image().brokers().size() != static_cast<size_t>(nodes_)) return false;
    }
    return true;
  }
  // Runs `body` on a fiber of the client node and the world until it returns.
  bool on_client(const std::function<void(Env)>& body, Duration limit = 120s) {
    auto done = std::make_shared<bool>(false);
    client_->scheduler().spawn("test", [this, body, done] {
      body(client_->env());
      *done = true;
    });
    return run_until([done] { return *done; }, limit);
  }

 private:
  struct State {
    Broker* broker = nullptr;  // while serving
  };

  void main(Env env, int32_t id) {
    State& state = *states_[static_cast<size_t>(id - 1)];
    struct Forget {
      State& state;
      ~Forget() { state.broker = nullptr; }
    } forget{state};
    broker::NodeOptions options;
    options.listen = address(id);
    options.data_dir = "data";
    options.broker.node_id = id;
    for (int32_t other = 1; other <= nodes_; ++other) {
      options.broker.controller_quorum_voters[other] = Address{"n" + std::to_string(other), kRaftPort};
    }
    options.broker.raft_tick = 50ms;
    broker::Node node(env, std::move(options));
    const Status run = node.run([&state](Broker& broker, const Address&) { state.broker = &broker; });
    EXPECT_TRUE(run.ok()) << run.to_string();
  }

  SimCluster cluster_;
  int32_t nodes_;
  SimNode* client_ = nullptr;
  std::vector<std::unique_ptr<State>> states_;
};

KafkaClient connect(Env env, int32_t id) {
  auto stream = env.net.connect(KafkaCluster::address(id));
  EXPECT_TRUE(stream.ok()) << "n" << id << ": " << stream.status().to_string();
  return KafkaClient(std::move(*stream));
}

// The partition's leader in node `id`'s Metadata answer (-1: none, or no answer).
int32_t leader_seen_by(Env env, int32_t id, const std::string& topic) {
  KafkaClient client = connect(env, id);
  MetadataRequest request;
  request.topics->push_back({.name = topic});
  request.allow_auto_topic_creation = false;
  auto response = client.call<MetadataResponse>(request, 9);
  if (!response.ok() || response->topics.size() != 1 || response->topics[0].partitions.size() != 1) return -1;
  const MetadataResponse::Partition& partition = response->topics[0].partitions[0];
  return partition.error_code == 0 ? partition.leader_id : -1;
}

// The leader every node of `ids` names for partition 0 of `topic`, once they agree (-1 if they never do).
int32_t agreed_leader(Env env, const std::vector<int32_t>& ids, const std::string& topic, int32_t not_this = -1) {
  for (int attempt = 0; attempt < 300; ++attempt) {
    int32_t agreed = -1;
    bool same = true;
    for (int32_t id : ids) {
      const int32_t seen = leader_seen_by(env, id, topic);
      if (seen < 0 || (agreed >= 0 && seen != agreed)) same = false;
      agreed = seen;
    }
    if (same && agreed >= 0 && agreed != not_this) return agreed;
    env.scheduler.sleep_for(100ms);
  }
  return -1;
}

ProduceResponse::PartitionResponse produce(Env env, int32_t id, const std::string& topic, int count) {
  KafkaClient client = connect(env, id);
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 10000;
  request.topic_data.push_back({topic, {{0, protocol::Records::own(make_records(count))}}});
  auto response = client.call<ProduceResponse>(request, 8);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1 || response->responses[0].partition_responses.size() != 1) {
    ProduceResponse::PartitionResponse missing;
    missing.error_code = -100;
    return missing;
  }
  return response->responses[0].partition_responses[0];
}

// Every data record offset node `id` serves from 0 (a leader's first entry of its term is a LeaderChange control
// batch, which takes an offset and is skipped here), and the error of the fetch.
std::pair<int16_t, std::vector<int64_t>> fetch_all(Env env, int32_t id, const std::string& topic) {
  KafkaClient client = connect(env, id);
  FetchRequest request;
  request.max_wait_ms = 0;
  request.min_bytes = 1;
  request.max_bytes = 50 << 20;
  FetchRequest::Partition at;
  at.partition = 0;
  at.fetch_offset = 0;
  at.partition_max_bytes = 1 << 20;
  request.topics.push_back({.topic = topic, .partitions = {at}});
  Result<FetchResponse> response = fetch_owned(client, request, 12);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1 || response->responses[0].partitions.size() != 1) {
    return {-100, {}};
  }
  const FetchResponse::Partition& partition = response->responses[0].partitions[0];
  std::vector<int64_t> offsets;
  for (const storage::BatchHeader& header : batches_in(partition.records.bytes())) {
    if (header.control()) continue;
    for (int64_t offset = header.base_offset; offset <= header.last_offset(); ++offset) offsets.push_back(offset);
  }
  return {partition.error_code, offsets};
}

std::vector<int64_t> range(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

std::vector<int64_t> joined(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

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
    EXPECT_EQ(produce(env, not_leader, "orders", 1).error_code, kNotLeaderOrFollower);
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
    const ProduceResponse::PartitionResponse after = produce(env, new_leader, "orders", 2);
    EXPECT_EQ(after.error_code, 0);
    EXPECT_GT(after.base_offset, first_base + 7) << "the new records follow every acknowledged one";
    const auto [error, offsets] = fetch_all(env, new_leader, "orders");
    EXPECT_EQ(error, 0);
    EXPECT_EQ(offsets, joined(range(first_base, first_base + 8), range(after.base_offset, after.base_offset + 2)))
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

      protocol::FindCoordinatorRequest find;
      find.key = "g";
      auto coordinator = client.call<protocol::FindCoordinatorResponse>(find, 3);
      ASSERT_TRUE(coordinator.ok()) << coordinator.status().to_string();
      EXPECT_EQ(coordinator->error_code, 0);
      EXPECT_EQ(coordinator->node_id, 1) << "the lowest registered node coordinates every group";

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

}  // namespace
}  // namespace sluice::kafka::testing
