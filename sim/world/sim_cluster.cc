#include "sim/world/sim_cluster.h"

#include "core/base/assert.h"

namespace sluice {

SimCluster::~SimCluster() {
  // Unwind every node's fibers while all nodes, the network and the world still exist.
  for (auto& node : nodes_) {
    if (node->up()) node->crash();
  }
  nodes_.clear();
}

SimNode& SimCluster::add_node() { return add_node("n" + std::to_string(nodes_.size() + 1)); }

SimNode& SimCluster::add_node(const std::string& name) {
  for (const auto& node : nodes_) SLUICE_ASSERT_MSG(node->name() != name, "node names are unique");
  const NodeId id = static_cast<NodeId>(nodes_.size() + 1);
  nodes_.push_back(std::make_unique<SimNode>(world_, network_, id, name, level_));
  return *nodes_.back();
}

}  // namespace sluice
