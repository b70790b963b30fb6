// The "consumer" protocol's opaque blobs of JoinGroup and SyncGroup (Kafka 3.9 ConsumerProtocolSubscription.json
// and ConsumerProtocolAssignment.json): each starts with an int16 version, then classic (non-flexible) fields.
// This client writes version 0 (every assignor reads it) and reads any version's leading fields, ignoring later
// ones, as Kafka's ConsumerProtocol does. And the range assignor the group leader runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/client/client.h"

namespace sluice::client {

// version, topics [string], user_data (nullable bytes)
Bytes encode_subscription(const std::vector<std::string>& topics);
Result<std::vector<std::string>> decode_subscription(ByteView bytes);

// version, assigned_partitions [topic string, partitions [int32]], user_data (nullable bytes)
Bytes encode_assignment(const std::vector<TopicPartitionId>& partitions);
// Empty bytes are no assignment (what the coordinator answers a member the leader left out).
Result<std::vector<TopicPartitionId>> decode_assignment(ByteView bytes);

// Kafka's RangeAssignor: per topic, the members subscribed to it in member-id order each take a contiguous range of
// partitions, the first (partitions % members) one more. Every member of `subscriptions` gets an entry (possibly
// empty). `partition_counts` lacks topics that do not exist: they are assigned to nobody.
std::map<std::string, std::vector<TopicPartitionId>> range_assign(
    const std::map<std::string, std::vector<std::string>>& subscriptions,
    const std::map<std::string, int32_t>& partition_counts);

}  // namespace sluice::client
