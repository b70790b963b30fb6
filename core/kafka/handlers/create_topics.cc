// CreateTopics (19): Kafka's KRaft rules (ReplicationControlManager.createTopics) on one node. Per topic, in Kafka's
// order: __consumer_offsets (INVALID_REQUEST: only the group coordinator creates it, a departure), the name
// (INVALID_TOPIC_EXCEPTION: empty, "." or "..", over 249 characters, a character outside [a-zA-Z0-9._-], or a
// '.'/'_' collision with an existing topic), existence
// (TOPIC_ALREADY_EXISTS), the configs (INVALID_CONFIG naming the key), then the partition count and replication
// factor (-1 = the broker default; only 1 replica exists here) or a manual assignment (every partition on this
// node, partitions 0..n-1). A name given twice is INVALID_REQUEST, answered once. validate_only checks it all and
// creates nothing. From v5 a success carries the partition count, replication factor and every resulting config.
// Limits (admin_limits.h): a request whose valid topics would make Kafka's controller write more than 10000
// records answers every topic POLICY_VIOLATION and creates nothing, as Kafka 3.9 does; a topic that would take a
// broker past sluice.max.broker.partitions is POLICY_VIOLATION.
// v0 has no validate_only and no error message; v0-3 clients must name a partition count and replication factor
// (KIP-464 is a client-side rule: Kafka's controller takes -1 as the default at every version, and so does this).
// Cluster mode: the replication factor may be up to the registered brokers (Kafka's placement,
// cluster/metadata/placement.h; a manual assignment may name any registered broker), and the topic is created by
// proposing CreateTopic to the cluster metadata: the answer is the record's outcome, given once this node's topic
// table has the topic (an immediately following Metadata or Produce here finds it).
#include "core/protocol/messages/create_topics.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/cluster/metadata/placement.h"
#include "core/kafka/admin_limits.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/handlers/replica_assignment.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;

// What a valid request turns into.
struct Plan {
  int32_t partitions = 0;
  int16_t replication_factor = 1;
  storage::TopicConfig config;
  // Cluster mode: each partition's replicas (a manual assignment's, else empty: placed when proposed).
  std::vector<std::vector<int32_t>> assignment;
};

