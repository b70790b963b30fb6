#include "core/cluster/metadata/placement.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"

namespace sluice::cluster::metadata {
namespace {

// Kafka's checks, in Kafka's order (AdminUtils.assignReplicasToBrokers).
Status check_request(size_t brokers, int32_t partitions, int16_t replication_factor) {
  if (partitions <= 0) return kafka_error(ErrorCode::kInvalidPartitions, "Number of partitions must be larger than 0.");
  if (replication_factor <= 0) {
    return kafka_error(ErrorCode::kInvalidReplicationFactor, "Replication factor must be larger than 0.");
  }
  if (static_cast<size_t>(replication_factor) > brokers) {
    return kafka_error(ErrorCode::kInvalidReplicationFactor,
                       fmt::format("Replication factor: {} larger than available brokers: {}.", replication_factor,
                                   brokers));
  }
  return Status();
}

void assert_strictly_ascending(const std::vector<int32_t>& brokers) {
  for (size_t i = 1; i < brokers.size(); ++i) SLUICE_ASSERT(brokers[i - 1] < brokers[i]);
}

// The index of follower j of a partition whose first replica is at `first` (AdminUtils.replicaIndex): offsets
// 1 .. n-1, distinct for distinct j < n - 1, so never the first replica and never the same broker twice.
size_t follower_index(size_t first, int64_t shift, size_t j, size_t n) {
  SLUICE_ASSERT(n >= 2);
  const auto span = static_cast<int64_t>(n - 1);
  const int64_t offset = 1 + (shift + static_cast<int64_t>(j)) % span;
  return (first + static_cast<size_t>(offset)) % n;
}

}  // namespace

Result<ReplicaAssignment> assign_replicas_from(const std::vector<int32_t>& brokers, int32_t partitions,
                                               int16_t replication_factor, PlacementStart start) {
  SLUICE_ASSERT(start.start_index >= 0);
  SLUICE_ASSERT(start.replica_shift >= 0);
  SLUICE_ASSERT(start.first_partition >= 0);
  assert_strictly_ascending(brokers);
  SLUICE_TRY(check_request(brokers.size(), partitions, replication_factor));
  const size_t n = brokers.size();
  int64_t shift = start.replica_shift;
  ReplicaAssignment assignment;
  assignment.reserve(static_cast<size_t>(partitions));
  for (int64_t p = start.first_partition; p < int64_t{start.first_partition} + partitions; ++p) {
    if (p > 0 && p % static_cast<int64_t>(n) == 0) ++shift;
    const auto first = static_cast<size_t>((p + start.start_index) % static_cast<int64_t>(n));
    std::vector<int32_t> replicas{brokers[first]};
    for (size_t j = 0; j + 1 < static_cast<size_t>(replication_factor); ++j) {
      replicas.push_back(brokers[follower_index(first, shift, j, n)]);
    }
    SLUICE_ASSERT(replicas.size() == static_cast<size_t>(replication_factor));
    assignment.push_back(std::move(replicas));
  }
  SLUICE_ASSERT(assignment.size() == static_cast<size_t>(partitions));
  return assignment;
}

Result<ReplicaAssignment> assign_replicas(const std::vector<int32_t>& brokers, int32_t partitions,
                                          int16_t replication_factor, Random& random) {
  SLUICE_TRY(check_request(brokers.size(), partitions, replication_factor));
  PlacementStart start;
  start.start_index = static_cast<int32_t>(random.uniform(brokers.size()));
  start.replica_shift = static_cast<int32_t>(random.uniform(brokers.size()));
  return assign_replicas_from(brokers, partitions, replication_factor, start);
}

Result<ReplicaAssignment> assign_added_partitions(const std::vector<int32_t>& brokers, const TopicImage& topic,
                                                  int32_t added) {
  SLUICE_ASSERT(!topic.partitions.empty());
  if (added < 1) {
    return kafka_error(ErrorCode::kInvalidPartitions,
                       fmt::format("Topic already has {} partition(s).", topic.partition_count()));
  }
  assert_strictly_ascending(brokers);
  const int32_t head = topic.partitions.front().preferred_leader();
  const auto at_or_after = std::lower_bound(brokers.begin(), brokers.end(), head);
  // Kafka's max(0, indexWhere(id >= head)): no such broker starts at 0.
  const auto index = at_or_after == brokers.end() ? 0 : static_cast<int32_t>(at_or_after - brokers.begin());
  const int32_t replication_factor = topic.replication_factor();
  SLUICE_ASSERT(replication_factor <= INT16_MAX);
  return assign_replicas_from(brokers, added, static_cast<int16_t>(replication_factor),
                              PlacementStart{index, index, topic.partition_count()});
}

std::vector<PartitionReplicas> numbered_partitions(const ReplicaAssignment& assignment, int32_t first_partition) {
  SLUICE_ASSERT(first_partition >= 0);
  std::vector<PartitionReplicas> partitions;
  partitions.reserve(assignment.size());
  for (size_t i = 0; i < assignment.size(); ++i) {
    partitions.push_back(PartitionReplicas{first_partition + static_cast<int32_t>(i), assignment[i]});
  }
  return partitions;
}

std::vector<int32_t> preferred_leaders(const ReplicaAssignment& assignment) {
  std::vector<int32_t> leaders;
  leaders.reserve(assignment.size());
  for (const std::vector<int32_t>& replicas : assignment) {
    SLUICE_ASSERT(!replicas.empty());
    leaders.push_back(replicas.front());
  }
  return leaders;
}

std::map<int32_t, int32_t> preferred_leader_counts(const std::vector<int32_t>& brokers,
                                                   const ReplicaAssignment& assignment) {
  std::map<int32_t, int32_t> counts;
  for (int32_t broker : brokers) counts[broker] = 0;
  for (int32_t leader : preferred_leaders(assignment)) ++counts[leader];
  return counts;
}

std::map<int32_t, int32_t> preferred_leader_counts(const MetadataImage& image) {
  std::map<int32_t, int32_t> counts;
  for (int32_t broker : image.broker_ids()) counts[broker] = 0;
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionImage& partition : topic.partitions) ++counts[partition.preferred_leader()];
  }
  return counts;
}

}  // namespace sluice::cluster::metadata
