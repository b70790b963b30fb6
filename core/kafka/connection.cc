// One connection: read a frame, decode its header, dispatch, answer, in request order. A request is handled only
// after the one before it was, but its answer may wait: a produce to a `persisted` topic is answered once its records
// are synced (HandlerOutcome::complete). Such answers queue for a responder fiber, and the reader goes on with the
// requests the client pipelined behind it, whose appends then share the sync round. The queue is bounded
// (kMaxQueuedResponses), and a ready answer behind queued ones stops the reader until it is sent, so the bytes held
// per connection stay bounded: one request (its buffer kept for the next, up to FrameReader::kKeptFrameBytes),
// kReadAheadBytes read past it, one response body plus the queued produce answers. The stream is watched
// (watched_stream.h): a connection idle for connections.max.idle.ms, whose answers wait on a client that reads
// nothing as long, or whose request frame stops arriving for request.timeout.ms is closed.
#include <fmt/format.h>

#include <array>
#include <memory>

#include "core/env/sync.h"
#include "core/kafka/broker.h"
#include "core/kafka/dispatch.h"
#include "core/kafka/watched_stream.h"
#include "core/protocol/frame_reader.h"
#include "core/protocol/messages/api_versions.h"

namespace sluice::kafka {
namespace {

// Requests handled whose answers are not sent yet, per connection (librdkafka pipelines up to 1,000,000).
constexpr size_t kMaxQueuedResponses = 256;
// Read past the current request: a small request and those pipelined behind it come in one read.
constexpr size_t kReadAheadBytes = 16 * 1024;

// Kafka closes the connection on a request it cannot serve; the log says why, once.
void log_close(Broker& broker, const std::string& peer, const std::string& why) {
  broker.env().log.info("closing the connection from {}: {}", peer, why);
}

// The size prefix and response header are written into the room before the body (HandlerOutcome), so that the
// frame goes out as one buffer, taken by the stream: a simulated stream makes it the network's chunk without a
// joined copy.
Status send_response(Stream& stream, const protocol::RequestHeader& header, Bytes framed) {
  SLUICE_ASSERT(framed.size() >= protocol::kResponseHeadRoom);
  const size_t body_bytes = framed.size() - protocol::kResponseHeadRoom;
  if (body_bytes > protocol::kMaxResponseBodyBytes) {  // no int32 size could frame it (handler.h encode_response)
    return invalid_argument(fmt::format("a {}-byte response does not fit in a frame", body_bytes));
  }
  const size_t from =
      protocol::put_response_frame_head(header.api_key, header.api_version, header.correlation_id, body_bytes,
                                        MutableByteView(framed).first(protocol::kResponseHeadRoom));
  return stream.write_owned(std::move(framed), from);
}

// Sends the outcome's response, if any (taking its body). False when the connection must close.
bool deliver(Stream& stream, const protocol::RequestHeader& header, HandlerOutcome& outcome) {
  if (outcome.response_body.has_value() && !send_response(stream, header, std::move(*outcome.response_body)).ok()) {
    return false;
  }
  return !outcome.close_connection;
}

struct QueuedResponse {
  protocol::RequestHeader header;
  HandlerOutcome outcome;
};

// Shared by the reader (serve_connection's fiber) and the responder; shared_ptr so that neither fiber's stack owns
// it when a node kill unwinds them.
struct ResponseQueue {
  ResponseQueue(Scheduler& scheduler, std::shared_ptr<WatchedStream> stream)
      : stream(std::move(stream)), queued(scheduler, kMaxQueuedResponses), drained(scheduler) {}
  std::shared_ptr<WatchedStream> stream;  // the responder writes to it
  Channel<QueuedResponse> queued;
  size_t unsent = 0;    // queued, or taken by the responder and not sent yet
  bool failed = false;  // the responder closed the connection
  WaitQueue drained;    // unsent reached 0, or failed
  std::optional<FiberRef> responder;

