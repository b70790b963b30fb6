#include "core/kafka/handler.h"

#include <algorithm>

#include "core/kafka/broker.h"

namespace sluice::kafka {

void note_trailing_bytes(RequestContext& ctx, size_t trailing) {
  ctx.broker.count_trailing_bytes();
  ctx.env.log.debug("{} v{} (correlation id {}) from {}: ignored {} bytes after the request body",
                    protocol::api_name(ctx.header.api_key), ctx.version(), ctx.header.correlation_id,
                    ctx.peer.to_string(), trailing);
}

size_t max_response_bytes(const RequestContext& ctx) {
  return std::min(ctx.broker.config().max_response_bytes, protocol::kMaxResponseBodyBytes);
}

Instant admin_deadline(const RequestContext& ctx, int32_t timeout_ms) {
  const Duration timeout = timeout_ms > 0 ? Duration(std::chrono::milliseconds(timeout_ms)) : kAdminTimeout;
  return ctx.env.clock.now() + timeout;
}

}  // namespace sluice::kafka
