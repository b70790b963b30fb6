// What every API handler sees and returns. A handler gets the decoded request header, the broker's state and the
// request body; it answers with a response body (the connection adds the frame and the response header), with no
// response at all (Produce acks=0), or with an error that closes the connection (a malformed request, as Kafka
// does). Typed handlers take the decoded request struct and return the response struct (see `typed`).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/network.h"
#include "core/kafka/broker_config.h"
#include "core/kafka/topics.h"
#include "core/protocol/header.h"
#include "core/protocol/message.h"

namespace sluice::kafka {

class Broker;

struct RequestContext {
  Env env;
  Broker& broker;
  const protocol::RequestHeader& header;
  Address peer;
  int16_t version() const { return header.api_version; }
};

struct HandlerOutcome {
  // The encoded body behind protocol::kResponseHeadRoom bytes of room for its frame head (encode_response builds it
  // so); nullopt: send nothing (acks=0).
  std::optional<Bytes> response_body;
  bool close_connection = false;       // after sending the response, if any (acks=0 produce errors)
  // When set, the answer is not ready yet (a produce waiting for its `persisted` records' sync): the connection
  // reads and handles the next requests meanwhile, then calls this, which may suspend, and sends what it returns,
  // keeping responses in request order. It must not refer to the RequestContext, which is gone by then.
  std::function<Result<HandlerOutcome>()> complete;
};

using Handler = Result<HandlerOutcome> (*)(RequestContext& ctx, ByteView body);

// When a cluster-mode admin request (CreateTopics, DeleteTopics, AlterConfigs) gives up waiting for the cluster
// metadata: its timeout_ms from now, or kAdminTimeout when it gives none (0 or less).
inline constexpr Duration kAdminTimeout = std::chrono::seconds(30);
Instant admin_deadline(const RequestContext& ctx, int32_t timeout_ms);

// Bytes found after a request's body: counted (Broker::requests_with_trailing_bytes) and logged at debug level.
void note_trailing_bytes(RequestContext& ctx, size_t trailing);

// Decodes Req at the request's version as Kafka does: bytes past the schema are ignored (noted above), so that
// librdkafka 2.15's all-topics Metadata v9+, which carries a 4-byte placeholder for a 1-byte array length, is read.
template <protocol::ApiMessage Req>
Result<Req> decode_request(RequestContext& ctx, ByteView body) {
  size_t trailing = 0;
  SLUICE_ASSIGN_OR_RETURN(Req request, protocol::decode_request<Req>(body, ctx.version(), &trailing));
  if (trailing != 0) note_trailing_bytes(ctx, trailing);
  return request;
}

// The most a response body may take: the int32 frame size less the response header (protocol::
// kMaxResponseBodyBytes), or BrokerConfig::max_response_bytes when that is lower (tests lower it).
size_t max_response_bytes(const RequestContext& ctx);

inline constexpr size_t kTypicalResponseBytes = 512;

// Room for most answers; a message type that can say more (protocol::encoded_size_hint) gets what it says, up to
// the limit, so that its encoding never regrows.
template <protocol::ApiMessage Resp>
size_t expected_response_bytes(const Resp& response, size_t max_bytes) {
  if constexpr (requires { encoded_size_hint(response); }) {
    return std::clamp(encoded_size_hint(response), kTypicalResponseBytes, std::max(kTypicalResponseBytes, max_bytes));
  } else {
    return kTypicalResponseBytes;
  }
}

// Encodes a response body at `version`, behind protocol::kResponseHeadRoom bytes of room (HandlerOutcome). One that
// would not fit in a frame fails before it is built past the limit (the connection then closes, logged), as no frame
// could carry it: never an assertion, never a wrapped size.
template <protocol::ApiMessage Resp>
Result<Bytes> encode_response(const Resp& response, int16_t version, size_t max_bytes) {
  Bytes out;
  // One allocation for the room and the body.
  out.reserve(protocol::kResponseHeadRoom + expected_response_bytes(response, max_bytes));
  out.resize(protocol::kResponseHeadRoom);
  SLUICE_TRY(protocol::encode_message(response, version, &out, max_bytes + protocol::kResponseHeadRoom));
  return out;
}

// Decodes Req at the request's version, runs `fn`, encodes its Resp at the same version.
template <protocol::ApiMessage Req, protocol::ApiMessage Resp>
Result<HandlerOutcome> typed(RequestContext& ctx, ByteView body, Result<Resp> (*fn)(RequestContext&, const Req&)) {
  SLUICE_ASSIGN_OR_RETURN(Req request, decode_request<Req>(ctx, body));
  SLUICE_ASSIGN_OR_RETURN(Resp response, fn(ctx, request));
  SLUICE_ASSIGN_OR_RETURN(Bytes out, encode_response(response, ctx.version(), max_response_bytes(ctx)));
  return HandlerOutcome{std::move(out), false, {}};
}

}  // namespace sluice::kafka
