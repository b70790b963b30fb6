// The raft groups of a Sluice cluster, by id: group 0 is the cluster metadata (Kafka's __cluster_metadata), and each
// partition's group id is derived from its topic id and index, so every node names the same group without asking.
#pragma once

#include <cstdint>

#include "core/cluster/metadata/records.h"
#include "core/raft/envelope.h"

namespace sluice::cluster {

inline constexpr raft::GroupId kMetadataGroup = 0;

// The raft group of partition `partition` of the topic `topic_id`: the splitmix64 finaliser folded over the topic
// id's two big-endian halves and the partition index, moved off 0 (the metadata group). The formula is part of the
// on-disk and on-wire format (nodes of different builds must agree, and group directories are named by it): never
// change it. Two partitions share an id with probability about 2^-64 per pair, which ClusterNode's callers may
// assert against when they add a group. REQUIRES a non-zero topic id and partition >= 0.
raft::GroupId partition_group_id(const metadata::TopicId& topic_id, int32_t partition);

}  // namespace sluice::cluster
