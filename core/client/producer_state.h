// The producer's insides (client.h: Producer), shared by producer.cc (send, settle, identity) and producer_lane.cc
// (each partition's sender fiber).
//
// Each partition has a lane: its batches in send() order and one sender fiber, spawned when a batch arrives and
// ending when the lane is empty. The sender keeps up to max_in_flight produce requests written on the leader's
// connection (and at most max_in_flight per broker across lanes), and handles their answers strictly in order:
//   - success (or DUPLICATE_SEQUENCE_NUMBER, an older broker's answer to a retried batch it already has) settles
//     kOk;
//   - a retriable error or a transport failure sends the batch again after a backoff. The rest of the window is
//     drained first, and every batch of it that must go again is queued back in its order, ahead of new batches:
//     with idempotence a retry carries the same producer id, epoch and sequence, so the broker answers a batch it
//     appended before with its original offsets instead of appending it twice;
//   - any other error settles the batch kFailed (kUnknown if an earlier attempt may have been appended).
// `maybe_appended` is sticky: once a written attempt went unanswered (or was answered REQUEST_TIMED_OUT,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND, KAFKA_STORAGE_ERROR, or with acks=all NOT_LEADER_OR_FOLLOWER: errors.h
// produce_may_have_appended), the batch can no longer settle kFailed, whatever a later attempt answers.
//
// Idempotence (Kafka 3.9's producer, KIP-360): sequences are assigned per partition when a batch is first built.
// When a sequence cannot be resolved (a batch settled without success after it was built: a definitive error,
// OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID at the head of the window, or the delivery timeout), the lane
// waits for its window to drain and starts afresh under a new producer id (InitProducerId, as Kafka bumps the
// epoch), with sequences from 0: batches it had built and not yet resolved are built again, except those that may
// have been appended, which settle kUnknown (a new sequence could append them twice). OUT_OF_ORDER answers that
// follow a failed batch in the same window are the expected consequence and are sent again.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/client/client_core.h"
#include "core/client/connection.h"
#include "core/env/sync.h"

namespace sluice::client {
namespace detail {

// One send(): a record batch for one partition, until it settles.
struct PendingBatch {
  TopicPartitionId tp;
  std::vector<ProducerRecord> records;
  Producer::Done done;
  Instant deadline{};
  int attempts = 0;  // requests written
  int failures = 0;  // failed tries, written or not (the backoff grows with them)
  bool maybe_appended = false;
  int16_t last_error = 0;
  std::string error;
  // Built when first sent and kept across retries.
  std::optional<Bytes> built;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
};
using BatchPtr = std::shared_ptr<PendingBatch>;

struct InFlight {
  BatchPtr batch;
  CallPtr call;
  int32_t node = -1;
  int16_t version = 0;
};

struct Lane {
  explicit Lane(Scheduler& scheduler) : wake(scheduler) {}

  TopicPartitionId tp;
  // Its sender fiber's name, built once: a sender starts for most batches (it ends when its lane empties).
  std::string sender_name;
  // Wakes the lane's sender: an answer to its window arrived, a batch was queued, a slot it may wait for freed, or
  // the producer stopped. One queue per lane: with one for all, every answer woke every lane's sender.
  WaitQueue wake;
  std::deque<BatchPtr> queued;  // to send: batches to send again first (in their order), then new ones
  std::deque<InFlight> window;  // written, answers awaited, in write order
  size_t retry_insert = 0;      // where the next batch to send again goes in `queued`, this round
  bool round_failed = false;    // a batch of the window failed: the rest drains before anything is sent
  bool reset_needed = false;    // idempotence: start afresh under a new producer id once the window drains
  Instant backoff_until{};
  int32_t node = -1;  // the leader last sent to
  bool sender_running = false;
  // Idempotence: the producer id this lane's sequences belong to, and the next sequence.
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t next_sequence = 0;
  // The sequence after the last batch acknowledged under that identity (-1: none). A batch whose answer failed may
  // still have been appended (NOT_LEADER_OR_FOLLOWER after a cluster leader's append, a lost answer): later batches
  // of its window can then succeed, and its retry is followed by the first batch after them.
  int32_t acked_end = -1;
};

}  // namespace detail

struct Producer::State : std::enable_shared_from_this<Producer::State> {
  State(std::shared_ptr<detail::ClientCore> core, ProducerConfig config);

  std::shared_ptr<detail::ClientCore> core;
  Env env;
  ProducerConfig config;
  std::map<TopicPartitionId, std::shared_ptr<detail::Lane>> lanes;
  std::map<int32_t, int> in_flight_by_node;
  size_t unsettled = 0;
  bool stopped = false;  // the Producer is gone: lanes stop at their next step, settling nothing
  WaitQueue changed;     // a batch settled (flush waits on it)
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  Mutex identity_mutex;  // one InitProducerId at a time

  void enqueue(detail::BatchPtr batch);
  void settle(const detail::BatchPtr& batch, Outcome outcome, int64_t base_offset = -1, int64_t log_start_offset = -1);
  void settle_unresolved(const detail::BatchPtr& batch, const std::string& why);
  // Idempotence: the lane's producer id, fetched when the producer has none yet; a fresh one for a reset.
  Status ensure_identity(detail::Lane& lane);
  Status reset_identity(detail::Lane& lane);
  Status init_producer_id();
  // What a call's completion runs: it wakes `lane`'s sender.
  std::function<void()> notifier(detail::Lane& lane);
  // Wakes every lane's sender (a slot of a full node freed, the producer stopped).
  void wake_all_lanes();

  // The sender fiber and its steps (producer_lane.cc).
  void run_lane(const std::shared_ptr<detail::Lane>& lane);
  void drain_answers(detail::Lane& lane);
  // Gives back a slot of `node` taken for a call of the window; when the node was full, other lanes may wait.
  void free_slot(int32_t node);
  void handle_answer(detail::Lane& lane, const detail::InFlight& entry);
  void handle_error_code(detail::Lane& lane, const detail::BatchPtr& batch, int16_t error);
  void requeue(detail::Lane& lane, const detail::BatchPtr& batch);
  void fail_attempt(detail::Lane& lane, const detail::BatchPtr& batch, int16_t error, std::string why);
  void expire_queued(detail::Lane& lane);
  void fill_window(detail::Lane& lane);
  Result<bool> send_one(detail::Lane& lane);
  Status build(detail::Lane& lane, detail::PendingBatch& batch);
  void abandon(detail::Lane& lane, const std::string& why);
  bool has_work(const detail::Lane& lane) const;
  static bool has_unhandled_answer(const detail::Lane& lane);  // a call of the window finished, not yet handled
  std::optional<Instant> next_deadline(const detail::Lane& lane) const;
  bool slot_free(int32_t node) const;
};

}  // namespace sluice::client
