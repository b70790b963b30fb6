// Declared effects: what the broker removed or cut on purpose, reported as it happens, so that the simulator's
// checkers can tell a legitimate removal (retention, compaction, DeleteRecords, topic deletion, recovery's cut of a
// torn tail) from a lost write. The checkers never trust an effect to excuse more than it says: a retention effect
// still has to match the records' timestamps and the topic's retention.ms, a compaction effect still has to leave
// the latest value of each key. In the real world nobody listens (the sink is null).
#pragma once

#include <cstdint>
#include <string>

#include "core/storage/topic_partition.h"

namespace sluice::storage {

struct LogEffect {
  enum class Kind : uint8_t {
    kLogStartAdvanced = 0,     // [from, to): the log start moved from `from` to `to`
    // One cleaner pass at now_ms over [from, to): `from` the log start as it began, `to` its cleaned end. Any
    // record there may go whose key has a later record below `to`, and any tombstone past its horizon.
    kCompacted = 1,
    // Recovery after an unclean stop cut [from, to): `from` is the new log end, `to` the end before (-1: unknown,
    // as for a torn tail, whose offsets cannot be trusted).
    kTruncatedOnRecovery = 2,
    kPartitionCreated = 3,  // now_ms only: a new partition starts empty at offset 0
    kPartitionDeleted = 4,  // the partition and all its records [from, to) (log start, log end) are gone: DeleteTopics
  };
  enum class Reason : uint8_t {
    kNone = 0,
    kRetentionTime = 1,   // retention.ms: batches whose max timestamp < now_ms - retention.ms
    kRetentionBytes = 2,  // retention.bytes
    kDeleteRecords = 3,
    kDiskPressure = 4,    // log.disk.pressure.policy=delete-oldest
  };

  Kind kind = Kind::kLogStartAdvanced;
  Reason reason = Reason::kNone;
  TopicPartition tp;
  int64_t from = -1;
  int64_t to = -1;
  int64_t now_ms = -1;  // the broker's wall clock when it decided (retention, cleaner, recovery)
  // kCompacted: tombstones in the cleaned section whose delete horizon had passed were removed; the pass gave
  // tombstones first seen by it a horizon of now_ms + delete.retention.ms.
  int64_t delete_retention_ms = -1;
};

std::string to_string(const LogEffect& effect);  // one line, for traces and failure reports

class EffectSink {
 public:
  virtual ~EffectSink() = default;
  // Called on the node's fiber that makes the change, as it takes effect and before any other fiber can observe
  // it: a moved log start right after the move, a cleaner pass before its first swap, a deleted partition as it
  // leaves the table; so before a client is answered (DeleteRecords, DeleteTopics). Must not block.
  virtual void record(const LogEffect& effect) = 0;
};

}  // namespace sluice::storage
