// Manual replica assignments, as CreateTopics and CreatePartitions check them (Kafka 3.9's
// ReplicationControlManager.validateManualPartitionAssignment).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"

namespace sluice::kafka {

class Broker;

// INVALID_REPLICA_ASSIGNMENT with `message`.
Status invalid_replica_assignment(std::string message);

// One partition's replicas: not empty, every broker registered (on one node: this node) and named once, and, when
// given, `replication_factor` of them. INVALID_REPLICA_ASSIGNMENT with Kafka's message otherwise.
Status check_manual_replicas(const Broker& broker, const std::vector<int32_t>& replicas,
                             std::optional<int32_t> replication_factor = std::nullopt);

}  // namespace sluice::kafka
