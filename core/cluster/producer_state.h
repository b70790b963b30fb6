// Idempotent producers (KIP-98 without transactions), per partition: the state Kafka's ProducerStateManager keeps
// for each producer id — its epoch and its last five batches (sequence range, offsets, timestamp) — and the rules a
// batch must pass. `cluster::Partition` owns one ProducerState and applies it on its append path; producer ids are
// handed out by kafka::ProducerIdManager (InitProducerId).
//
// The rules (Kafka 3.9 ProducerAppendInfo.checkProducerEpoch / checkSequence, UnifiedLog.append), checked in this
// order for a batch with producer id >= 0:
//   1. a retry of one of the producer's last 5 batches (same epoch, same first and last sequence) is not appended
//      again: it is answered NONE with the original offsets (modern Kafka no longer answers
//      DUPLICATE_SEQUENCE_NUMBER);
//   2. an epoch older than the producer's gives INVALID_PRODUCER_EPOCH (47);
//   3. a newer epoch must start at sequence 0 (else OUT_OF_ORDER_SEQUENCE_NUMBER, 45) and resets the state;
//   4. the same epoch must continue at last sequence + 1 (wrapping after INT32_MAX), else 45;
//   5. a producer without state (never seen, expired, or whose batches retention removed) may start at any
//      sequence. That is why Kafka no longer answers UNKNOWN_PRODUCER_ID (59) on produce, and neither do we.
//
// State is not snapshotted: the first idempotent append to a partition after a start rebuilds it from the batch
// headers in the tail of the log (the last kProducerScanBytes), so a retry after a restart is still de-duplicated
// as long as its original lies in that tail. A producer whose last batch lies before the tail starts afresh (rule
// 5), which is what Kafka does for a producer whose data retention deleted.
//
// Fibers: all calls come from the broker node's fibers. Appends of one producer to one partition take turns (the
// check, the append and the state update are one step: ProducerState::Turn); different producers append
// concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"

namespace sluice::cluster {

inline constexpr size_t kProducerBatchesRetained = 5;          // Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN
inline constexpr uint64_t kProducerScanBytes = 64ull << 20;    // log tail scanned to rebuild a partition's state
inline constexpr int64_t kProducerIdExpirationMs = 86400000;   // producer.id.expiration.ms

// The last sequence of a batch: base + last offset delta, wrapping past INT32_MAX to 0 as Kafka's sequences do.
int32_t last_sequence(const storage::BatchHeader& batch);

// One appended batch of a producer (Kafka's BatchMetadata).
struct ProducerBatch {
  int32_t first_sequence = 0;
  int32_t last_sequence = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;
  int64_t timestamp = -1;  // max timestamp (the append time under LogAppendTime)
  bool operator==(const ProducerBatch&) const = default;
};

struct ProducerEntry {
  int16_t epoch = -1;
  std::deque<ProducerBatch> batches;  // oldest first, at most kProducerBatchesRetained
  int64_t last_seen_ms = 0;           // broker wall clock of the last append (or of the log scan that found it)
};

// The producers of one partition and the rules above, without I/O.
class PartitionProducers {
 public:
  // nullopt: append the batch. A batch: the retried original, not to be appended again. An error:
  // INVALID_PRODUCER_EPOCH or OUT_OF_ORDER_SEQUENCE_NUMBER. REQUIRES: batch.producer_id >= 0.
  Result<std::optional<ProducerBatch>> check(const storage::BatchHeader& batch) const;
  // Takes in an appended batch (its header with the assigned base offset), from the produce path or a log scan.
  // `timestamp` is the batch's max timestamp as stored; `now_ms` the broker's wall clock.
  void record(const storage::BatchHeader& batch, int64_t timestamp, int64_t now_ms);
  // Forgets producers whose last batch lies below the log start (retention, DeleteRecords) or that were last seen
  // before `expire_before_ms` (producer.id.expiration.ms). Kafka measures that age from the batch timestamps; the
  // broker's own clock keeps a producer that writes old CreateTime timestamps from being forgotten at once.
  void forget(int64_t log_start_offset, int64_t expire_before_ms);

  const ProducerEntry* find(int64_t producer_id) const;
  size_t size() const { return producers_.size(); }

 private:
  std::map<int64_t, ProducerEntry> producers_;
};

// One partition's PartitionProducers with what its append path needs around them: the rebuild from the log on
// first use, turns per producer, and the periodic expiry (producer.id.expiration.check.interval.ms).
class ProducerState {
 public:
  explicit ProducerState(Env env);
  ProducerState(const ProducerState&) = delete;
  ProducerState& operator=(const ProducerState&) = delete;

  // Rebuilds the state from the tail of `log` the first time; concurrent callers wait for that one rebuild. A
  // failed rebuild is tried again by the next caller.
  Status load_once(storage::PartitionLog& log);
  // Forgets the state: the next load_once rebuilds it from the log (a replica that becomes leader, whose log grew by
  // the previous leader's appends). A rebuild running now is redone. Never suspends.
  void invalidate();

  // Producer `producer_id`'s turn on this partition, held for the life of the object.
  class Turn {
   public:
    Turn(ProducerState& state, int64_t producer_id);
    ~Turn();
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    ProducerState& state_;
    int64_t producer_id_;
  };

  // Forgets expired producers when the check interval has passed since the last expiry.
  void expire_when_due(int64_t log_start_offset);
  PartitionProducers& producers() { return producers_; }
  const PartitionProducers& producers() const { return producers_; }

 private:
  Status load(storage::PartitionLog& log);

  Env env_;
  PartitionProducers producers_;
  bool loaded_ = false;
  bool loading_ = false;
  uint64_t generation_ = 0;  // raised by invalidate(): a rebuild that started before it is redone
  std::set<int64_t> busy_;  // producers with an append in flight
  WaitQueue changed_;       // a load or an append ended
  Instant next_expiry_{};
};

}  // namespace sluice::cluster
