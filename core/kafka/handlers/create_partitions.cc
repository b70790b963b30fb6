// CreatePartitions (37): Kafka 3.9's KRaft rules (ControllerApis.createPartitions and
// ReplicationControlManager.createPartitions). Per topic: a name given twice is INVALID_REQUEST ("Duplicate topic
// name.", answered once, before the others); an unknown topic UNKNOWN_TOPIC_OR_PARTITION; a count equal to or
// below the current one INVALID_PARTITIONS; a manual assignment must give one replica list per added partition and
// each list the topic's replication factor of distinct registered brokers (INVALID_REPLICA_ASSIGNMENT). Without
// one, the new partitions continue the topic's placement. validate_only checks it all and adds nothing.
// Departure: __consumer_offsets keeps its partition count (INVALID_REQUEST): the coordinator maps a group to a
// partition by that count, so adding partitions would move groups away from their committed offsets.
// Limits (admin_limits.h): the topic whose new partitions would take the request past Kafka's 10000 records gets
// POLICY_VIOLATION ("Unable to perform excessively large batch operation."), as do later ones that would; Kafka 3.9
// answers that topic UNKNOWN_SERVER_ERROR (its BoundedList's exception, caught per topic): a departure for a clear
// code. A topic that would take a broker past sluice.max.broker.partitions: POLICY_VIOLATION.
// Cluster mode: the CreatePartitions record is proposed to the cluster metadata; the answer waits until this node's
// topic table has the new count, and every replica makes its partitions as it follows the metadata.
#include "core/protocol/messages/create_partitions.h"

#include <fmt/format.h>

#include <map>

#include "core/group/records.h"
#include "core/kafka/admin_limits.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/handlers/replica_assignment.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;

// What a valid request adds: `added` partitions, with these replicas (empty: placed by the broker).
struct Plan {
  int32_t added = 0;
  std::vector<std::vector<int32_t>> assignment;
};

Result<Plan> check_topic(Broker& broker, const CreatePartitionsRequest::Topic& topic) {
  const TopicInfo* info = broker.topics().find(topic.name);
  if (info == nullptr) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition.");
  }
  if (topic.name == group::kOffsetsTopic) {
    return kafka_error(
        ErrorCode::kInvalidRequest,
        fmt::format("The partition count of {} cannot change: groups map to its partitions by it", topic.name));
  }
  if (topic.count == info->partitions) {
    return kafka_error(ErrorCode::kInvalidPartitions,
                       fmt::format("Topic already has {} partition(s).", info->partitions));
  }
  if (topic.count < info->partitions) {
    return kafka_error(ErrorCode::kInvalidPartitions,
                       fmt::format("The topic {} currently has {} partition(s); {} would not be an increase.",
                                   topic.name, info->partitions, topic.count));
  }
  Plan plan;
  plan.added = topic.count - info->partitions;
  if (!topic.assignments) return plan;
  if (topic.assignments->size() != static_cast<size_t>(plan.added)) {
    return invalid_replica_assignment(
        fmt::format("Attempted to add {} additional partition(s), but only {} assignment(s) were "
                    "specified.",
                    plan.added, topic.assignments->size()));
  }
  int32_t replication_factor = 1;
  if (const ClusterTopics* cluster = broker.cluster()) {
    const cluster::metadata::TopicImage* image = cluster->image().topic(topic.name);
    if (image == nullptr) {  // the table and the image are one reconciler pass apart
      return kafka_error(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition.");
    }
    replication_factor = image->replication_factor();
  }
  for (const CreatePartitionsRequest::Assignment& assignment : *topic.assignments) {
    SLUICE_TRY(check_manual_replicas(broker, assignment.broker_ids, replication_factor));
    plan.assignment.push_back(assignment.broker_ids);
  }
  return plan;
}

Status add_in_cluster(ClusterTopics& cluster, const std::string& name, const Plan& plan, bool validate_only,
                      Instant deadline) {
  const cluster::metadata::TopicImage* topic = cluster.image().topic(name);
  if (topic == nullptr) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition.");
  }
  SLUICE_ASSIGN_OR_RETURN(cluster::metadata::CreatePartitions record,
                          cluster.plan_partitions(*topic, plan.added, plan.assignment));
  SLUICE_TRY(cluster.check_broker_partitions(record.partitions));
  if (validate_only) return Status();
  return cluster.add_partitions(record, deadline);
}

// `*records`: the PartitionRecords the request's earlier topics would make Kafka's controller write.
Status add_one(RequestContext& ctx, const CreatePartitionsRequest::Topic& topic, bool validate_only, Instant deadline,
               int64_t* records) {
  SLUICE_ASSIGN_OR_RETURN(Plan plan, check_topic(ctx.broker, topic));
  SLUICE_ASSERT(plan.added >= 1);
  if (plan.added > kMaxRecordsPerRequest - *records) return excessive_batch();  // before any placement
  *records += plan.added;
  if (ClusterTopics* cluster = ctx.broker.cluster()) {
    return add_in_cluster(*cluster, topic.name, plan, validate_only, deadline);
  }
  if (validate_only) return ctx.broker.topics().check_room(topic.name, plan.added);
  return ctx.broker.topics().add_partitions(topic.name, topic.count);
}

CreatePartitionsResponse::Result answer(const std::string& name, const Status& status) {
  CreatePartitionsResponse::Result result;
  result.name = name;
  if (!status.ok()) {
    result.error_code = static_cast<int16_t>(to_error_code(status));
    result.error_message = status.message();
  }
  return result;
}

Result<CreatePartitionsResponse> create_partitions(RequestContext& ctx, const CreatePartitionsRequest& request) {
  std::map<std::string, int> mentions;
  for (const CreatePartitionsRequest::Topic& topic : request.topics) ++mentions[topic.name];
  CreatePartitionsResponse response;
  for (const auto& [name, count] : mentions) {
    if (count > 1)
      response.results.push_back(answer(name, kafka_error(ErrorCode::kInvalidRequest, "Duplicate topic name.")));
  }
  const Instant deadline = admin_deadline(ctx, request.timeout_ms);
  int64_t records = 0;
  for (const CreatePartitionsRequest::Topic& topic : request.topics) {
    if (mentions[topic.name] != 1) continue;
    response.results.push_back(answer(topic.name, add_one(ctx, topic, request.validate_only, deadline, &records)));
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_create_partitions(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, create_partitions);
}

}  // namespace sluice::kafka
