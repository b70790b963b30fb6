// FindCoordinator (10): a single node coordinates every group, so the answer is this node for any group key.
// There is no transaction coordinator (Sluice has no transactions) and no share coordinator: transaction keys, and
// from v6 share keys, get COORDINATOR_NOT_AVAILABLE (Kafka 3.9 has no share coordinator either); an unknown key
// type, or a share key before v6, INVALID_REQUEST, as Kafka answers.
// Cluster mode: one node coordinates every group, the lowest registered node id (its __consumer_offsets is local to
// it; the other nodes answer group requests NOT_COORDINATOR), until groups are replicated (core/kafka/README.md).
// Before any node is registered: COORDINATOR_NOT_AVAILABLE.
#include <fmt/format.h>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/find_coordinator.h"

namespace sluice::kafka {
namespace {

using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

// The group coordinator: this node, or in cluster mode the lowest registered node.
void group_coordinator(Broker& broker, FindCoordinatorResponse::Coordinator& answer) {
  const BrokerConfig& config = broker.config();
  if (broker.cluster() == nullptr) {
    answer.node_id = config.node_id;
    answer.host = config.advertised_host;
    answer.port = config.advertised_port;
    return;
  }
  const int32_t coordinator = broker.cluster()->group_coordinator();
  const cluster::metadata::BrokerRegistration* registration =
      coordinator < 0 ? nullptr : broker.cluster()->image().broker(coordinator);
  if (registration == nullptr) {
    answer.error_code = static_cast<int16_t>(ErrorCode::kCoordinatorNotAvailable);
    answer.error_message = "no broker is registered in the cluster yet";
    return;
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
    group_coordinator(broker, answer);
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
