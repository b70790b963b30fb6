// SimCluster: a SimWorld, its SimNetwork and a set of SimNodes, torn down in the safe order (every node's fibers
// are unwound before anything they reference goes away).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/world/sim_network.h"
#include "sim/world/sim_node.h"
#include "sim/world/sim_world.h"

namespace sluice {

class SimCluster {
 public:
  SimCluster(uint64_t seed, LogLevel level) : world_(seed), network_(world_), level_(level) {}
  ~SimCluster();

  // Adds a node named "n<k>" (k = 1, 2, ...), down until booted.
  SimNode& add_node();
  // Adds a node with its own name (a client node "c1", say), down until booted. REQUIRES: the name is new.
  SimNode& add_node(const std::string& name);
  SimNode& node(size_t index) { return *nodes_.at(index); }
  size_t size() const { return nodes_.size(); }
  SimWorld& world() { return world_; }
  SimNetwork& network() { return network_; }

 private:
  SimWorld world_;
  SimNetwork network_;
  LogLevel level_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
};

}  // namespace sluice