// Kafka's Topic.unifyCollisionChars: "a.b" and "a_b" would share metric names, so only one may exist.
std::string unify_collision_chars(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

Status check_name(const TopicTable& topics, const std::string& name) {
  if (is_coordinator_topic(name)) return internal_topic_creation(name);
  SLUICE_TRY(validate_topic_name(name));
  if (topics.find(name) != nullptr) {
    return kafka_error(ErrorCode::kTopicAlreadyExists, fmt::format("Topic '{}' already exists.", name));
  }
  if (name.find_first_of("._") == std::string::npos) return Status();
  const std::string unified = unify_collision_chars(name);
  for (const TopicInfo* existing : topics.all()) {
    if (unify_collision_chars(existing->name) == unified) {
      return kafka_error(ErrorCode::kInvalidTopicException,
                         fmt::format("Topic '{}' collides with existing topic: {}", name, existing->name));
    }
  }
  return Status();
}

Result<storage::TopicConfig> topic_config(const BrokerConfig& broker, const CreateTopicsRequest::Topic& topic) {
  std::map<std::string, std::string> overrides;
  std::string nulls;
  for (const CreateTopicsRequest::Config& config : topic.configs) {
    if (!config.value) {
      nulls += (nulls.empty() ? "" : ",") + config.name;
    } else {
      overrides[config.name] = *config.value;  // a key given twice: the last one wins, as in Kafka's map
    }
  }
  if (!nulls.empty()) {
    return kafka_error(ErrorCode::kInvalidConfig, "Null value not supported for topic configs: " + nulls);
  }
  return storage::TopicConfig::from_overrides(overrides, broker.storage.topic_defaults);
}

// A manual assignment: each partition's replicas registered brokers (on one node: this node), each once, the
// partitions 0..n-1. Fills plan.partitions, and in cluster mode the assignment and replication factor.
Status assigned_partitions(const Broker& broker, const CreateTopicsRequest::Topic& topic, Plan& plan) {
  if (topic.replication_factor != -1) {
    return kafka_error(ErrorCode::kInvalidRequest,
                       "A manual partition assignment was specified, but replication factor was not set to -1.");
  }
  if (topic.num_partitions != -1) {
    return kafka_error(ErrorCode::kInvalidRequest,
                       "A manual partition assignment was specified, but numPartitions was not set to -1.");
  }
  std::set<int32_t> seen;
  for (const CreateTopicsRequest::Assignment& assignment : topic.assignments) {
    if (!seen.insert(assignment.partition_index).second) {
      return invalid_replica_assignment(
          fmt::format("Found multiple manual partition assignments for partition {}", assignment.partition_index));
    }
    SLUICE_TRY(check_manual_replicas(broker, assignment.broker_ids));
  }
  const auto count = static_cast<int32_t>(seen.size());
  if (*seen.begin() != 0 || *seen.rbegin() != count - 1) {
    return invalid_replica_assignment("partitions should be a consecutive 0-based integer sequence");
  }
  plan.partitions = count;
  if (broker.cluster() != nullptr) {
    plan.assignment.resize(static_cast<size_t>(count));
    for (const CreateTopicsRequest::Assignment& assignment : topic.assignments) {
      plan.assignment[static_cast<size_t>(assignment.partition_index)] = assignment.broker_ids;
    }
    plan.replication_factor = static_cast<int16_t>(plan.assignment.front().size());
  }
  return Status();
}

Status partition_count(const Broker& node, const CreateTopicsRequest::Topic& topic, Plan& plan) {
  const BrokerConfig& broker = node.config();
  if (!topic.assignments.empty()) return assigned_partitions(node, topic, plan);
  if (topic.replication_factor < -1 || topic.replication_factor == 0) {
    return kafka_error(ErrorCode::kInvalidReplicationFactor,
                       "Replication factor must be larger than 0, or -1 to use the default value.");
  }
  if (topic.num_partitions < -1 || topic.num_partitions == 0) {
    return kafka_error(ErrorCode::kInvalidPartitions, "Number of partitions was set to an invalid non-positive value.");
  }
  const int16_t replicas =
      topic.replication_factor == -1 ? broker.default_replication_factor : topic.replication_factor;
  plan.partitions = topic.num_partitions == -1 ? broker.num_partitions : topic.num_partitions;
  if (broker.cluster_mode()) {
    plan.replication_factor = replicas;  // checked against the registered brokers when placed
    return Status();
  }
  if (replicas > 1) {
    return kafka_error(ErrorCode::kInvalidReplicationFactor,
                       fmt::format("Unable to replicate the partition {} time(s): The target replication factor of {} "
                                   "cannot be reached because only 1 broker(s) are registered.",
                                   replicas, replicas));
  }
  return Status();
}

Result<Plan> check_topic(RequestContext& ctx, const CreateTopicsRequest::Topic& topic) {
  const BrokerConfig& broker = ctx.broker.config();
  SLUICE_TRY(check_name(ctx.broker.topics(), topic.name));
  Plan plan;
  SLUICE_ASSIGN_OR_RETURN(plan.config, topic_config(broker, topic));
  SLUICE_TRY(partition_count(ctx.broker, topic, plan));
  return plan;
}

// Cluster mode: the CreateTopic record (placed by Kafka's rule unless the request assigned the replicas).
Result<cluster::metadata::CreateTopic> topic_record(ClusterTopics& cluster, const std::string& name, const Plan& plan) {
  if (plan.assignment.empty()) {
    return cluster.plan_topic(name, plan.partitions, plan.replication_factor, plan.config.overrides());
  }
  cluster::metadata::CreateTopic record;
  record.name = name;
  record.topic_id = cluster.new_topic_id();
  record.configs = plan.config.overrides();
  record.partitions = cluster::metadata::numbered_partitions(plan.assignment, 0);
  return record;
}

CreateTopicsResponse::Topic failed(const std::string& name, const Status& status) {
  CreateTopicsResponse::Topic result;
  result.name = name;
  result.error_code = static_cast<int16_t>(to_error_code(status));
  result.error_message = status.message();
  return result;
}

CreateTopicsResponse::Topic created(const std::string& name, const protocol::Uuid& id, const Plan& plan) {
  CreateTopicsResponse::Topic result;
  result.name = name;
  result.topic_id = id;
  result.num_partitions = plan.partitions;
  result.replication_factor = plan.replication_factor;
  std::vector<storage::ConfigEntry> entries = plan.config.describe();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const storage::ConfigEntry& entry : entries) {
    result.configs->push_back(
        {entry.name, entry.value, entry.read_only, static_cast<int8_t>(entry.source), entry.sensitive});
  }
  return result;
}