  void wait_drained() {
    while (unsent > 0 && !failed) drained.wait();
  }
};

// The responder: completes and sends queued answers in order. On a failure it closes the stream, which ends the
// reader's read; the answers still queued are dropped (their records stay appended, as when a client disconnects).
void respond(Broker& broker, Stream& stream, const std::string& peer, const std::shared_ptr<ResponseQueue>& queue) {
  while (std::optional<QueuedResponse> item = queue->queued.receive()) {
    HandlerOutcome outcome = std::move(item->outcome);
    bool open = true;
    if (outcome.complete) {
      Result<HandlerOutcome> completed = outcome.complete();
      if (completed.ok()) {
        outcome = std::move(*completed);
        SLUICE_ASSERT(!outcome.complete);
      } else {
        log_close(broker, peer,
                  fmt::format("{} (correlation id {}): {}", protocol::api_name(item->header.api_key),
                              item->header.correlation_id, completed.status().to_string()));
        open = false;
      }
    }
    if (open) open = deliver(stream, item->header, outcome);
    if (!open) {
      queue->failed = true;
      queue->queued.close();
      stream.close();
      queue->drained.notify_all();
      return;
    }
    SLUICE_ASSERT(queue->unsent > 0);
    if (--queue->unsent == 0) queue->drained.notify_all();
  }
}

// Handles one request frame. Returns false when the connection must close.
bool handle_frame(Broker& broker, Stream& stream, const std::string& peer, ByteView frame,
                  const std::shared_ptr<ResponseQueue>& queue) {
  ByteView body;
  Result<protocol::RequestHeader> header = protocol::decode_request_header(frame, &body);
  if (!header.ok()) {
    log_close(broker, peer, "bad request header: " + header.status().message());
    return false;
  }
  // Named only when the connection closes: formatting it for every request showed in profiles.
  auto api = [&header] { return fmt::format("{} v{}", protocol::api_name(header->api_key), header->api_version); };
  const HandlerEntry* entry = find_handler(static_cast<int16_t>(header->api_key));
  if (entry == nullptr) {
    log_close(broker, peer, fmt::format("{} is not served", api()));
    return false;
  }
  if (!protocol::is_supported(header->api_key, header->api_version)) {
    if (header->api_key == protocol::ApiKey::kApiVersions) {  // the dance: answer in v0 layout, stay open
      queue->wait_drained();
      if (queue->failed) return false;
      return stream.write_all(protocol::unsupported_api_versions_frame(header->correlation_id)).ok();
    }
    log_close(broker, peer, fmt::format("{} is outside the advertised versions", api()));
    return false;
  }
  RequestContext ctx{broker.env(), broker, *header, stream.peer()};
  Result<HandlerOutcome> outcome = entry->handler(ctx, body);
  if (!outcome.ok()) {
    log_close(broker, peer,
              fmt::format("{} (correlation id {}): {}", api(), header->correlation_id, outcome.status().to_string()));
    return false;
  }
  if (queue->failed) return false;
  const bool ready = !outcome->complete;
  // The common case: nothing queued.
  if (ready && queue->unsent == 0) return deliver(stream, *header, *outcome);
  if (!queue->responder) {
    queue->responder = broker.env().scheduler.spawn(
        "conn.responder", [&broker, peer, queue] { respond(broker, *queue->stream, peer, queue); });
  }
  ++queue->unsent;
  if (!queue->queued.send(QueuedResponse{std::move(*header), std::move(*outcome)})) return false;  // failed
  if (ready) queue->wait_drained();  // its body stays the only one held
  return !queue->failed;
}

// Why the watch closed a connection, for the log (Kafka logs idle expiry below info: idle clients are normal).
void log_expiry(Broker& broker, const std::string& peer, Expiry expiry) {
  const BrokerConfig& config = broker.config();
  auto ms = [](Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  if (expiry == Expiry::kIdle) {
    broker.env().log.debug("closing the connection from {}: nothing moved for connections.max.idle.ms={}", peer,
                           ms(config.connections_max_idle.value_or(Duration::zero())));
  } else if (expiry == Expiry::kRequestTimeout) {
    log_close(
        broker, peer,
        fmt::format("a request frame stopped arriving part way (request.timeout.ms={})", ms(config.request_timeout)));
  }
}

}  // namespace

void serve_connection(Broker& broker, Stream& raw_stream) {
  const std::string peer = raw_stream.peer().to_string();
  // Shared with the responder, as the queue is.
  const auto watched = std::make_shared<WatchedStream>(
      raw_stream, broker.env().clock, broker.config().connections_max_idle, broker.config().request_timeout);
  Stream& stream = *watched;
  const std::shared_ptr<ResponseQueue> queue = std::make_shared<ResponseQueue>(broker.env().scheduler, watched);
  protocol::FrameReader reader(stream, broker.config().socket_request_max_bytes, kReadAheadBytes);
  reader.set_pause([&broker] { broker.env().scheduler.yield(); });
  while (true) {
    stream.set_prompt_acks(queue->unsent > 0);
    Result<std::optional<ByteView>> frame = reader.next();
    if (!frame.ok()) {
      const Code code = frame.status().code();
      if (code != Code::kClosed && code != Code::kConnectionReset && !queue->failed) {
        log_close(broker, peer, frame.status().to_string());
      }
      break;
    }
    if (!frame->has_value()) break;  // the client closed between requests
    watched->frame_done(reader.buffered() > 0);
    if (!handle_frame(broker, stream, peer, **frame, queue)) break;
  }
  // The answers already queued still go out (a client may half-close after its last request).
  queue->queued.close();
  if (queue->responder) broker.env().scheduler.join(*queue->responder);
  if (watched->expired() != Expiry::kNone) {
    log_expiry(broker, peer, watched->expired());
    broker.count_expiry(watched->expired() == Expiry::kIdle);
  }
  stream.close();
}

}  // namespace sluice::kafka
