// Three (or more) simulated brokers in cluster mode, booted through broker::Node with node.id and
// controller.quorum.voters, each on its own simulated disk and network endpoint (n1, n2, ... port 9092), and a client
// node (c1) speaking the Kafka wire protocol to whichever broker a step names; with the helpers the cluster tests
// share (cluster_mode_test.cc, produce_forwarding_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/mutations.h"
#include "core/broker/node.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/messages/produce.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka::testing {

using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

inline constexpr uint16_t kKafkaPort = 9092;
inline constexpr uint16_t kRaftPort = 9192;
inline constexpr int16_t kNotLeaderOrFollower = 6;

class KafkaCluster {
 public:
  // `configure` adjusts every broker's config at each boot (after the cluster's own settings).
  explicit KafkaCluster(int32_t nodes = 3, uint64_t seed = 5, MutationSet mutations = {},
                        std::function<void(BrokerConfig&)> configure = {})
      : cluster_(seed, LogLevel::kOff), nodes_(nodes), mutations_(mutations), configure_(std::move(configure)) {
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
    // Three raft groups for __consumer_offsets instead of Kafka's 50 per node: the tests stay fast.
    options.broker.group.offsets_topic_partitions = 3;
    options.broker.mutations = mutations_;
    if (configure_) configure_(options.broker);
    broker::Node node(env, std::move(options));
    const Status run = node.run([&state](Broker& broker, const Address&) { state.broker = &broker; });
    EXPECT_TRUE(run.ok()) << run.to_string();
  }

  SimCluster cluster_;
  int32_t nodes_;
  MutationSet mutations_;
  std::function<void(BrokerConfig&)> configure_;
  SimNode* client_ = nullptr;
  std::vector<std::unique_ptr<State>> states_;
};

inline KafkaClient connect(Env env, int32_t id) {
  auto stream = env.net.connect(KafkaCluster::address(id));
  EXPECT_TRUE(stream.ok()) << "n" << id << ": " << stream.status().to_string();
  return KafkaClient(std::move(*stream));
}

// The partition's leader in node `id`'s Metadata answer (-1: none, or no answer).
inline int32_t leader_seen_by(Env env, int32_t id, const std::string& topic) {
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
inline int32_t agreed_leader(Env env, const std::vector<int32_t>& ids, const std::string& topic,
                             int32_t not_this = -1) {
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

// Partition 0's answer to an acks=`acks` Produce of `count` records at node `id` (error -100: no answer).
inline ProduceResponse::PartitionResponse produce(Env env, int32_t id, const std::string& topic, int count,
                                                  int16_t acks = -1) {
  KafkaClient client = connect(env, id);
  ProduceRequest request;
  request.acks = acks;
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

// What one Fetch of partition 0 from `offset` at node `id` returned: its error (-100: no answer), high watermark,
// the data records' offsets, and how many control batches came with them (a consumer must see none).
struct FetchedFrom {
  int16_t error = -100;
  int64_t high_watermark = -1;
  std::vector<int64_t> offsets;
  int control_batches = 0;
};

inline FetchedFrom fetch_from(Env env, int32_t id, const std::string& topic, int64_t offset) {
  KafkaClient client = connect(env, id);
  FetchRequest request;
  request.max_wait_ms = 0;
  request.min_bytes = 1;
  request.max_bytes = 50 << 20;
  FetchRequest::Partition at;
  at.partition = 0;
  at.fetch_offset = offset;
  at.partition_max_bytes = 1 << 20;
  request.topics.push_back({.topic = topic, .partitions = {at}});
  Result<FetchResponse> response = fetch_owned(client, request, 12);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  FetchedFrom out;
  if (!response.ok() || response->responses.size() != 1 || response->responses[0].partitions.size() != 1) return out;
  const FetchResponse::Partition& partition = response->responses[0].partitions[0];
  out.error = partition.error_code;
  out.high_watermark = partition.high_watermark;
  for (const storage::BatchHeader& header : batches_in(partition.records.bytes())) {
    if (header.control()) {
      ++out.control_batches;
      continue;
    }
    for (int64_t o = header.base_offset; o <= header.last_offset(); ++o) out.offsets.push_back(o);
  }
  return out;
}

// Every data record offset node `id` serves from 0 (each leader's first entry of its term is a LeaderChange control
// batch, which takes an offset and which Fetch leaves out), and the error of the fetch.
inline std::pair<int16_t, std::vector<int64_t>> fetch_all(Env env, int32_t id, const std::string& topic) {
  const FetchedFrom fetched = fetch_from(env, id, topic, 0);
  EXPECT_EQ(fetched.control_batches, 0) << "consumers never see a LeaderChange batch";
  return {fetched.error, fetched.offsets};
}

inline std::vector<int64_t> range(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

inline std::vector<int64_t> joined(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}


}  // namespace sluice::kafka::testing
