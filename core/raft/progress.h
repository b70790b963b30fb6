// The leader's view of one follower (or learner): how far its log is known to match, what to send next, and the
// flow control of appends in flight (etcd's probe and replicate states).
#pragma once

#include <cstdint>
#include <deque>

#include "core/raft/types.h"

namespace sluice::raft {

enum class ProgressState : uint8_t {
  kProbe,      // where the logs diverge is unknown: one append at a time, each waiting for its answer
  kReplicate,  // the logs match up to `match`: appends are pipelined, up to Options::max_inflight_appends
};

struct Progress {
  Index match = 0;  // known to match the leader's log and countable toward commit (durable there, if `persisted`)
  Index next = 1;   // the first index the next append carries
  ProgressState state = ProgressState::kProbe;
  bool probe_sent = false;   // kProbe: an append is outstanding; the next waits for its answer or a heartbeat's
  std::deque<Index> inflight = {};  // kReplicate: last index of each append in flight, oldest first
  bool recent_active = false;  // answered since the last check-quorum round
  bool acked_since_heartbeat = false;  // an append answer arrived since the last heartbeat went out
  uint64_t incarnation = 0;    // the follower's, from its answers; 0 until it has answered
  Index log_start = 0;         // the follower's log start, from its latest answer (DeleteRecords waits on it)
  // The leader's tick count at the follower's latest answer, and at its latest answer that matched the leader's whole
  // log then (Kafka's LastFetchTimestamp and LastCaughtUpTimestamp, in ticks); 0: never in this term.
  uint64_t answered_tick = 0;
  uint64_t caught_up_tick = 0;
};

}  // namespace sluice::raft
