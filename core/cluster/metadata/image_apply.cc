// MetadataImage's appliers: one per record type, each validating fully before it changes anything, so that a
// rejected record leaves the image as it was. The messages follow Kafka 3.9's controller
// (ReplicationControlManager, ClusterControlManager, ProducerIdControlManager) where it has the same refusal.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/base/assert.h"
#include "core/cluster/metadata/image.h"
#include "core/cluster/metadata/topic_identity.h"
#include "core/protocol/error_codes.h"

namespace sluice::cluster::metadata {
namespace {

Status invalid_request(std::string message) { return kafka_error(ErrorCode::kInvalidRequest, std::move(message)); }

Status invalid_assignment(std::string message) {
  return kafka_error(ErrorCode::kInvalidReplicaAssignment, std::move(message));
}

// A refusal of an internal record whose Kafka code Sluice's table does not carry: the kind says what happened.
Status internal_refusal(Code kind, std::string message) {
  return Status(kind, std::move(message), wire_code(ErrorCode::kUnknownServerError));
}

// The one rule for a producer-id block, shared by the proposer (allocate_producer_ids) and apply.
Status check_producer_id_block(const MetadataImage& image, const AllocateProducerIds& block) {
  if (image.broker(block.node_id) == nullptr) {
    return internal_refusal(Code::kNotFound, fmt::format("no broker registration found for node {} (Kafka: "
                                                         "STALE_BROKER_EPOCH)", block.node_id));
  }
  if (block.count < 1) return invalid_request(fmt::format("a producer-id block of {} ids", block.count));
  if (block.first_producer_id != image.next_producer_id()) {
    return internal_refusal(Code::kAlreadyExists,
                            fmt::format("the producer-id block at {} is not the next one, which starts at {}",
                                        block.first_producer_id, image.next_producer_id()));
  }
  if (block.first_producer_id > std::numeric_limits<int64_t>::max() - block.count) {
    return kafka_error(ErrorCode::kUnknownServerError,
                       "Exhausted all producerIds as the next block's end producerId has exceeded the int64 limit");
  }
  return Status();
}

bool same_endpoint(const BrokerRegistration& existing, const RegisterBroker& record) {
  return existing.host == record.host && existing.port == record.port && existing.rack == record.rack;
}

}  // namespace

Status MetadataImage::apply_register_broker(Index index, const RegisterBroker& r) {
  if (r.node_id < 0) return invalid_request(fmt::format("node id {} is negative", r.node_id));
  if (r.host.empty()) return invalid_request(fmt::format("node {} registers no host", r.node_id));
  if (r.port < 1 || r.port > 65535) return invalid_request(fmt::format("node {}: port {}", r.node_id, r.port));
  if (r.rack && r.rack->empty()) return invalid_request(fmt::format("node {}: an empty rack name", r.node_id));
  auto it = brokers_.find(r.node_id);
  if (it != brokers_.end()) {
    const BrokerRegistration& existing = it->second;
    // Incarnations only grow, so a smaller one is an old process or a second node claiming the id, and an equal
    // one with another endpoint is a second node. An equal one with the same endpoint is a retried proposal.
    const bool older = r.incarnation < existing.incarnation;
    if (older || (r.incarnation == existing.incarnation && !same_endpoint(existing, r))) {
      return internal_refusal(Code::kAlreadyExists,
                              fmt::format("node {} is registered at {}:{} with incarnation {}; this registration "
                                          "({}:{}, incarnation {}) is another broker or an older one (Kafka: "
                                          "DUPLICATE_BROKER_REGISTRATION)", r.node_id, existing.host, existing.port,
                                          existing.incarnation, r.host, r.port, r.incarnation));
    }
    if (r.incarnation == existing.incarnation) return Status();  // nothing changes, its broker epoch included
  }
  brokers_[r.node_id] = BrokerRegistration{r.node_id, r.host, r.port, r.rack, r.incarnation, index};
  return Status();
}

Status MetadataImage::check_replicas(int32_t partition, const std::vector<int32_t>& replicas,
                                     std::optional<size_t> replication_factor) const {
  if (replicas.empty()) {
    return invalid_assignment(fmt::format("The manual partition assignment of partition {} includes an empty "
                                          "replica list.", partition));
  }
  std::vector<int32_t> sorted = replicas;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (brokers_.count(sorted[i]) == 0) {
      return invalid_assignment(fmt::format("The manual partition assignment includes broker {}, but no such "
                                            "broker is registered.", sorted[i]));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return invalid_assignment(fmt::format("The manual partition assignment includes the broker {} more than "
                                            "once.", sorted[i]));
    }
  }
  if (replication_factor && replicas.size() != *replication_factor) {
    return invalid_assignment(fmt::format("The manual partition assignment includes a partition with {} replica(s), "
                                          "but this is not consistent with previous partitions, which have {} "
                                          "replica(s).", replicas.size(), *replication_factor));
  }
  return Status();
}

