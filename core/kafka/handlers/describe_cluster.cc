// DescribeCluster (60): this node as the only broker and the controller; in cluster mode the registered brokers and
// the metadata group's leader as the controller (-1 while none is known). Cluster authorized operations are left
// at "omitted" (no authorizer). v1's endpoint type must be 1 (brokers): Kafka answers a broker asked for
// controllers with MISMATCHED_ENDPOINT_TYPE and an unknown type with UNSUPPORTED_ENDPOINT_TYPE (both
// INVALID_REQUEST in v0, where the field cannot be sent anyway).
#include "core/protocol/messages/describe_cluster.h"

#include <fmt/format.h>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using protocol::DescribeClusterRequest;
using protocol::DescribeClusterResponse;

Result<DescribeClusterResponse> describe_cluster(RequestContext& ctx, const DescribeClusterRequest& request) {
  const BrokerConfig& config = ctx.broker.config();
  DescribeClusterResponse response;
  response.endpoint_type = protocol::kEndpointTypeBrokers;
  if (request.endpoint_type == protocol::kEndpointTypeControllers) {
    response.error_code = static_cast<int16_t>(ErrorCode::kMismatchedEndpointType);
    response.error_message =
        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
        "CONTROLLER";
    return response;
  }
  if (request.endpoint_type != protocol::kEndpointTypeBrokers) {
    response.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedEndpointType);
    response.error_message = fmt::format("Unsupported endpoint type {}", request.endpoint_type);
    return response;
  }
  response.cluster_id = config.cluster_id;
  if (ClusterTopics* cluster = ctx.broker.cluster()) {
    const raft::NodeId leader = cluster->node().metadata_leader();
    response.controller_id = leader == raft::kNoNode ? -1 : static_cast<int32_t>(leader);
    for (const auto& [id, broker] : cluster->image().brokers()) {
      response.brokers.push_back({broker.node_id, broker.host, broker.port, broker.rack});
    }
    return response;
  }
  response.controller_id = config.node_id;
  response.brokers.push_back({config.node_id, config.advertised_host, config.advertised_port, std::nullopt});
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_describe_cluster(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, describe_cluster);
}

}  // namespace sluice::kafka
