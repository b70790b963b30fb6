// One connection: read a frame, decode its header, dispatch, answer; in order, one request at a time.
#include <fmt/format.h>

#include <array>

#include "core/kafka/broker.h"
#include "core/kafka/dispatch.h"
#include "core/protocol/messages/api_versions.h"

namespace sluice::kafka {
namespace {

// Kafka closes the connection on a request it cannot serve; the log says why, once.
void log_close(Broker& broker, const std::string& peer, const std::string& why) {
  broker.env().log.info("closing the connection from {}: {}", peer, why);
}

// The size prefix and response header go in a small buffer and the body is sent from where the handler built it:
// a fetch body is megabytes of records, copied once already.
Status send_response(Stream& stream, const protocol::RequestHeader& header, const Bytes& body) {
  Bytes head;
  const size_t begin = protocol::begin_frame(&head);
  protocol::encode_response_header(header.api_key, header.api_version, header.correlation_id, &head);
  protocol::end_frame(&head, begin, body.size());
  const std::array<ByteView, 2> parts{ByteView(head), ByteView(body)};
  return stream.write_all_gathered(parts);
}

// Handles one request frame. Returns false when the connection must close.
bool handle_frame(Broker& broker, Stream& stream, const std::string& peer, ByteView frame) {
  ByteView body;
  Result<protocol::RequestHeader> header = protocol::decode_request_header(frame, &body);
  if (!header.ok()) {
    log_close(broker, peer, "bad request header: " + header.status().message());
    return false;
  }
  const std::string api = fmt::format("{} v{}", protocol::api_name(header->api_key), header->api_version);
  const HandlerEntry* entry = find_handler(static_cast<int16_t>(header->api_key));
  if (entry == nullptr) {
    log_close(broker, peer, fmt::format("{} is not served", api));
    return false;
  }
  if (!protocol::is_supported(header->api_key, header->api_version)) {
    if (header->api_key == protocol::ApiKey::kApiVersions) {  // the dance: answer in v0 layout, stay open
      return stream.write_all(protocol::unsupported_api_versions_frame(header->correlation_id)).ok();
    }
    log_close(broker, peer, fmt::format("{} is outside the advertised versions", api));
    return false;
  }
  RequestContext ctx{broker.env(), broker, *header, stream.peer()};
  Result<HandlerOutcome> outcome = entry->handler(ctx, body);
  if (!outcome.ok()) {
    log_close(broker, peer, fmt::format("{} (correlation id {}): {}", api, header->correlation_id,
                                        outcome.status().to_string()));
    return false;
  }
  if (outcome->response_body.has_value()) {
    Status sent = send_response(stream, *header, *outcome->response_body);
    if (!sent.ok()) return false;
  }
  return !outcome->close_connection;
}

}  // namespace

void serve_connection(Broker& broker, Stream& stream) {
  const std::string peer = stream.peer().to_string();
  while (true) {
    Result<std::optional<Bytes>> frame = protocol::read_frame(stream, broker.config().socket_request_max_bytes);
    if (!frame.ok()) {
      const Code code = frame.status().code();
      if (code != Code::kClosed && code != Code::kConnectionReset) {
        log_close(broker, peer, frame.status().to_string());
      }
      break;
    }
    if (!frame->has_value()) break;  // the client closed between requests
    if (!handle_frame(broker, stream, peer, **frame)) break;
  }
  stream.close();
}

}  // namespace sluice::kafka
