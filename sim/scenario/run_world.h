// The world of one run: the simulated cluster, the broker nodes (booted through core/broker/node, each boot and
// stop recorded in the history), and the client nodes. It is the injector's FaultTarget.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/broker/node.h"
#include "core/storage/effects.h"
#include "sim/faults/injector.h"
#include "sim/history/history.h"
#include "sim/world/sim_cluster.h"

namespace sluice::sim {

inline constexpr uint16_t kBrokerPort = 9092;
inline constexpr uint16_t kRaftPort = 9192;  // cluster mode: each node's raft transport

class RunWorld final : public FaultTarget {
 public:
  // `history` outlives the world. The brokers get `options` (listen address and data directory filled per node).
  // More than one broker: they form one cluster, node.id 1..N on n1..nN, every node a voter of the metadata group.
  // `buggify`: BUGGIFY on every node, brokers and clients (core/env/buggify.h), its sites picked by `seed`.
  RunWorld(uint64_t seed, LogLevel level, History& history, broker::NodeOptions options, int brokers,
           bool buggify = false);
  ~RunWorld() override;

  SimCluster& cluster() override { return cluster_; }
  SimWorld& world() { return cluster_.world(); }
  SimNode* broker_node(const std::string& name) override;
  std::vector<SimNode*> broker_nodes() override;
  std::vector<SimNode*> client_nodes() override { return clients_; }
  void take_down(SimNode& node, bool power_loss) override;
  void stop_gracefully(SimNode& node) override;
  void bring_up(SimNode& node) override;
  bool set_drop_acks0_forwards(SimNode& node, bool drop) override;

  SimNode& add_client(const std::string& name);
  std::vector<Address> bootstrap() const;
  // True once every broker serves (or a boot failed: see boot_failed()).
  bool all_serving() const;
  bool boot_failed() const { return boot_failures_ > 0; }
  // The broker serving on the index-th node, or null.
  kafka::Broker* broker(size_t index) const;

 private:
  struct Broker;
  SimNode::Main main_for(Broker& b);

  History& history_;
  broker::NodeOptions options_;
  SimCluster cluster_;
  std::vector<std::unique_ptr<Broker>> brokers_;
  std::vector<SimNode*> clients_;
  size_t boot_failures_ = 0;
  bool buggify_ = false;
  uint64_t buggify_seed_ = 0;
};

}  // namespace sluice::sim
