// Replica placement for new topics and partitions, decided by the proposer (it draws from its Random) and carried in
// the CreateTopic or CreatePartitions record, so that applying draws nothing.
//
// The rule is Kafka 3.9's rack-unaware assignment (org.apache.kafka.admin.AdminUtils.assignReplicasToBrokers
// without racks, which Kafka's ZooKeeper-mode controller used for CreateTopics and CreatePartitions): over the
// brokers in ascending id order, partition p's first replica (its preferred leader) is broker
// (p + start_index) mod n, so preferred leaders go round robin; its followers follow it at distinct offsets
// 1 + (shift + j) mod (n - 1), where the shift grows by one each time p wraps past a multiple of n, so that
// successive rounds do not repeat the same replica sets. start_index and the initial shift are two uniform draws
// in [0, n), in that order, as Kafka's. KRaft's StripedReplicaPlacer differs (it shuffles within racks and
// prefers unfenced brokers); Sluice has no racks or fencing in placement yet (README.md).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/base/result.h"
#include "core/cluster/metadata/image.h"
#include "core/cluster/metadata/records.h"
#include "core/env/random.h"

namespace sluice::cluster::metadata {

// [partition - first partition] -> node ids, the preferred leader first.
using ReplicaAssignment = std::vector<std::vector<int32_t>>;

struct PlacementStart {
  int32_t start_index = 0;      // the broker index of partition 0's preferred leader
  int32_t replica_shift = 0;    // the followers' shift in the first round of partitions
  int32_t first_partition = 0;  // the number of the first partition placed (the existing count, when adding)
};

// A new topic's placement. `brokers`: strictly ascending node ids (MetadataImage::broker_ids()). Errors as Kafka:
// INVALID_PARTITIONS when partitions < 1, INVALID_REPLICATION_FACTOR when replication_factor < 1 or more than the
// brokers. Draws twice from `random` when it succeeds, never when it fails.
Result<ReplicaAssignment> assign_replicas(const std::vector<int32_t>& brokers, int32_t partitions,
                                          int16_t replication_factor, Random& random);

// CreatePartitions' placement of `added` partitions after the topic's existing ones, as Kafka's AdminZkClient
// (createNewPartitionsAssignment): the topic's replication factor, and both the start index and the shift fixed at
// the index of the first broker whose id is at least partition 0's preferred leader, so that the new partitions
// continue the existing round robin. Draws nothing. INVALID_PARTITIONS when added < 1.
Result<ReplicaAssignment> assign_added_partitions(const std::vector<int32_t>& brokers, const TopicImage& topic,
                                                  int32_t added);

// The rule itself, from a given start (the two functions above choose it). Same errors as assign_replicas.
// REQUIRES start's fields >= 0.
Result<ReplicaAssignment> assign_replicas_from(const std::vector<int32_t>& brokers, int32_t partitions,
                                               int16_t replication_factor, PlacementStart start);

// The records' form: partition numbers from `first_partition` on.
std::vector<PartitionReplicas> numbered_partitions(const ReplicaAssignment& assignment, int32_t first_partition);

// Each partition's preferred leader: its first replica, Kafka's preferred replica.
std::vector<int32_t> preferred_leaders(const ReplicaAssignment& assignment);
// How many partitions each of `brokers` is the preferred leader of (brokers that lead none count 0); a broker of
// `assignment` missing from `brokers` is counted too. For leadership balancing: within one placement the counts
// differ by at most one, and across topics the random start index spreads them.
std::map<int32_t, int32_t> preferred_leader_counts(const std::vector<int32_t>& brokers,
                                                   const ReplicaAssignment& assignment);
// The same over every partition of every topic of `image`, for every registered broker.
std::map<int32_t, int32_t> preferred_leader_counts(const MetadataImage& image);

}  // namespace sluice::cluster::metadata
