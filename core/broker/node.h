// Node: the one boot path of a broker, shared by `sluice serve` (net/), the simulator (sim/) and the tests. Run in
// a node's main fiber, it creates the data directory, binds the listener, opens the broker (storage, topics,
// groups), joins the cluster in cluster mode (BrokerConfig::controller_quorum_voters), serves until stop(), and closes
// everything gracefully (every log flushed, clean-shutdown markers written). A node killed by the simulator simply
// never returns from run(): its fibers are unwound.
//
// Fibers: run() on the node's main fiber; stop() from any fiber of the node or a signal callback.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/network.h"
#include "core/kafka/broker.h"
#include "core/kafka/broker_config.h"
#include "core/storage/effects.h"

namespace sluice::broker {

struct NodeOptions {
  Address listen{"127.0.0.1", 9092};
  std::optional<Address> advertised;  // what clients are told to connect to; empty: the bound listen address
  std::string data_dir = "./sluice-data";
  kafka::BrokerConfig broker;
  // The Kafka-named settings `broker` was parsed from (file and --set), logged at start-up.
  std::map<std::string, std::string> settings;
  // Hears of the storage's declared effects (storage/effects.h): the simulator's checkers. Outlives run().
  storage::EffectSink* effects = nullptr;
};

// The wildcard addresses: clients cannot connect to them, so advertising one is nearly always a mistake.
bool is_any_address(const std::string& host);

class Node {
 public:
  Node(Env env, NodeOptions options);
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Called once, in the main fiber, when the listener is bound and the broker is open (tests learn the port of
  // "host:0" here; the simulator learns the broker it may observe).
  using OnServing = std::function<void(kafka::Broker& broker, const Address& bound)>;

  // Boots, serves until stop(), then closes. Errors: the data directory cannot be created or read, the listener
  // cannot be bound, the data directory does not load (a partition refusing interior damage names the file, offset
  // and repair command), the cluster cannot be joined (its metadata or raft transport), or the close failed (a log went
  // offline). Each message says which step failed.
  Status run(const OnServing& on_serving = {});
  // Stops accepting and ends every connection; run() then closes and returns. Before run() has opened the broker
  // it makes run() return right after opening.
  void stop();

  // The broker while run() serves, else null.
  kafka::Broker* broker() const { return broker_; }
  const NodeOptions& options() const { return options_; }

 private:
  void log_start_up(const std::vector<DirEntry>& entries);
  Address advertised_address(const Address& bound);

  Env env_;
  NodeOptions options_;
  kafka::Broker* broker_ = nullptr;
  bool stopping_ = false;
};

}  // namespace sluice::broker
