#include "core/client/connection.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <iterator>
#include <limits>

#include "core/client/errors.h"
#include "core/client/requests.h"
#include "core/env/buggify.h"
#include "core/protocol/frame_reader.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/api_versions.h"

namespace sluice::client::detail {
namespace {

constexpr size_t kReadAheadBytes = 16 * 1024;
// Of the answers a BUGGIFY run's too-late site sees, those whose request times out first: a client makes thousands
// of requests a run, and each such timeout costs it a reconnect and its pipelined requests.
constexpr double kBuggifyTooLateChance = 0.005;

int64_t to_ms(Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

std::string describe(const Call& call) {
  return fmt::format("{} v{} (correlation id {})", protocol::api_name(call.api), call.version, call.correlation_id);
}

// env.net.connect with a deadline: the attempt runs on a fiber of its own, which closes a stream that comes too
// late. Shared with that fiber.
struct ConnectAttempt {
  explicit ConnectAttempt(Scheduler& scheduler) : done(scheduler) {}
  Event done;
  std::optional<Result<std::unique_ptr<Stream>>> result;
  bool abandoned = false;
};

Result<std::unique_ptr<Stream>> connect_within(Env env, const Address& address, Duration timeout) {
  auto attempt = std::make_shared<ConnectAttempt>(env.scheduler);
  env.scheduler.spawn("client.connect", [env, address, attempt] {
    Result<std::unique_ptr<Stream>> stream = env.net.connect(address);
    if (attempt->abandoned) return;  // the stream, if any, closes as it goes out of scope
    attempt->result.emplace(std::move(stream));
    attempt->done.set();
  });
  if (!attempt->done.wait_until(env.clock.now() + timeout)) {
    attempt->abandoned = true;
    return timed_out(fmt::format("connect to {} took over {} ms", address.to_string(), to_ms(timeout)));
  }
  return std::move(*attempt->result);
}

// Kafka's answer to an ApiVersions version it does not speak: error 35 in the v0 layout, listing its own range.
std::optional<int16_t> downgraded_version(ByteView body, int16_t tried) {
  Result<protocol::ApiVersionsResponse> v0 = protocol::decode_message<protocol::ApiVersionsResponse>(body, 0);
  if (!v0.ok() || v0->error_code != errc::kUnsupportedVersion) return std::nullopt;
  for (const auto& api : v0->api_keys) {
    if (api.api_key != static_cast<int16_t>(protocol::ApiKey::kApiVersions)) continue;
    const int16_t next = std::min<int16_t>(static_cast<int16_t>(tried - 1), api.max_version);
    if (next >= 0 && next < tried) return next;
  }
  return std::nullopt;
}

}  // namespace

Result<Answer> wait_for_answer(Call& call) {
  call.finished.wait();
  SLUICE_ASSERT(call.done());
  Result<Bytes> result = std::move(*call.result);
  if (!result.ok()) return result.status();
  SLUICE_ASSERT(call.body_at <= result->size());
  return Answer{std::move(*result), call.body_at};
}

Result<Bytes> wait_for(Call& call) {
  SLUICE_ASSIGN_OR_RETURN(Answer answer, wait_for_answer(call));
  answer.buffer.erase(answer.buffer.begin(), answer.buffer.begin() + static_cast<std::ptrdiff_t>(answer.body_at));
  return std::move(answer.buffer);
}

Connection::Connection(Env env, Address address, std::unique_ptr<Stream> stream, std::string client_id)
    : env_(env),
      address_(std::move(address)),
      stream_(std::move(stream)),
      client_id_(std::move(client_id)),
      write_mutex_(env.scheduler) {
  chosen_versions_.fill(kUnchosen);
}

Connection::~Connection() {
  // The reader fiber co-owns the connection, so it is gone: only a connection that failed to start gets here open.
  fail(closed(fmt::format("the connection to {} was dropped", address_.to_string())));
}

Result<std::shared_ptr<Connection>> Connection::open(Env env, const Address& address,
                                                     const ConnectionOptions& options) {
  Result<std::unique_ptr<Stream>> stream = connect_within(env, address, options.connect_timeout);
  if (!stream.ok()) return not_sent(fmt::format("connect to {}: {}", address.to_string(), stream.status().to_string()));
  std::shared_ptr<Connection> connection(new Connection(env, address, std::move(*stream), options.client_id));
  env.scheduler.spawn("client.reader " + address.to_string(), [connection] { connection->read_answers(); });
  const Status negotiated = connection->negotiate_versions(options.request_timeout);
  if (!negotiated.ok()) {
    connection->close();
    return not_sent(fmt::format("ApiVersions with {}: {}", address.to_string(), negotiated.to_string()));
  }
  return connection;
}

// ApiVersions at this client's highest version; a broker that does not speak it answers as Kafka does (error 35
// in the v0 layout with its range), and the request is repeated at a version it does speak.
Status Connection::negotiate_versions(Duration timeout) {
  int16_t version = client_versions(protocol::ApiKey::kApiVersions).max;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Bytes body;
    SLUICE_TRY(protocol::encode_message(api_versions_request(), version, &body));
    CallPtr call = start(protocol::ApiKey::kApiVersions, version, body, timeout, true);
    SLUICE_ASSIGN_OR_RETURN(Bytes answer, wait_for(*call));
    Result<protocol::ApiVersionsResponse> response =
        protocol::decode_message<protocol::ApiVersionsResponse>(answer, version);
    if (!response.ok() || response->error_code == errc::kUnsupportedVersion) {
      const std::optional<int16_t> lower = downgraded_version(answer, version);
      if (!lower) return response.ok() ? broker_error(response->error_code, "ApiVersions") : response.status();
      version = *lower;
      continue;
    }
    if (response->error_code != 0) return broker_error(response->error_code, "ApiVersions");
    for (const auto& api : response->api_keys) broker_versions_[api.api_key] = {api.min_version, api.max_version};
    return Status();
  }
  return corruption("ApiVersions: no version both sides speak");
}

Result<int16_t> Connection::version_for(protocol::ApiKey api) const {
  const auto key = static_cast<size_t>(static_cast<uint16_t>(api));
  if (key < kChosenApis && chosen_versions_[key] != kUnchosen) return chosen_versions_[key];
  auto broker = broker_versions_.find(static_cast<int16_t>(api));
  const VersionRange theirs = broker == broker_versions_.end() ? VersionRange{} : broker->second;
  const std::optional<int16_t> version = choose_version(client_versions(api), theirs);
  if (!version) {
    return Status(
        Code::kNotSupported,
        fmt::format("{}: the broker at {} offers v{}-{}, this client speaks v{}-{}", protocol::api_name(api),
                    address_.to_string(), theirs.min, theirs.max, client_versions(api).min, client_versions(api).max),
        errc::kUnsupportedVersion);
  }
  // The broker's ranges are learnt once, before any request asks (negotiate_versions).
  if (key < kChosenApis && !broker_versions_.empty()) chosen_versions_[key] = *version;
  return *version;
}

CallPtr Connection::start(protocol::ApiKey api, int16_t version, ByteView body, Duration timeout, bool expect_response,
                          std::function<void()> on_finished) {
  LockGuard lock(write_mutex_);
  CallPtr call = begin_call(api, version, timeout, expect_response, std::move(on_finished));
  if (call->done()) return call;
  head_.resize(head_room());
  const size_t from = put_frame_head(*call, body.size(), head_);
  const std::array<ByteView, 2> parts{ByteView(head_).subspan(from), body};
  end_call(call, stream_->write_all_gathered(parts));
  return call;
}

size_t Connection::head_room() const {
  // size, api key, version, correlation id, client id (length and bytes), the v2 header's empty tagged fields
  return protocol::kFrameSizeBytes + 2 + 2 + 4 + 2 + client_id_.size() + 1;
}

CallPtr Connection::start_framed(protocol::ApiKey api, int16_t version, Bytes framed, Duration timeout,
                                 bool expect_response, std::function<void()> on_finished) {
  const size_t room = head_room();
  SLUICE_ASSERT(framed.size() >= room);
  LockGuard lock(write_mutex_);
  CallPtr call = begin_call(api, version, timeout, expect_response, std::move(on_finished));
  if (call->done()) return call;
  const size_t from = put_frame_head(*call, framed.size() - room, MutableByteView(framed).first(room));
  end_call(call, stream_->write_owned(std::move(framed), from));
  return call;
}

size_t Connection::put_frame_head(const Call& call, size_t body_bytes, MutableByteView room) const {
  return protocol::put_request_frame_head({call.api, call.version, call.correlation_id, client_id_}, body_bytes, room);
}

CallPtr Connection::begin_call(protocol::ApiKey api, int16_t version, Duration timeout, bool expect_response,
                               std::function<void()> on_finished) {
  CallPtr call = reusable_call();
  call->api = api;
  call->version = version;
  call->expect_response = expect_response;
  call->on_finished = std::move(on_finished);
  if (broken_) {
    finish(*call, not_sent(failure_.message()));
    return call;
  }
  SLUICE_ASSERT(next_correlation_id_ < std::numeric_limits<int32_t>::max());
  call->correlation_id = next_correlation_id_++;
  SLUICE_ASSERT(pending_.empty() || pending_.back()->correlation_id < call->correlation_id);
  call->deadline = env_.clock.now() + timeout;
  if (!pending_.empty()) call->deadline = std::max(call->deadline, pending_.back()->deadline);
  if (expect_response) pending_.push_back(call);
  return call;
}

void Connection::end_call(const CallPtr& call, const Status& wrote) {
  if (!wrote.ok()) {
    finish(*call, not_sent(fmt::format("writing {}: {}", describe(*call), wrote.to_string())));
    fail(connection_reset(fmt::format("writing to {} failed: {}", address_.to_string(), wrote.to_string())));
    return;
  }
  call->written = true;
  ++requests_written_;
  if (!call->expect_response) {
    finish(*call, Bytes());
  } else if (!call->done()) {
    arm_deadline();
  }
}

void Connection::arm_deadline() {
  if (deadline_timer_ != 0 || broken_ || pending_.empty()) return;
  std::weak_ptr<Connection> weak = weak_from_this();
  deadline_timer_ = env_.clock.add_timer(pending_.front()->deadline, [weak] {
    if (std::shared_ptr<Connection> self = weak.lock()) self->on_deadline();
  });
}

// The reader fiber: every frame answers the oldest pending request.
void Connection::read_answers() {
  protocol::FrameReader reader(*stream_, protocol::kDefaultMaxFrameBytes, kReadAheadBytes);
  while (!broken_) {
    Result<std::optional<ByteView>> frame = reader.next();
    if (!frame.ok()) {
      fail(Status(Code::kConnectionReset,
                  fmt::format("reading from {}: {}", address_.to_string(), frame.status().to_string())));
      return;
    }
    if (!frame->has_value()) {
      fail(connection_reset(fmt::format("{} closed the connection", address_.to_string())));
      return;
    }
    if (!pending_.empty() && SLUICE_BUGGIFY_P(env_.buggify, "client.answer-too-late", kBuggifyTooLateChance)) {
      // The answer came just after the request's deadline fired: the client gives up on it and on the requests
      // pipelined behind it, though the broker handled them, and retries as after any timeout.
      fail(timed_out(fmt::format("{} to {} answered too late (BUGGIFY)", describe(*pending_.front()),
                                 address_.to_string())));
      return;
    }
    const Status matched = match_answer(**frame, reader.whole_write());
    if (!matched.ok()) {
      env_.log.warn("client: dropping the connection to {}: {}", address_.to_string(), matched.to_string());
      fail(connection_reset(matched.message()));
      return;
    }
  }
}

Status Connection::match_answer(ByteView frame, Bytes* whole_write) {
  if (pending_.empty()) return corruption("an answer arrived with no request pending");
  CallPtr call = pending_.front();
  ByteView body;
  Result<int32_t> correlation_id = protocol::decode_response_header(frame, call->api, call->version, &body);
  if (!correlation_id.ok()) return correlation_id.status();
  if (*correlation_id != call->correlation_id) {
    return corruption(fmt::format("an answer with correlation id {} arrived for {}", *correlation_id, describe(*call)));
  }
  pending_.pop_front();
  if (whole_write != nullptr) {
    // The frame is the buffer the broker wrote: the answer keeps it, the body after the frame's size and header.
    call->body_at = static_cast<size_t>(body.data() - whole_write->data());
    finish(*call, std::move(*whole_write));
  } else {
    finish(*call, Bytes(body.begin(), body.end()));
  }
  if (spare_calls_.size() < kSpareCalls) spare_calls_.push_back(std::move(call));
  return Status();
}

CallPtr Connection::reusable_call() {
  // A spare whose caller has let go of it (the list holds the only reference) is as good as new once reset.
  for (auto spare = spare_calls_.rbegin(); spare != spare_calls_.rend(); ++spare) {
    if (spare->use_count() != 1) continue;
    CallPtr call = std::move(*spare);
    spare_calls_.erase(std::next(spare).base());
    SLUICE_ASSERT(call->done() && !call->on_finished);
    call->correlation_id = -1;
    call->written = false;
    call->result.reset();
    call->body_at = 0;
    call->finished.reset();
    call->deadline = Instant{};
    return call;
  }
  return std::make_shared<Call>(env_.scheduler);
}

void Connection::on_deadline() {
  deadline_timer_ = 0;  // firing now
  if (broken_ || pending_.empty()) return;
  const Call& oldest = *pending_.front();
  // Deadlines never decrease along pending_, so when the oldest call's has not passed, no call's has.
  if (oldest.deadline > env_.clock.now()) {
    arm_deadline();  // the call it was armed for was answered
    return;
  }
  fail(timed_out(
      fmt::format("{} to {} unanswered within the request timeout", describe(oldest), address_.to_string())));
}

void Connection::close() { fail(closed(fmt::format("the connection to {} was closed", address_.to_string()))); }

void Connection::fail(const Status& why) {
  if (broken_) return;
  SLUICE_ASSERT(!why.ok());
  broken_ = true;
  failure_ = why;
  if (deadline_timer_ != 0) env_.clock.cancel_timer(deadline_timer_);
  deadline_timer_ = 0;
  stream_->close();
  std::deque<CallPtr> calls = std::move(pending_);
  pending_.clear();
  for (const CallPtr& call : calls) {
    finish(*call, call->written ? why : not_sent(fmt::format("{}: {}", describe(*call), why.message())));
  }
}

void Connection::finish(Call& call, Result<Bytes> result) {
  if (call.done()) return;
  call.result.emplace(std::move(result));
  call.finished.set();
  if (call.on_finished) {
    std::function<void()> notify = std::move(call.on_finished);
    call.on_finished = nullptr;
    notify();
  }
}

}  // namespace sluice::client::detail