Status MetadataImage::apply_create_topic(const CreateTopic& r) {
  SLUICE_TRY(check_topic_name(r.name));
  if (topics_.count(r.name) != 0) {
    return kafka_error(ErrorCode::kTopicAlreadyExists, fmt::format("Topic '{}' already exists.", r.name));
  }
  if (r.name.find_first_of("._") != std::string::npos) {
    for (const auto& [existing, topic] : topics_) {
      if (topic_names_collide(r.name, existing)) {
        return kafka_error(ErrorCode::kInvalidTopicException,
                           fmt::format("Topic '{}' collides with existing topic: {}", r.name, existing));
      }
    }
  }
  if (is_reserved_topic_id(r.topic_id)) return invalid_request(fmt::format("topic '{}': reserved topic id", r.name));
  if (auto taken = topic_names_by_id_.find(r.topic_id); taken != topic_names_by_id_.end()) {
    return invalid_request(fmt::format("topic '{}': id {} already names topic '{}'", r.name, r.topic_id.to_string(),
                                       taken->second));
  }
  if (r.partitions.empty()) {
    return kafka_error(ErrorCode::kInvalidPartitions, "Number of partitions must be larger than 0.");
  }
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const PartitionReplicas& p = r.partitions[i];
    if (p.partition != static_cast<int32_t>(i)) {
      return invalid_assignment("partitions should be a consecutive 0-based integer sequence");
    }
    SLUICE_TRY(check_replicas(p.partition, p.replicas, r.partitions.front().replicas.size()));
  }
  for (const auto& [name, value] : r.configs) {
    if (name.empty()) return kafka_error(ErrorCode::kInvalidConfig, "a config override without a name");
  }
  TopicImage topic{r.name, r.topic_id, r.configs, {}};
  for (const PartitionReplicas& p : r.partitions) topic.partitions.push_back(PartitionImage{p.replicas});
  topic_names_by_id_.emplace(r.topic_id, r.name);
  topics_.emplace(r.name, std::move(topic));
  return Status();
}

Result<TopicImage*> MetadataImage::resolve(const TopicRef& ref) {
  if (!ref.id.is_zero()) {
    auto by_id = topic_names_by_id_.find(ref.id);
    if (by_id == topic_names_by_id_.end()) {
      return kafka_error(ErrorCode::kUnknownTopicId, fmt::format("topic id {} does not exist", ref.id.to_string()));
    }
    if (!ref.name.empty() && ref.name != by_id->second) {
      return kafka_error(ErrorCode::kUnknownTopicId, fmt::format("topic id {} names '{}', not '{}'",
                                                                 ref.id.to_string(), by_id->second, ref.name));
    }
    auto topic = topics_.find(by_id->second);
    SLUICE_ASSERT(topic != topics_.end());
    return &topic->second;
  }
  if (ref.name.empty()) return invalid_request("the record names no topic");
  auto topic = topics_.find(ref.name);
  if (topic == topics_.end()) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", ref.name));
  }
  return &topic->second;
}

Status MetadataImage::apply_delete_topic(const DeleteTopic& r) {
  SLUICE_ASSIGN_OR_RETURN(TopicImage * topic, resolve(r.topic));
  const size_t erased_ids = topic_names_by_id_.erase(topic->id);
  SLUICE_ASSERT(erased_ids == 1);
  const size_t erased_topics = topics_.erase(std::string(topic->name));
  SLUICE_ASSERT(erased_topics == 1);
  return Status();
}

