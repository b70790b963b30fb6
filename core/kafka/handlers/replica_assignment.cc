#include "core/kafka/handlers/replica_assignment.h"

#include <fmt/format.h>

#include <set>

#include "core/kafka/broker.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

// Which brokers a manual assignment may name: this node alone, or every registered one in cluster mode.
bool assignable(const Broker& broker, int32_t node) {
  if (const ClusterTopics* cluster = broker.cluster()) return cluster->image().broker(node) != nullptr;
  return node == broker.config().node_id;
}

}  // namespace

Status invalid_replica_assignment(std::string message) {
  return Status(Code::kInvalidArgument, std::move(message), static_cast<int16_t>(ErrorCode::kInvalidReplicaAssignment));
}

Status check_manual_replicas(const Broker& broker, const std::vector<int32_t>& replicas,
                             std::optional<int32_t> replication_factor) {
  if (replicas.empty()) {
    return invalid_replica_assignment("The manual partition assignment includes an empty replica list.");
  }
  std::set<int32_t> seen;
  for (int32_t node : replicas) {
    if (!assignable(broker, node)) {
      return invalid_replica_assignment(
          fmt::format("The manual partition assignment includes broker {}, but no such broker is registered.", node));
    }
    if (!seen.insert(node).second) {
      return invalid_replica_assignment(
          fmt::format("The manual partition assignment includes the broker {} more than once.", node));
    }
  }
  if (replication_factor && static_cast<int32_t>(replicas.size()) != *replication_factor) {
    return invalid_replica_assignment(fmt::format(
        "The manual partition assignment includes a partition with {} replica(s), but this is not consistent with "
        "previous partitions, which have {} replica(s).",
        replicas.size(), *replication_factor));
  }
  return Status();
}

}  // namespace sluice::kafka
