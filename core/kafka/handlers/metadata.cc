// Metadata (3): this node as the only broker and controller, each partition's leader, epoch and replicas as its
// cluster::Partition tells them (this node, epoch 0, itself as the only replica and ISR), with auto-creation of
// the topics named (auto.create.topics.enable, and the request's allow_auto_topic_creation from v4). Version quirks,
// as KafkaApis.handleTopicMetadataRequest has them:
//   - v0: an empty topic list means every topic (v1+: null does, empty means none);
//   - v8+: authorized operations when asked (cluster ones v8-10 only); with no authorizer Kafka grants every
//     operation the resource type supports;
//   - v10+: topic ids; v10 and v11 may not ask by id (nor with a null name): INVALID_REQUEST for every topic named;
//   - v12: a request naming any topic id is a lookup by id (its names are ignored); an unknown id is answered
//     UNKNOWN_TOPIC_ID with a null name, and nothing is created.
// A topic named (or an id given) more than once is answered once, as Kafka's handler takes the request's topics
// as a set: a request naming one large topic a million times costs one description, not a million.
// Cluster mode: the brokers are the registered ones and the controller is the metadata group's leader (-1 while
// none is known); every node answers for every topic of the cluster metadata. A partition's replicas are the
// metadata's; its leader and epoch this node's replica's when it hosts one that knows a leader, else the last
// RecordLeader (LEADER_NOT_AVAILABLE while there is none); its ISR the leader's view when this node leads it, else
// the replicas. Auto-creation proposes CreateTopic (num.partitions, default.replication.factor), and only once the
// node has caught up with the cluster metadata (ClusterTopics::caught_up): before, a topic it does not have yet is
// LEADER_NOT_AVAILABLE (retriable), never created nor refused.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>

#include "core/base/assert.h"
#include "core/cluster/partition_manager.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/metadata.h"

