// FindCoordinator (10): a single node coordinates every group, so the answer is this node for any group key.
// There is no transaction coordinator (Sluice has no transactions) and no share coordinator: transaction keys, and
// from v6 share keys, get COORDINATOR_NOT_AVAILABLE (Kafka 3.9 has no share coordinator either); an unknown key
// type, or a share key before v6, INVALID_REQUEST, as Kafka answers.
// Cluster mode: a group's coordinator is the leader of its __consumer_offsets partition (Kafka's partitionFor:
// abs(Java hashCode of the group id) % partitions), which this creates first when it does not exist yet (Kafka's
// FindCoordinator creates the internal topic). COORDINATOR_NOT_AVAILABLE while this node has not caught up with the
// metadata, the topic cannot be made, or the partition has no known leader (Kafka answers so too).
#include <fmt/format.h>

#include "core/group/coordinator.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/find_coordinator.h"

namespace sluice::kafka {
namespace {

using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

void not_available(FindCoordinatorResponse::Coordinator& answer, std::string message) {
  answer.error_code = static_cast<int16_t>(ErrorCode::kCoordinatorNotAvailable);
  answer.error_message = std::move(message);
}

// The group coordinator: this node, or in cluster mode the leader of the group's offsets partition.
void group_coordinator(Broker& broker, const std::string& group_id, FindCoordinatorResponse::Coordinator& answer) {
  const BrokerConfig& config = broker.config();
  ClusterTopics* cluster = broker.cluster();
  if (cluster == nullptr) {
    answer.node_id = config.node_id;
    answer.host = config.advertised_host;
    answer.port = config.advertised_port;
    return;
  }
  if (!cluster->caught_up()) return not_available(answer, "this broker has not caught up with the cluster metadata");
  if (Status made = broker.groups().ensure_offsets_topic(); !made.ok()) {
    return not_available(answer, fmt::format("{} is not available: {}", group::kOffsetsTopic, made.to_string()));
  }
  const cluster::metadata::TopicImage* topic = cluster->image().topic(group::kOffsetsTopic);
  if (topic == nullptr || topic->partition_count() < 1) {
    return not_available(answer, fmt::format("{} is not in the cluster metadata yet", group::kOffsetsTopic));
  }
  const int32_t partition = group::partition_for_group(group_id, topic->partition_count());
  // The leader as this node's replica knows it, else as last reported to the metadata (RecordLeader).
  int32_t leader = topic->partitions[static_cast<size_t>(partition)].leader;
  const std::shared_ptr<cluster::Partition> local =
      broker.partitions().find(group::kOffsetsTopic, partition);
  if (local != nullptr && local->replicated() && local->leader() >= 0) leader = local->leader();
  const cluster::metadata::BrokerRegistration* registration =
      leader < 0 ? nullptr : cluster->image().broker(leader);
  if (registration == nullptr) {
    return not_available(answer, fmt::format("{}-{} has no leader yet", group::kOffsetsTopic, partition));
  }
  answer.node_id = registration->node_id;
  answer.host = registration->host;
  answer.port = registration->port;
}

FindCoordinatorResponse::Coordinator coordinator_for(Broker& broker, const std::string& key, int8_t key_type,
                                                     int16_t version) {
  FindCoordinatorResponse::Coordinator answer;
  answer.key = key;
  if (key_type == protocol::kCoordinatorGroup) {
    group_coordinator(broker, key, answer);
    return answer;
  }
  const bool transaction = key_type == protocol::kCoordinatorTransaction;
  const bool share = key_type == protocol::kCoordinatorShare && version >= 6;
  answer.error_code =
      static_cast<int16_t>(transaction || share ? ErrorCode::kCoordinatorNotAvailable : ErrorCode::kInvalidRequest);
  answer.error_message = transaction ? "this broker has no transaction coordinator"
                         : share     ? "this broker has no share coordinator"
                                     : fmt::format("unknown coordinator key type {} at version {}", key_type, version);
  return answer;
}

Result<FindCoordinatorResponse> find_coordinator(RequestContext& ctx, const FindCoordinatorRequest& request) {
  FindCoordinatorResponse response;
  if (ctx.version() >= 4) {
    for (const std::string& key : request.coordinator_keys) {
      response.coordinators.push_back(coordinator_for(ctx.broker, key, request.key_type, ctx.version()));
    }
    return response;
  }
  const FindCoordinatorResponse::Coordinator one =
      coordinator_for(ctx.broker, request.key, request.key_type, ctx.version());
  response.error_code = one.error_code;
  response.error_message = one.error_message;
  response.node_id = one.node_id;
  response.host = one.host;
  response.port = one.port;
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_find_coordinator(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, find_coordinator);
}

}  // namespace sluice::kafka
