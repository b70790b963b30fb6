// A partition's sender fiber (producer_state.h has the rules): it writes up to max_in_flight produce requests,
// handles their answers in order, sends failed batches again after a backoff, and settles each batch once.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/client/errors.h"
#include "core/client/producer_state.h"
#include "core/client/requests.h"

namespace sluice::client {

using detail::BatchPtr;
using detail::InFlight;
using detail::Lane;
using detail::PendingBatch;

namespace {

// A produce request's fields around its one partition's records: acks, timeout, counts, the partition's index,
// the records' length, tagged fields (the topic's name comes on top).
constexpr size_t kProduceFramingBytes = 64;

int32_t next_sequence_after(int32_t base, size_t count) {
  // Sequences wrap to 0 after INT32_MAX, as the broker expects (producer_state.h of core/cluster).
  const int64_t next = static_cast<int64_t>(base) + static_cast<int64_t>(count);
  constexpr int64_t kWrap = static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1;
  return static_cast<int32_t>(next % kWrap);
}

}  // namespace

void Producer::State::run_lane(const std::shared_ptr<Lane>& lane) {
  while (!stopped) {
    if (core->closed()) {
      abandon(*lane, "the client was closed");
      break;
    }
    drain_answers(*lane);
    expire_queued(*lane);
    if (lane->window.empty() && lane->queued.empty()) break;
    fill_window(*lane);
    if (has_work(*lane)) continue;
    const std::optional<Instant> deadline = next_deadline(*lane);
    if (deadline) {
      lane->wake.wait_until(*deadline);
    } else {
      lane->wake.wait();
    }
  }
  lane->sender_running = false;
}

void Producer::State::free_slot(int32_t node) {
  int& in_flight = in_flight_by_node[node];
  SLUICE_ASSERT(in_flight > 0);
  // Only a full node's lanes wait for a slot (slot_free): below that, no sender needs waking.
  if (in_flight-- == config.max_in_flight) wake_all_lanes();
}

bool Producer::State::slot_free(int32_t node) const {
  auto it = in_flight_by_node.find(node);
  return it == in_flight_by_node.end() || it->second < config.max_in_flight;
}

// Calls finish in write order (a connection answers in order, and a broken one finishes all it has, before a new
// one is opened), so an answer not yet handled is at the front; but check them all rather than rely on it.
bool Producer::State::has_unhandled_answer(const Lane& lane) {
  return std::any_of(lane.window.begin(), lane.window.end(), [](const InFlight& entry) { return entry.call->done(); });
}

bool Producer::State::has_work(const Lane& lane) const {
  if (!lane.window.empty() && lane.window.front().call->done()) return true;
  if (has_unhandled_answer(lane)) return false;  // the front's answer comes first, and notifies
  if (lane.round_failed && !lane.window.empty()) return false;  // the rest of the window drains first
  const Instant now = env.clock.now();
  if (now < lane.backoff_until) return false;
  if (!lane.queued.empty() && now >= lane.queued.front()->deadline) return true;
  if (lane.reset_needed) return lane.window.empty() && !lane.queued.empty();
  return !lane.queued.empty() && lane.window.size() < static_cast<size_t>(config.max_in_flight) &&
         (lane.node < 0 || slot_free(lane.node));
}

std::optional<Instant> Producer::State::next_deadline(const Lane& lane) const {
  if (lane.queued.empty()) return std::nullopt;  // only answers can make work, and they notify
  std::optional<Instant> deadline = lane.queued.front()->deadline;
  if (lane.backoff_until > env.clock.now()) deadline = std::min(*deadline, lane.backoff_until);
  return deadline;
}

void Producer::State::drain_answers(Lane& lane) {
  while (!lane.window.empty() && lane.window.front().call->done()) {
    const InFlight entry = std::move(lane.window.front());
    lane.window.pop_front();
    free_slot(entry.node);
    handle_answer(lane, entry);
  }
  if (lane.window.empty()) {  // the round is over: what must go again is at the front of the queue
    lane.round_failed = false;
    lane.retry_insert = 0;
  }
}

void Producer::State::handle_answer(Lane& lane, const InFlight& entry) {
  const BatchPtr& batch = entry.batch;
  const Result<Bytes>& answer = *entry.call->result;
  if (!answer.ok()) {
    if (entry.call->written && outcome_unknown(answer.status())) batch->maybe_appended = true;
    fail_attempt(lane, batch, 0, answer.status().to_string());
    return;
  }
  if (config.acks == 0) {
    settle(batch, Outcome::kOk);  // written: what acks=0 promises (Kafka's producer settles it so too)
    return;
  }
  const ByteView body = ByteView(*answer).subspan(entry.call->body_at);
  Result<protocol::ProduceResponse> response = protocol::decode_message<protocol::ProduceResponse>(body, entry.version);
  Result<protocol::ProduceResponse::PartitionResponse> partition =
      response.ok() ? produce_answer(*response, lane.tp)
                    : Result<protocol::ProduceResponse::PartitionResponse>(response.status());
  if (!partition.ok()) {
    batch->maybe_appended = true;  // an answer came that says nothing reliable
    fail_attempt(lane, batch, 0, "unreadable produce answer: " + partition.status().to_string());
    return;
  }
  const int16_t error = partition->error_code;
  if (error == errc::kNone || error == errc::kDuplicateSequenceNumber) {
    if (config.idempotent && batch->producer_id == lane.producer_id && batch->producer_epoch == lane.producer_epoch) {
      lane.acked_end = std::max(lane.acked_end, next_sequence_after(batch->base_sequence, batch->records.size()));
    }
    settle(batch, Outcome::kOk, partition->base_offset, partition->log_start_offset);
    return;
  }
  batch->last_error = error;
  batch->error = error_label(error);
  if (partition->error_message) batch->error += ": " + *partition->error_message;
  handle_error_code(lane, batch, error);
}

void Producer::State::handle_error_code(Lane& lane, const BatchPtr& batch, int16_t error) {
  const bool sequence_error = error == errc::kOutOfOrderSequenceNumber || error == errc::kUnknownProducerId;
  if (config.idempotent && sequence_error && lane.round_failed) {
    // An earlier batch of this window was not appended, so this one could not follow it: send it again.
    requeue(lane, batch);
    return;
  }
  if (is_retriable(error)) {
    if (produce_may_have_appended(error, config.acks)) batch->maybe_appended = true;
    if (invalidates_metadata(error)) core->invalidate_metadata();
    fail_attempt(lane, batch, error, batch->error);
    return;
  }
  if (config.idempotent) {  // the batch's sequence is gone: the batches after it cannot follow
    lane.reset_needed = true;
    lane.round_failed = true;
  }
  settle_unresolved(batch, "refused");
}

// Queues a batch of this round's window to go again: behind those queued again before it, ahead of new batches.
void Producer::State::requeue(Lane& lane, const BatchPtr& batch) {
  SLUICE_ASSERT(lane.retry_insert <= lane.queued.size());
  lane.queued.insert(lane.queued.begin() + static_cast<std::ptrdiff_t>(lane.retry_insert++), batch);
}

// One try failed: send the batch again after a backoff, unless its delivery timeout has passed.
void Producer::State::fail_attempt(Lane& lane, const BatchPtr& batch, int16_t error, std::string why) {
  batch->last_error = error;
  batch->error = std::move(why);
  ++batch->failures;
  lane.round_failed = true;  // until the window drains
  if (env.clock.now() >= batch->deadline) {
    if (config.idempotent && batch->built) lane.reset_needed = true;  // its sequence stays unresolved
    settle_unresolved(batch, "delivery timeout");
    return;
  }
  requeue(lane, batch);
  lane.backoff_until = std::max(lane.backoff_until, env.clock.now() + core->backoff(batch->failures));
}

void Producer::State::expire_queued(Lane& lane) {
  const Instant now = env.clock.now();
  // Usually nothing expired: then the queue stays as it is, without rebuilding it (a deque allocates when made).
  const bool none_expired =
      std::none_of(lane.queued.begin(), lane.queued.end(), [now](const BatchPtr& b) { return now >= b->deadline; });
  if (none_expired) {
    lane.retry_insert = std::min(lane.retry_insert, lane.queued.size());
    return;
  }
  std::vector<BatchPtr> expired;
  std::deque<BatchPtr> kept;
  size_t retries_kept = 0;  // of the batches queued again this round, ahead of retry_insert
  for (size_t i = 0; i < lane.queued.size(); ++i) {
    BatchPtr& batch = lane.queued[i];
    if (now < batch->deadline) {
      if (i < lane.retry_insert) ++retries_kept;
      kept.push_back(std::move(batch));
      continue;
    }
    if (config.idempotent && batch->built) lane.reset_needed = true;  // its sequence stays unresolved
    expired.push_back(std::move(batch));
  }
  lane.queued = std::move(kept);
  // The rest of the window, when it fails, goes in behind the retries that remain: ahead of every new batch.
  lane.retry_insert = retries_kept;
  for (const BatchPtr& batch : expired) settle_unresolved(batch, "delivery timeout");
}

void Producer::State::abandon(Lane& lane, const std::string& why) {
  std::vector<BatchPtr> batches;
  for (const InFlight& entry : lane.window) {
    if (entry.call->written) entry.batch->maybe_appended = true;
    free_slot(entry.node);
    batches.push_back(entry.batch);
  }
  lane.window.clear();
  batches.insert(batches.end(), lane.queued.begin(), lane.queued.end());
  lane.queued.clear();
  for (const BatchPtr& batch : batches) settle_unresolved(batch, why);
}

void Producer::State::fill_window(Lane& lane) {
  while (!stopped) {
    if (lane.round_failed && !lane.window.empty()) return;
    if (env.clock.now() < lane.backoff_until) return;
    if (config.idempotent && lane.reset_needed) {
      if (!lane.window.empty() || lane.queued.empty()) return;
      const Status reset = reset_identity(lane);
      if (!reset.ok()) {
        env.log.debug("producer {}: {}", lane.tp.to_string(), reset.to_string());
        lane.backoff_until = env.clock.now() + core->backoff(1);
        return;
      }
      continue;
    }
    if (lane.queued.empty() || lane.window.size() >= static_cast<size_t>(config.max_in_flight)) return;
    Result<bool> sent = send_one(lane);
    if (sent.ok() && *sent) continue;
    if (sent.ok()) return;  // no slot on the leader's connection, or an answer to handle first
    const BatchPtr batch = lane.queued.front();
    batch->last_error = sent.status().protocol_error();
    batch->error = sent.status().to_string();
    ++batch->failures;
    if (!worth_retrying(sent.status()) && sent.status().code() != Code::kClosed) {
      lane.queued.pop_front();
      if (config.idempotent && batch->built) lane.reset_needed = true;  // its sequence stays unresolved
      settle_unresolved(batch, "not sent");
      continue;
    }
    if (sent.status().code() == Code::kInvalidArgument && invalidates_metadata(batch->last_error)) {
      core->invalidate_metadata();
    }
    lane.backoff_until = env.clock.now() + core->backoff(batch->failures);
    return;
  }
}

// Writes the first queued batch to its leader. False when the leader's connection has no free slot, or when an
// answer to the window arrived while it was suspended.
Result<bool> Producer::State::send_one(Lane& lane) {
  const BatchPtr batch = lane.queued.front();
  SLUICE_ASSIGN_OR_RETURN(int32_t leader, core->leader_for(lane.tp));
  if (config.via_node >= 0) leader = config.via_node;  // the metadata refresh above still learns its address
  lane.node = leader;
  if (!slot_free(leader)) return false;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<detail::Connection> connection, core->connection(leader));
  SLUICE_ASSIGN_OR_RETURN(int16_t version, connection->version_for(protocol::ApiKey::kProduce));
  if (config.idempotent && !batch->built) SLUICE_TRY(ensure_identity(lane));
  // Only this fiber takes from the lane, but the suspensions above may have seen a stop, a filled slot, or an
  // answer to the window: a failed batch there must go again before this one, or its retry would leave behind a
  // later sequence (after a reset connection, this batch would be the first written on the new one).
  if (stopped || !slot_free(leader) || lane.reset_needed || has_unhandled_answer(lane)) return false;
  SLUICE_ASSERT(lane.queued.front() == batch);
  if (!batch->built) SLUICE_TRY(build(lane, *batch));
  // Encoded behind room for the frame head, which the connection writes in: one buffer goes to the stream.
  Bytes framed;
  framed.reserve(connection->head_room() + batch->built->size() + kProduceFramingBytes + lane.tp.topic.size());
  framed.resize(connection->head_room());
  SLUICE_TRY(protocol::encode_message(
      produce_request(config.acks, config.request_timeout_ms, lane.tp, ByteView(*batch->built)), version,
      &framed));
  // The slot is taken before the write: a write may park (a full socket buffer), and another lane's sender must
  // then find the slot taken, or the two would put more than max_in_flight requests on the connection.
  const int in_flight = ++in_flight_by_node[leader];
  SLUICE_ASSERT(in_flight <= config.max_in_flight);
  detail::CallPtr call = connection->start_framed(protocol::ApiKey::kProduce, version, std::move(framed),
                                                  core->config().request_timeout, config.acks != 0, notifier(lane));
  lane.queued.pop_front();
  if (lane.retry_insert > 0) --lane.retry_insert;
  ++batch->attempts;
  lane.window.push_back({batch, std::move(call), leader, version});
  SLUICE_ASSERT(lane.window.size() <= static_cast<size_t>(config.max_in_flight));
  if (config.idempotent && lane.window.size() >= 2) {  // one identity's sequences leave in order, without gaps
    const PendingBatch& previous = *lane.window[lane.window.size() - 2].batch;
    const bool follows = next_sequence_after(previous.base_sequence, previous.records.size()) == batch->base_sequence;
    // A retry whose later batches were acknowledged meanwhile (the broker took them after it: it was appended, the
    // retry is a duplicate) is followed by the first batch after those, or by another such retry: of a window
    // 564-568 whose answers for 564 and 566 were lost, 564 and 566 go again together.
    const bool follows_acknowledged = previous.attempts > 1 && batch->base_sequence == lane.acked_end;
    const bool acknowledged_since =
        batch->attempts > 1 && next_sequence_after(batch->base_sequence, batch->records.size()) <= lane.acked_end;
    SLUICE_ASSERT(previous.producer_id != batch->producer_id || follows || follows_acknowledged ||
                  acknowledged_since);
  }
  return true;
}

// Builds the batch; with idempotence it takes the lane's next sequences, kept for every retry.
Status Producer::State::build(Lane& lane, PendingBatch& batch) {
  storage::BatchOptions options;
  options.compression = config.compression;
  if (config.idempotent) {
    SLUICE_ASSERT(lane.producer_id >= 0);
    options.producer_id = lane.producer_id;
    options.producer_epoch = lane.producer_epoch;
    options.base_sequence = lane.next_sequence;
  }
  SLUICE_ASSIGN_OR_RETURN(Bytes built, build_record_batch(batch.records, to_unix_ms(env.clock.wall_now()), options));
  batch.built = std::move(built);
  batch.producer_id = options.producer_id;
  batch.producer_epoch = options.producer_epoch;
  batch.base_sequence = options.base_sequence;
  if (config.idempotent) lane.next_sequence = next_sequence_after(lane.next_sequence, batch.records.size());
  return Status();
}

}  // namespace sluice::client