Status MetadataImage::apply_alter_topic_config(const AlterTopicConfig& r) {
  SLUICE_ASSIGN_OR_RETURN(TopicImage * topic, resolve(r.topic));
  std::map<std::string, std::string> configs = topic->configs;
  for (const ConfigChange& change : r.changes) {
    if (change.name.empty()) return kafka_error(ErrorCode::kInvalidConfig, "a config change without a name");
    if (change.value) {
      configs[change.name] = *change.value;
    } else {
      configs.erase(change.name);
    }
  }
  topic->configs = std::move(configs);
  return Status();
}

Status MetadataImage::apply_create_partitions(const CreatePartitions& r) {
  SLUICE_ASSIGN_OR_RETURN(TopicImage * topic, resolve(r.topic));
  const int32_t existing = topic->partition_count();
  if (r.partitions.empty()) {
    return kafka_error(ErrorCode::kInvalidPartitions, fmt::format("Topic already has {} partition(s).", existing));
  }
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const PartitionReplicas& p = r.partitions[i];
    if (static_cast<int64_t>(p.partition) != existing + static_cast<int64_t>(i)) {
      return invalid_assignment(fmt::format("new partitions of '{}' should be numbered on from {}, in order; found "
                                            "{} at position {}", topic->name, existing, p.partition, i));
    }
    SLUICE_TRY(check_replicas(p.partition, p.replicas, static_cast<size_t>(topic->replication_factor())));
  }
  for (const PartitionReplicas& p : r.partitions) topic->partitions.push_back(PartitionImage{p.replicas});
  return Status();
}

Status MetadataImage::apply_allocate_producer_ids(const AllocateProducerIds& r) {
  SLUICE_TRY(check_producer_id_block(*this, r));
  producer_id_blocks_[r.node_id] = ProducerIdBlock{r.node_id, r.first_producer_id, r.count};
  next_producer_id_ = r.first_producer_id + r.count;
  SLUICE_ASSERT(next_producer_id_ > r.first_producer_id);
  return Status();
}

Status MetadataImage::apply_record_leader(const RecordLeader& r) {
  SLUICE_ASSIGN_OR_RETURN(TopicImage * topic, resolve(r.topic));
  if (r.partition < 0 || r.partition >= topic->partition_count()) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition,
                       fmt::format("partition {}-{} does not exist", topic->name, r.partition));
  }
  PartitionImage& partition = topic->partitions[static_cast<size_t>(r.partition)];
  if (r.leader_epoch < 0) return invalid_request(fmt::format("leader epoch {} is negative", r.leader_epoch));
  if (r.leader != kNoLeader &&
      std::find(partition.replicas.begin(), partition.replicas.end(), r.leader) == partition.replicas.end()) {
    return invalid_request(fmt::format("node {} is not a replica of {}-{}", r.leader, topic->name, r.partition));
  }
  if (r.leader_epoch < partition.leader_epoch) {
    return kafka_error(ErrorCode::kFencedLeaderEpoch,
                       fmt::format("{}-{}: leader epoch {} is older than the recorded {}", topic->name, r.partition,
                                   r.leader_epoch, partition.leader_epoch));
  }
  // One leader per epoch (a raft term has at most one); losing it within the epoch (check-quorum) is allowed.
  if (r.leader_epoch == partition.leader_epoch && partition.leader != kNoLeader && r.leader != kNoLeader &&
      r.leader != partition.leader) {
    return kafka_error(ErrorCode::kFencedLeaderEpoch,
                       fmt::format("{}-{}: leader epoch {} already has leader {}", topic->name, r.partition,
                                   r.leader_epoch, partition.leader));
  }
  partition.leader = r.leader;
  partition.leader_epoch = r.leader_epoch;
  return Status();
}

Result<AllocateProducerIds> allocate_producer_ids(const MetadataImage& image, int32_t node_id, int32_t count) {
  SLUICE_ASSERT(count >= 1);
  const AllocateProducerIds record{node_id, image.next_producer_id(), count};
  SLUICE_TRY(check_producer_id_block(image, record));
  return record;
}

}  // namespace sluice::cluster::metadata
