// One client connection to one broker: requests pipelined behind each other (each with its correlation id), a
// reader fiber that matches the answers in order (Kafka answers a connection's requests in request order), a
// deadline per request, and the broker's ApiVersions learnt first.
//
// Failure: the first error (a read or write failure, an answer that does not match, a request past its deadline,
// close()) breaks the connection for good. Every call pending on it finishes at once: with kTimedOut,
// kConnectionReset or kClosed when its request was written (the outcome is unknown), with not_sent otherwise. The
// owner (ClientCore) opens a new connection for the next request.
//
// Fibers: a Connection is shared (shared_ptr) by its reader fiber and its users; calls come from fibers of one
// node. Request deadlines are one clock timer per connection, whose callback only closes the stream and wakes
// waiters.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/client/versions.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/protocol/api_table.h"

namespace sluice::client::detail {

// One request, from its write to its answer. Shared by the connection (until it finishes) and the caller.
struct Call {
  explicit Call(Scheduler& scheduler) : finished(scheduler) {}

  protocol::ApiKey api = protocol::ApiKey::kApiVersions;
  int16_t version = 0;
  int32_t correlation_id = -1;
  bool expect_response = true;
  bool written = false;
  // The response body (after its header) from body_at on; an empty body for a request without response once
  // written; or why it failed (see the header comment).
  std::optional<Result<Bytes>> result;
  // Where the body begins in result's bytes: an answer keeps the buffer it came in, the frame's size and header
  // ahead of the body (shifting the body to the front was a copy of every answer).
  size_t body_at = 0;
  Event finished;
  // Runs once when the result is set, on the fiber or timer that set it: it must not block.
  std::function<void()> on_finished;
  // Never earlier than the deadline of the call written before it, so the oldest pending call's comes first.
  Instant deadline{};

  bool done() const { return result.has_value(); }
};
using CallPtr = std::shared_ptr<Call>;

// Parks until `call` finishes; its result, moved out (the caller is its only reader), the body alone.
Result<Bytes> wait_for(Call& call);

// An answer's body where it came: `buffer` from `body_at` on.
struct Answer {
  Bytes buffer;
  size_t body_at = 0;
  ByteView body() const { return ByteView(buffer).subspan(body_at); }
};
// As wait_for, leaving the body where it is in its buffer (no copy): for the answers of every produce and fetch.
Result<Answer> wait_for_answer(Call& call);

struct ConnectionOptions {
  std::string client_id;
  Duration connect_timeout{};
  Duration request_timeout{};  // for the ApiVersions exchange
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Connects, starts the reader fiber and asks for the broker's versions. A failure is not_sent: nothing of the
  // caller's was written.
  static Result<std::shared_ptr<Connection>> open(Env env, const Address& address, const ConnectionOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Writes one request (its body encoded at `version`) behind those already written and returns its call, which
  // finishes as Call::result describes. A request unanswered `timeout` after its write breaks the connection
  // (kTimedOut), but never before the request ahead of it is due: the broker answers a connection's requests in
  // order, so a long-polling Fetch ahead holds up the answers behind it. `on_finished` is installed before
  // anything can finish the call.
  CallPtr start(protocol::ApiKey api, int16_t version, ByteView body, Duration timeout, bool expect_response,
                std::function<void()> on_finished = {});
  // The room a request's frame head takes at most (its size and header with this connection's client id).
  size_t head_room() const;
  // As start, for a body encoded behind head_room() bytes of room in `framed`: the head is written into the room
  // and the stream takes the buffer (Stream::write_owned), so the simulated network needs no joined copy.
  CallPtr start_framed(protocol::ApiKey api, int16_t version, Bytes framed, Duration timeout, bool expect_response,
                       std::function<void()> on_finished = {});
  // The highest version of `api` both sides speak; kNotSupported when the ranges do not meet.
  Result<int16_t> version_for(protocol::ApiKey api) const;

  // Breaks the connection with kClosed. Idempotent.
  void close();
  bool broken() const { return broken_; }
  const Address& address() const { return address_; }
  size_t pending() const { return pending_.size(); }  // written, awaiting their answers
  uint64_t requests_written() const { return requests_written_; }

 private:
  Connection(Env env, Address address, std::unique_ptr<Stream> stream, std::string client_id);

  Status negotiate_versions(Duration timeout);
  void read_answers();
  // `whole_write`: the buffer `frame` came in, when the reader has one (FrameReader::whole_write), which the
  // answer then takes instead of a copy.
  Status match_answer(ByteView frame, Bytes* whole_write);
  // One timer for every pending call, at the oldest one's deadline (Kafka's NetworkClient checks its in-flight
  // requests the same way): a timer per request was two heap operations and an allocation for each, and the
  // timers of answered requests filled the world's event heap until their time came.
  void arm_deadline();
  void on_deadline();
  // Breaks the connection: closes the stream and finishes every pending call (see the header comment).
  void fail(const Status& why);
  void finish(Call& call, Result<Bytes> result);
  // start's steps before and after the write (under write_mutex_). begin_call returns the call finished already
  // when the connection is broken, and otherwise gives it its correlation id.
  CallPtr begin_call(protocol::ApiKey api, int16_t version, Duration timeout, bool expect_response,
                     std::function<void()> on_finished);
  // Writes the call's frame head at the end of `room` (protocol::put_request_frame_head); returns where it starts.
  size_t put_frame_head(const Call& call, size_t body_bytes, MutableByteView room) const;
  void end_call(const CallPtr& call, const Status& wrote);
  // A call to start: an answered one its caller is done with, or a new one (a Call is an allocation per request).
  CallPtr reusable_call();

  Env env_;
  Address address_;
  std::unique_ptr<Stream> stream_;
  std::string client_id_;
  Mutex write_mutex_;  // one frame at a time on the stream, in correlation-id order
  Bytes head_;         // start's frame head, head_room() long (under write_mutex_): its buffer serves every request
  std::deque<CallPtr> pending_;
  static constexpr size_t kSpareCalls = 8;
  std::vector<CallPtr> spare_calls_;  // answered calls, for reusable_call
  int32_t next_correlation_id_ = 1;
  uint64_t requests_written_ = 0;
  TimerId deadline_timer_ = 0;  // armed while a call is pending; maybe at an answered call's deadline (then re-armed)
  bool broken_ = false;
  Status failure_;
  std::map<int16_t, VersionRange> broker_versions_;
  // version_for's answers by api key, worked out once (every request asks): kUnchosen until then.
  static constexpr int16_t kUnchosen = -1;
  static constexpr size_t kChosenApis = 128;
  mutable std::array<int16_t, kChosenApis> chosen_versions_{};
};

}  // namespace sluice::client::detail
