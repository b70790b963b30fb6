// FindCoordinator (10): a single node coordinates every group, so the answer is this node for any group key.
// There is no transaction coordinator (Sluice has no transactions) and no share coordinator: transaction keys, and
// from v6 share keys, get COORDINATOR_NOT_AVAILABLE (Kafka 3.9 has no share coordinator either); an unknown key
// type, or a share key before v6, INVALID_REQUEST, as Kafka answers.
#include <fmt/format.h>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/find_coordinator.h"

namespace sluice::kafka {
namespace {

using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

FindCoordinatorResponse::Coordinator coordinator_for(const BrokerConfig& config, const std::string& key,
                                                     int8_t key_type, int16_t version) {
  FindCoordinatorResponse::Coordinator answer;
  answer.key = key;
  if (key_type == protocol::kCoordinatorGroup) {
    answer.node_id = config.node_id;
    answer.host = config.advertised_host;
    answer.port = config.advertised_port;
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
  const BrokerConfig& config = ctx.broker.config();
  FindCoordinatorResponse response;
  if (ctx.version() >= 4) {
    for (const std::string& key : request.coordinator_keys) {
      response.coordinators.push_back(coordinator_for(config, key, request.key_type, ctx.version()));
    }
    return response;
  }
  const FindCoordinatorResponse::Coordinator one =
      coordinator_for(config, request.key, request.key_type, ctx.version());
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
