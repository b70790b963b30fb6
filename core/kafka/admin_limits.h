// What admin requests may not do (issue 20): Kafka 3.9's bound on the metadata records one request writes, the
// per-broker partition limit (sluice.max.broker.partitions), and the protection of __consumer_offsets.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/status.h"
#include "core/storage/topic_config.h"

namespace sluice::kafka {

// Kafka's QuorumController.MAX_RECORDS_PER_USER_OP: a CreateTopics writes per topic a TopicRecord, a ConfigRecord
// per config it sets and a PartitionRecord per partition; a CreatePartitions a PartitionRecord per new partition.
inline constexpr int64_t kMaxRecordsPerRequest = 10000;

// Kafka's refusal of a request past kMaxRecordsPerRequest: POLICY_VIOLATION, "Unable to perform excessively large
// batch operation.".
Status excessive_batch();

// Adding `added` partition replicas to a broker holding `held` would pass sluice.max.broker.partitions:
// POLICY_VIOLATION naming the broker and the setting; else OK.
Status check_broker_partitions(int32_t node_id, int64_t held, int64_t added, int32_t limit);

// The group coordinator's topic, which only the coordinator creates (with its settings), and which is never
// deleted or made unsafe. Kafka 3.9's KRaft controller protects it from none of these (a deliberate departure:
// core/kafka/README.md, "Internal topics").
bool is_coordinator_topic(std::string_view name);
// CreateTopics naming it: INVALID_REQUEST, as Kafka refuses to create __cluster_metadata.
Status internal_topic_creation(std::string_view name);
// DeleteTopics naming it (by name or id): INVALID_REQUEST.
Status internal_topic_deletion(std::string_view name);
// An alteration leaving it anything but compacted alone (cleanup.policy=compact): INVALID_CONFIG; deletion would
// drop committed offsets by age, and without compaction its log (and the coordinator's load) grows without end.
Status check_internal_topic_config(std::string_view name, const storage::TopicConfig& config);

}  // namespace sluice::kafka
