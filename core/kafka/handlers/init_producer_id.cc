// InitProducerId (22), v0-5: a new producer id with epoch 0 for an idempotent producer (null transactional id), as
// Kafka's TransactionCoordinator does for one: it never reuses or bumps the id given in v3+ requests. What v4 and
// v5 add are transactional errors (PRODUCER_FENCED, which Kafka turns into INVALID_PRODUCER_EPOCH below v4, and
// TRANSACTION_ABORTABLE), which this handler never answers. Transactions
// are not supported, so a transactional id is answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), Kafka's answer
// when the id is not authorized; clients treat it as fatal instead of retrying a coordinator lookup forever.
// Cluster mode: ids come from blocks the node allocates through the cluster metadata (kafka::ClusterTopics).
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/init_producer_id.h"

namespace sluice::kafka {
namespace {

using protocol::InitProducerIdRequest;
using protocol::InitProducerIdResponse;

InitProducerIdResponse refused(ErrorCode error) {
  InitProducerIdResponse response;
  response.error_code = static_cast<int16_t>(error);
  response.producer_id = -1;
  response.producer_epoch = -1;
  return response;
}

Result<InitProducerIdResponse> init_producer_id(RequestContext& ctx, const InitProducerIdRequest& request) {
  if (request.transactional_id.has_value()) {
    ctx.env.log.info("InitProducerId from {} with transactional id '{}': transactions are not supported",
                     ctx.peer.to_string(), *request.transactional_id);
    return refused(ErrorCode::kTransactionalIdAuthorizationFailed);
  }
  Result<int64_t> id = ctx.broker.producer_ids().allocate_producer_id();
  if (!id.ok()) {
    ctx.env.log.warn("could not allocate a producer id: {}", id.status().to_string());
    // In cluster mode a block comes from the metadata, which may be electing or not yet replayed: Kafka's
    // RPCProducerIdManager answers COORDINATOR_LOAD_IN_PROGRESS then, and the producer retries.
    return refused(ctx.broker.cluster() != nullptr ? ErrorCode::kCoordinatorLoadInProgress
                                                   : ErrorCode::kUnknownServerError);
  }
  InitProducerIdResponse response;
  response.producer_id = *id;
  response.producer_epoch = 0;
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_init_producer_id(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, init_producer_id);
}

}  // namespace sluice::kafka
