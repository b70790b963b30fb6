#include "sim/world/sim_cluster.h"

namespace sluice {

SimCluster::~SimCluster() {
  // Unwind every node's fibers while all nodes, the network and the world still exist.
  for (auto& node : nodes_) {
    if (node->up()) node->crash();
  }
  nodes_.clear();
}

SimNode& SimCluster::add_node() {
  const NodeId id = static_cast<NodeId>(nodes_.size() + 1);
  nodes_.push_back(std::make_unique<SimNode>(world_, network_, id, "n" + std::to_string(id), level_));
  return *nodes_.back();
}

}  // namespace sluice