CreateTopicsResponse::Topic create_in_cluster(ClusterTopics& cluster, const CreateTopicsRequest::Topic& topic,
                                              const Plan& plan, bool validate_only, Instant deadline) {
  Result<cluster::metadata::CreateTopic> record = topic_record(cluster, topic.name, plan);
  if (!record.ok()) return failed(topic.name, record.status());
  if (Status room = cluster.check_broker_partitions(record->partitions); !room.ok()) return failed(topic.name, room);
  if (validate_only) return created(topic.name, protocol::Uuid::zero(), plan);
  if (Status made = cluster.create_topic(*record, deadline); !made.ok()) return failed(topic.name, made);
  return created(topic.name, record->topic_id, plan);
}

CreateTopicsResponse::Topic create_one(RequestContext& ctx, const CreateTopicsRequest::Topic& topic, bool validate_only,
                                       Instant deadline) {
  Result<Plan> checked = check_topic(ctx, topic);
  if (!checked.ok()) return failed(topic.name, checked.status());
  if (ClusterTopics* cluster = ctx.broker.cluster()) {
    return create_in_cluster(*cluster, topic, *checked, validate_only, deadline);
  }
  if (validate_only) {
    if (Status room = ctx.broker.topics().check_room(topic.name, checked->partitions); !room.ok()) {
      return failed(topic.name, room);
    }
    return created(topic.name, protocol::Uuid::zero(), *checked);
  }
  Result<const TopicInfo*> made = ctx.broker.topics().create(topic.name, checked->partitions, checked->config);
  if (!made.ok()) return failed(topic.name, made.status());
  return created(topic.name, (*made)->id, *checked);
}

// The metadata records Kafka's controller would write for the valid topics (admin_limits.h): a TopicRecord, a
// ConfigRecord per key and a PartitionRecord per partition each.
int64_t records_written(RequestContext& ctx, const CreateTopicsRequest& request,
                        const std::map<std::string, int>& mentions) {
  int64_t records = 0;
  for (const CreateTopicsRequest::Topic& topic : request.topics) {
    if (mentions.at(topic.name) != 1) continue;
    Result<Plan> plan = check_topic(ctx, topic);
    if (!plan.ok()) continue;
    std::set<std::string> keys;
    for (const CreateTopicsRequest::Config& config : topic.configs) keys.insert(config.name);
    records += 1 + static_cast<int64_t>(keys.size()) + plan->partitions;
  }
  return records;
}

// Past kMaxRecordsPerRequest Kafka's controller creates nothing and answers every topic POLICY_VIOLATION.
CreateTopicsResponse refuse_all(const CreateTopicsRequest& request) {
  CreateTopicsResponse response;
  std::set<std::string> answered;
  for (const CreateTopicsRequest::Topic& topic : request.topics) {
    if (answered.insert(topic.name).second) response.topics.push_back(failed(topic.name, excessive_batch()));
  }
  return response;
}

Result<CreateTopicsResponse> create_topics(RequestContext& ctx, const CreateTopicsRequest& request) {
  std::map<std::string, int> mentions;
  for (const CreateTopicsRequest::Topic& topic : request.topics) ++mentions[topic.name];
  if (records_written(ctx, request, mentions) > kMaxRecordsPerRequest) return refuse_all(request);
  CreateTopicsResponse response;
  std::set<std::string> answered_duplicates;
  const Instant deadline = admin_deadline(ctx, request.timeout_ms);
  for (const CreateTopicsRequest::Topic& topic : request.topics) {
    if (mentions[topic.name] == 1) {
      response.topics.push_back(create_one(ctx, topic, request.validate_only, deadline));
    } else if (answered_duplicates.insert(topic.name).second) {
      response.topics.push_back(failed(topic.name, kafka_error(ErrorCode::kInvalidRequest, "Duplicate topic name.")));
    }
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_create_topics(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, create_topics);
}

}  // namespace sluice::kafka