namespace sluice::kafka {
namespace {

using protocol::MetadataRequest;
using protocol::MetadataResponse;

constexpr int16_t kFirstTopicIdVersion = 12;

// Kafka's AclOperation codes, as bits of an authorized-operations field (Utils.to32BitField).
int32_t operation_bits(std::initializer_list<int> codes) {
  int32_t bits = 0;
  for (int code : codes) bits |= 1 << code;
  return bits;
}

// AclEntry.supportedOperations: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10,
// ALTER_CONFIGS 11 for a topic; CREATE, ALTER, DESCRIBE, CLUSTER_ACTION 9, DESCRIBE_CONFIGS, ALTER_CONFIGS and
// IDEMPOTENT_WRITE 12 for the cluster.
const int32_t kTopicOperations = operation_bits({3, 4, 5, 6, 7, 8, 10, 11});
const int32_t kClusterOperations = operation_bits({5, 7, 8, 9, 10, 11, 12});

MetadataResponse::Partition describe_partition(const cluster::PartitionManager& partitions, int32_t node_id,
                                               const std::string& topic, int32_t index) {
  const std::shared_ptr<cluster::Partition> partition = partitions.find({topic, index});
  MetadataResponse::Partition out;
  out.partition_index = index;
  if (partition == nullptr || partition->storage_offline()) {
    // The topic table lists a topic only while all its partitions exist: this one's log did not load, or it went
    // offline since. Kafka's metadata for a replica in an offline log directory with no other replica: no leader,
    // listed offline.
    SLUICE_ASSERT(partition != nullptr || partitions.offline({topic, index}) != nullptr);
    out.leader_id = -1;
    out.replica_nodes = {node_id};
    out.isr_nodes = {node_id};
    out.offline_replicas = {node_id};
    out.error_code = wire_code(ErrorCode::kLeaderNotAvailable);
    return out;
  }
  out.leader_id = partition->leader();
  out.leader_epoch = partition->leader_epoch();
  out.replica_nodes = partition->replicas();
  out.isr_nodes = partition->in_sync_replicas();
  return out;
}

// Cluster mode: a partition of a topic of the cluster metadata.
MetadataResponse::Partition describe_placed(const cluster::PartitionManager& partitions, int32_t node_id,
                                            const std::string& topic,
                                            const cluster::metadata::PartitionImage& placement, int32_t index) {
  MetadataResponse::Partition out;
  out.partition_index = index;
  out.replica_nodes = placement.replicas;
  out.isr_nodes = placement.replicas;
  out.leader_id = placement.leader;
  out.leader_epoch = placement.leader_epoch;
  const std::shared_ptr<cluster::Partition> local = partitions.find({topic, index});
  if (local != nullptr && local->replicated() && local->leader() >= 0) {
    out.leader_id = local->leader();
    out.leader_epoch = local->leader_epoch();
    if (local->is_leader()) out.isr_nodes = local->in_sync_replicas();
  }
  // This node's replica did not load (it never joined the raft group here), or its log went offline since: the
  // others lead without it.
  if (partitions.offline({topic, index}) != nullptr || (local != nullptr && local->storage_offline())) {
    out.offline_replicas.push_back(node_id);
  }
  if (out.leader_id < 0) out.error_code = wire_code(ErrorCode::kLeaderNotAvailable);
  return out;
}

MetadataResponse::Topic describe(RequestContext& ctx, const TopicInfo& info) {
  const cluster::PartitionManager& partitions = ctx.broker.partitions();
  MetadataResponse::Topic topic;
  topic.name = info.name;
  topic.topic_id = info.id;
  topic.is_internal = is_internal_topic(info.name);
  const ClusterTopics* cluster = ctx.broker.cluster();
  const cluster::metadata::TopicImage* placed = cluster != nullptr ? cluster->image().topic(info.name) : nullptr;
  if (placed != nullptr && placed->id == info.id) {
    // Equal unless partitions were added since the reconciler's last pass: answer what both know.
    const int32_t count = std::min(placed->partition_count(), info.partitions);
    for (int32_t p = 0; p < count; ++p) {
      topic.partitions.push_back(describe_placed(partitions, ctx.broker.config().node_id, info.name,
                                                 placed->partitions[static_cast<size_t>(p)], p));
    }
    return topic;
  }
  // One node's topics, and in cluster mode the ones it keeps local (__consumer_offsets), or one the metadata just
  // deleted or made again, which the reconciler has not followed yet.
  for (int32_t p = 0; p < info.partitions; ++p) {
    if (cluster != nullptr && partitions.find({info.name, p}) == nullptr) {
      MetadataResponse::Partition& missing = topic.partitions.emplace_back();
      missing.partition_index = p;
      missing.leader_id = -1;
      missing.error_code = wire_code(ErrorCode::kLeaderNotAvailable);
      continue;
    }
    topic.partitions.push_back(describe_partition(partitions, ctx.broker.config().node_id, info.name, p));
  }
  return topic;
}

// Metadata's auto-creation in cluster mode: CreateTopic with the broker defaults; the outcome, and the topic once
// this node's table has it.
Result<const TopicInfo*> create_in_cluster(RequestContext& ctx, ClusterTopics& cluster, const std::string& name) {
  const BrokerConfig& config = ctx.broker.config();
  if (!config.auto_create_topics_enable || is_internal_topic(name)) return nullptr;
  SLUICE_TRY(validate_topic_name(name));
  SLUICE_ASSIGN_OR_RETURN(cluster::metadata::CreateTopic record,
                          cluster.plan_topic(name, config.num_partitions, config.default_replication_factor, {}));
  SLUICE_TRY(cluster.check_broker_partitions(record.partitions));
  const Status created = cluster.create_topic(record, admin_deadline(ctx, 0));
  if (!created.ok() && to_error_code(created) != ErrorCode::kTopicAlreadyExists) return created;
  return ctx.broker.topics().find(name);
}

Result<const TopicInfo*> find_or_create(RequestContext& ctx, const std::string& name) {
  TopicTable& topics = ctx.broker.topics();
  ClusterTopics* cluster = ctx.broker.cluster();
  if (cluster == nullptr) return topics.find_or_create(name);
  if (const TopicInfo* found = topics.find(name)) return found;
  if (!cluster->caught_up()) {
    // A restarted node replaying the metadata log: the topic may exist, and the brokers are not all known yet, so
    // creating it would be wrong either way (INVALID_REPLICATION_FACTOR with no broker registered). Retriable, as
    // Kafka answers a topic it has no leader for yet.
    return kafka_error(ErrorCode::kLeaderNotAvailable,
                       fmt::format("node {} has not caught up with the cluster metadata yet", cluster->node_id()));
  }
  return create_in_cluster(ctx, *cluster, name);
}

MetadataResponse::Topic named_topic(RequestContext& ctx, const std::string& name, bool may_create) {
  TopicTable& topics = ctx.broker.topics();
  Result<const TopicInfo*> found = may_create ? find_or_create(ctx, name) : topics.find(name);
  if (found.ok() && *found != nullptr) return describe(ctx, **found);
  // Not created: Kafka still tells an invalid name (INVALID_TOPIC_EXCEPTION) from an unknown one.
  const Status status = found.ok() ? validate_topic_name(name) : found.status();
  MetadataResponse::Topic missing;
  missing.name = name;
  missing.error_code = status.ok() ? wire_code(ErrorCode::kUnknownTopicOrPartition) : wire_code(to_error_code(status));
  if (!found.ok()) ctx.env.log.info("metadata for topic '{}': {}", name, found.status().to_string());
  return missing;
}

MetadataResponse::Topic topic_by_id(RequestContext& ctx, const protocol::Uuid& id) {
  if (const TopicInfo* info = ctx.broker.topics().find_by_id(id)) return describe(ctx, *info);
  MetadataResponse::Topic unknown;
  unknown.error_code = static_cast<int16_t>(ErrorCode::kUnknownTopicId);
  unknown.name = std::nullopt;
  unknown.topic_id = id;
  return unknown;
}

// Kafka's answer to a request it refuses (MetadataRequest.getErrorResponse): each topic named, with the error and
// no partitions, and no brokers.
MetadataResponse refuse_all(const MetadataRequest& request, ErrorCode error) {
  MetadataResponse response;
  for (const MetadataRequest::Topic& topic : *request.topics) {
    MetadataResponse::Topic& out = response.topics.emplace_back();
    out.error_code = static_cast<int16_t>(error);
    out.name = topic.name.value_or("");
    out.topic_id = topic.topic_id;
  }
  return response;
}

// v10 and v11 carry the fields of a lookup by id, which Kafka does not serve before v12. A lookup by name needs
// every name (a lookup by id ignores them).
bool names_are_valid(const MetadataRequest& request, int16_t version) {
  const bool by_id = request.by_topic_id();
  if (by_id && version < kFirstTopicIdVersion) return false;
  return by_id || std::all_of(request.topics->begin(), request.topics->end(),
                              [](const MetadataRequest::Topic& topic) { return topic.name.has_value(); });
}

std::vector<MetadataResponse::Topic> requested_topics(RequestContext& ctx, const MetadataRequest& request) {
  std::vector<MetadataResponse::Topic> out;
  if (request.all_topics(ctx.version())) {
    for (const TopicInfo* info : ctx.broker.topics().all()) out.push_back(describe(ctx, *info));
  } else if (request.by_topic_id()) {
    std::set<protocol::Uuid> seen;
    for (const MetadataRequest::Topic& topic : *request.topics) {
      if (!topic.topic_id.is_zero() && seen.insert(topic.topic_id).second) {
        out.push_back(topic_by_id(ctx, topic.topic_id));
      }
    }
  } else {
    const bool may_create = ctx.version() < 4 || request.allow_auto_topic_creation;
    std::set<std::string_view> seen;
    for (const MetadataRequest::Topic& topic : *request.topics) {
      if (seen.insert(*topic.name).second) out.push_back(named_topic(ctx, *topic.name, may_create));
    }
  }
  return out;
}

Result<MetadataResponse> metadata(RequestContext& ctx, const MetadataRequest& request) {
  if (!request.all_topics(ctx.version()) && !names_are_valid(request, ctx.version())) {
    return refuse_all(request, ErrorCode::kInvalidRequest);
  }
  const BrokerConfig& config = ctx.broker.config();
  MetadataResponse response;
  response.cluster_id = config.cluster_id;
  response.topics = requested_topics(ctx, request);  // first: auto-creation may wait, and brokers may register
  if (const ClusterTopics* cluster = ctx.broker.cluster()) {
    const raft::NodeId leader = cluster->node().metadata_leader();
    response.controller_id = leader == raft::kNoNode ? -1 : static_cast<int32_t>(leader);
    for (const auto& [id, broker] : cluster->image().brokers()) {
      response.brokers.push_back({broker.node_id, broker.host, broker.port, broker.rack});
    }
  } else {
    response.brokers.push_back({config.node_id, config.advertised_host, config.advertised_port, std::nullopt});
    response.controller_id = config.node_id;
  }
  if (request.include_cluster_authorized_operations) response.cluster_authorized_operations = kClusterOperations;
  if (request.include_topic_authorized_operations) {
    for (MetadataResponse::Topic& topic : response.topics) {
      if (topic.error_code != static_cast<int16_t>(ErrorCode::kUnknownTopicId)) {
        topic.topic_authorized_operations = kTopicOperations;
      }
    }
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_metadata(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, metadata);
}

}  // namespace sluice::kafka
