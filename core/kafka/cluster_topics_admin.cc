// ClusterTopics' proposals for the admin handlers: CreateTopics, DeleteTopics, (Incremental)AlterConfigs and
// Metadata's auto-creation each propose one record and wait until this node's state follows it.
#include <fmt/format.h>

#include <map>

#include "core/base/assert.h"
#include "core/cluster/metadata/placement.h"
#include "core/cluster/metadata/topic_identity.h"
#include "core/kafka/admin_limits.h"
#include "core/kafka/cluster_topics.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {

namespace metadata = cluster::metadata;

Result<metadata::CreateTopic> ClusterTopics::plan_topic(const std::string& name, int32_t partitions,
                                                        int16_t replication_factor,
                                                        std::map<std::string, std::string> overrides) {
  const std::vector<int32_t> brokers = image().broker_ids();
  SLUICE_ASSIGN_OR_RETURN(metadata::ReplicaAssignment assignment,
                          metadata::assign_replicas(brokers, partitions, replication_factor, env_.random));
  SLUICE_ASSERT(assignment.size() == static_cast<size_t>(partitions));
  metadata::CreateTopic topic;
  topic.name = name;
  topic.topic_id = metadata::new_topic_id(env_.random);
  topic.configs = std::move(overrides);
  topic.partitions = metadata::numbered_partitions(assignment, 0);
  SLUICE_ASSERT(!metadata::is_reserved_topic_id(topic.topic_id));
  return topic;
}

Status ClusterTopics::check_broker_partitions(const std::vector<metadata::PartitionReplicas>& added) const {
  std::map<int32_t, int64_t> adding;
  for (const metadata::PartitionReplicas& partition : added) {
    for (int32_t replica : partition.replicas) ++adding[replica];
  }
  std::map<int32_t, int64_t> held;
  for (const auto& [name, topic] : image().topics()) {
    for (const metadata::PartitionImage& partition : topic.partitions) {
      for (int32_t replica : partition.replicas) {
        if (adding.contains(replica)) ++held[replica];
      }
    }
  }
  for (const auto& [node, count] : adding) {
    SLUICE_TRY(kafka::check_broker_partitions(node, held[node], count, config_.max_broker_partitions));
  }
  return Status();
}

metadata::TopicId ClusterTopics::new_topic_id() { return metadata::new_topic_id(env_.random); }

Status ClusterTopics::propose_and_follow(metadata::Record record, Instant deadline) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Status> outcomes, propose(metadata::Batch{{std::move(record)}}, deadline));
  SLUICE_ASSERT(outcomes.size() == 1);
  SLUICE_TRY(outcomes.front());
  if (!wait_reconciled(deadline)) {
    // Applied: the change is the cluster's. This node only has not caught up with it yet.
    env_.log.warn("node {}: a metadata change applied but this node did not follow it by the request's deadline",
                  config_.node_id);
  }
  return Status();
}

Status ClusterTopics::create_topic(const metadata::CreateTopic& topic, Instant deadline) {
  SLUICE_ASSERT(!topic.partitions.empty());
  SLUICE_TRY(propose_and_follow(topic, deadline));
  env_.log.info("created topic {} ({} partitions, id {})", topic.name, topic.partitions.size(),
                topic.topic_id.to_string());
  return Status();
}

Result<metadata::CreatePartitions> ClusterTopics::plan_partitions(const metadata::TopicImage& topic, int32_t added,
                                                                  const std::vector<std::vector<int32_t>>& assignment) {
  SLUICE_ASSERT(added >= 1);
  SLUICE_ASSERT(assignment.empty() || assignment.size() == static_cast<size_t>(added));
  metadata::ReplicaAssignment replicas;
  if (assignment.empty()) {
    SLUICE_ASSIGN_OR_RETURN(replicas, metadata::assign_added_partitions(image().broker_ids(), topic, added));
  } else {
    replicas = assignment;
  }
  SLUICE_ASSERT(replicas.size() == static_cast<size_t>(added));
  return metadata::CreatePartitions{metadata::TopicRef{topic.name, topic.id},
                                    metadata::numbered_partitions(replicas, topic.partition_count())};
}

Status ClusterTopics::add_partitions(const metadata::CreatePartitions& record, Instant deadline) {
  SLUICE_ASSERT(!record.partitions.empty());
  SLUICE_TRY(propose_and_follow(record, deadline));
  env_.log.info("topic {}: {} partition(s) added", record.topic.name, record.partitions.size());
  return Status();
}

Status ClusterTopics::delete_topic(const std::string& name, const metadata::TopicId& id, Instant deadline) {
  SLUICE_ASSERT(!id.is_zero());
  SLUICE_TRY(propose_and_follow(metadata::DeleteTopic{metadata::TopicRef{name, id}}, deadline));
  env_.log.info("deleted topic {}", name);
  return Status();
}

Status ClusterTopics::alter_topic_config(const std::string& name, const metadata::TopicId& id,
                                         const std::map<std::string, std::string>& current,
                                         const std::map<std::string, std::string>& next, Instant deadline) {
  metadata::AlterTopicConfig record{metadata::TopicRef{name, id}, {}};
  for (const auto& [key, value] : next) {
    auto it = current.find(key);
    if (it == current.end() || it->second != value) record.changes.push_back({key, value});
  }
  for (const auto& [key, value] : current) {
    if (!next.contains(key)) record.changes.push_back({key, std::nullopt});
  }
  if (record.changes.empty()) return Status();
  return propose_and_follow(std::move(record), deadline);
}

}  // namespace sluice::kafka
