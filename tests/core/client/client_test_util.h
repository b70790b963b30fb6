// A simulated broker for client tests: node n1 runs the broker (the one boot path, core/broker/node.h) on port 9092
// and the test body runs as node n2's main fiber, where it makes its Clients. Unlike BrokerHarness
// (tests/core/kafka), it hands the test the network and the broker node, for faults: partitions, resets, a broker
// restart.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/broker/node.h"
#include "core/client/client.h"
#include "core/kafka/broker.h"
#include "sim/world/sim_cluster.h"

namespace sluice::client::testing {

using namespace std::chrono_literals;

inline const Address kBrokerAddress{"n1", 9092};

// Groups form at once (no initial rebalance delay) and the offsets topic is small.
inline kafka::BrokerConfig test_broker_config() {
  kafka::BrokerConfig config;
  config.group.initial_rebalance_delay_ms = 0;
  config.group.offsets_topic_partitions = 1;
  return config;
}

class ClientHarness {
 public:
  explicit ClientHarness(uint64_t seed = 1, kafka::BrokerConfig config = test_broker_config())
      : cluster_(seed, LogLevel::kOff),
        server_(cluster_.add_node()),
        client_(cluster_.add_node()),
        config_(std::move(config)) {
    config_.advertised_host = kBrokerAddress.host;
    config_.advertised_port = kBrokerAddress.port;
  }

  ~ClientHarness() {
    stop_broker();
    if (client_.up()) client_.crash();
  }

  ClientConfig client_config() const {
    ClientConfig config;
    config.bootstrap = {kBrokerAddress};
    config.request_timeout = 2s;
    config.retry_backoff = 50ms;
    config.retry_backoff_max = 500ms;
    return config;
  }

  // Boots the broker, then runs `body` on the client node once the broker serves. True when `body` finished
  // within `limit` of simulated time.
  bool run(const std::function<void(Env)>& body, Duration limit = std::chrono::minutes(30)) {
    boot_broker();
    bool done = false;
    client_.boot([&](Env env) {
      wait_for_broker(env);
      body(env);
      done = true;
    });
    return cluster_.world().run_until([&] { return done; }, cluster_.world().now() + limit);
  }

  // From the test body: the broker process dies (its fibers unwound, its connections reset; the page cache keeps
  // what it wrote) and boots again `down_for` later; returns once it serves again.
  void restart_broker(Env env, Duration down_for = 100ms) {
    SimWorld& world = cluster_.world();
    world.schedule_after(Duration::zero(), kWorldNode, EventKind::kFault, [this, down_for] {
      server_.crash();
      broker_ = nullptr;
      node_ = nullptr;  // it lived on the unwound main fiber
      cluster_.world().schedule_after(down_for, kWorldNode, EventKind::kFault, [this] { boot_broker(); });
    });
    env.scheduler.sleep_for(1ms);  // the crash happens
    wait_for_broker(env);
  }

  // The client node's process dies `after` from now: every fiber of the test body unwinds (FiberKilled).
  void crash_client_after(Duration after) {
    cluster_.world().schedule_after(after, kWorldNode, EventKind::kFault, [this] { client_.crash(); });
  }

  void wait_for_broker(Env env) const {
    while (broker_ == nullptr) env.scheduler.sleep_for(1ms);
  }

  kafka::Broker& broker() const {
    SLUICE_ASSERT(broker_ != nullptr);
    return *broker_;
  }
  // The broker's log end of a partition (-1 when it has no such partition).
  int64_t log_end(const TopicPartitionId& tp) const {
    storage::PartitionLog* log = broker().logs().find({tp.topic, tp.partition});
    return log == nullptr ? -1 : log->log_end_offset();
  }

  SimWorld& world() { return cluster_.world(); }
  SimNetwork& network() { return cluster_.network(); }
  NodeId broker_node() const { return server_.id(); }
  NodeId client_node() const { return client_.id(); }
  SimNode& client_sim_node() { return client_; }  // before run(): BUGGIFY, say
  kafka::BrokerConfig& broker_config() { return config_; }

 private:
  void boot_broker() {
    server_.boot([this](Env env) {
      broker::NodeOptions options;
      options.listen = kBrokerAddress;
      options.data_dir = "data";
      options.broker = config_;
      broker::Node node(env, std::move(options));
      node_ = &node;
      const Status run = node.run([this](kafka::Broker& broker, const Address&) { broker_ = &broker; });
      EXPECT_TRUE(run.ok()) << run.to_string();
      broker_ = nullptr;
      node_ = nullptr;
    });
  }

  void stop_broker() {
    if (node_ != nullptr) node_->stop();
    cluster_.world().run_until([&] { return node_ == nullptr || !server_.up(); }, cluster_.world().now() + 10s);
    if (server_.up()) server_.crash();
  }

  SimCluster cluster_;
  SimNode& server_;
  SimNode& client_;
  kafka::BrokerConfig config_;
  broker::Node* node_ = nullptr;
  kafka::Broker* broker_ = nullptr;
};

// ---- Records ----

inline ProducerRecord record(const std::string& key, const std::string& value, int64_t timestamp_ms = -1) {
  ProducerRecord out;
  if (!key.empty()) out.key = to_bytes(key);
  out.value = to_bytes(value);
  out.timestamp_ms = timestamp_ms;
  return out;
}

inline std::string text(const std::optional<Bytes>& bytes) {
  return bytes ? std::string(as_chars(*bytes)) : std::string("<null>");
}

// Every record of the partition from `offset` to its high watermark, fetched in as many rounds as it takes.
inline std::vector<FetchedRecord> fetch_all(Client& client, const TopicPartitionId& tp, int64_t offset = 0) {
  std::vector<FetchedRecord> out;
  FetchOptions options;
  options.max_wait = 10ms;
  for (int round = 0; round < 1000; ++round) {
    Result<FetchResult> fetched = client.fetch(tp, offset, options);
    EXPECT_TRUE(fetched.ok()) << fetched.status().to_string();
    if (!fetched.ok() || fetched->error_code != 0) break;
    for (FetchedRecord& r : fetched->records) out.push_back(std::move(r));
    if (!out.empty()) offset = out.back().offset + 1;
    if (offset >= fetched->high_watermark) break;
  }
  return out;
}

inline std::vector<std::string> values(const std::vector<FetchedRecord>& records) {
  std::vector<std::string> out;
  for (const FetchedRecord& r : records) out.push_back(text(r.value));
  return out;
}

}  // namespace sluice::client::testing
