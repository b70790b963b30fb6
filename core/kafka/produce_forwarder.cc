#include "core/kafka/produce_forwarder.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/base/assert.h"
#include "core/client/errors.h"
#include "core/protocol/api_table.h"

namespace sluice::kafka {

bool is_forwarded(const protocol::RequestHeader& header) {
  return header.client_id.has_value() && header.client_id->starts_with(kForwardedClientIdPrefix);
}

ProduceForwarder::ProduceForwarder(Env env, int32_t node_id)
    : env_(env), client_id_(fmt::format("{}{}", kForwardedClientIdPrefix, node_id)) {}

ProduceForwarder::~ProduceForwarder() { close(); }

void ProduceForwarder::close() {
  closed_ = true;
  std::map<int32_t, std::shared_ptr<client::detail::Connection>> connections;
  connections.swap(connections_);
  for (auto& [leader, connection] : connections) connection->close();
}

Result<std::shared_ptr<client::detail::Connection>> ProduceForwarder::connection(int32_t leader,
                                                                                 const Address& address,
                                                                                 Duration timeout) {
  auto known = connections_.find(leader);
  if (known != connections_.end() && !known->second->broken() && known->second->address() == address) {
    return known->second;
  }
  client::detail::ConnectionOptions options;
  options.client_id = client_id_;
  options.connect_timeout = timeout;
  options.request_timeout = timeout;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<client::detail::Connection> opened,
                          client::detail::Connection::open(env_, address, options));
  if (closed_) {
    opened->close();
    return client::not_sent("the forwarder is closed");
  }
  // Another fiber may have opened one while this one connected: keep a single connection per leader.
  known = connections_.find(leader);
  if (known != connections_.end() && !known->second->broken() && known->second->address() == address) {
    opened->close();
    return known->second;
  }
  if (known != connections_.end()) known->second->close();
  connections_[leader] = opened;
  return opened;
}

Result<protocol::ProduceResponse> ProduceForwarder::forward(int32_t leader, const Address& address,
                                                            const protocol::ProduceRequest& request,
                                                            Instant deadline) {
  SLUICE_ASSERT(leader >= 0);
  if (closed_) return client::not_sent("the forwarder is closed");
  const Duration left = deadline - env_.clock.now();
  if (left <= Duration::zero()) return client::not_sent("no time left to forward");
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<client::detail::Connection> connection,
                          connection(leader, address, left));
  const Result<int16_t> version = connection->version_for(protocol::ApiKey::kProduce);
  if (!version.ok()) return client::not_sent(version.status().to_string());
  protocol::ProduceRequest sent = request;
  const auto remaining_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - env_.clock.now());
  sent.timeout_ms = static_cast<int32_t>(std::clamp<int64_t>(remaining_ms.count(), 0, request.timeout_ms));
  Bytes body;
  if (const Status encoded = protocol::encode_message(sent, *version, &body); !encoded.ok()) {
    return client::not_sent(encoded.to_string());
  }
  const bool expect_response = request.acks != 0;
  const Duration timeout = std::max<Duration>(deadline - env_.clock.now(), std::chrono::milliseconds(1));
  client::detail::CallPtr call =
      connection->start(protocol::ApiKey::kProduce, *version, body, timeout, expect_response);
  Result<Bytes> answer = client::detail::wait_for(*call);
  if (call->written) ++forwarded_;
  if (!answer.ok()) return answer.status();
  if (!expect_response) return protocol::ProduceResponse{};
  return protocol::decode_message<protocol::ProduceResponse>(*answer, *version);
}

}  // namespace sluice::kafka
