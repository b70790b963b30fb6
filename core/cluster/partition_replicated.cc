// Partition's replicated side (cluster mode): leadership from the partition's raft group, the leader's append as a
// raft proposal whose entry is the batch itself (partition_raft_log.h), the acks=all wait for the quorum's commit,
// and the high watermark following the commit index.
#include <fmt/format.h>

#include <algorithm>

#include "core/base/assert.h"
#include "core/cluster/partition.h"
#include "core/cluster/partition_raft_log.h"
#include "core/protocol/error_codes.h"

namespace sluice::cluster {
namespace {

using namespace std::chrono_literals;

// How long a leader's append may wait for the raft host's driver (it appends between rounds). The produce's own
// timeout bounds only the acks=all wait, as Kafka's DelayedProduce does.
constexpr Duration kAppendWaitMax = 30s;
// How often a replicated DeleteRecords looks at the followers' log starts.
constexpr Duration kDeleteRecordsPoll = 10ms;
// How often an acks=all answer that needs more copies than the commit's looks at the followers' progress.
constexpr Duration kInsyncCopiesPoll = 5ms;

size_t majority_of(size_t voters) { return voters / 2 + 1; }

}  // namespace

int32_t Partition::leader() const {
  if (!replicated()) return context_.node_id;
  return leader_id_;
}

bool Partition::is_leader() const {
  if (!replicated()) return true;
  return role_ == raft::Role::kLeader;
}

bool Partition::storage_offline() const { return log_->offline(); }

std::vector<int32_t> Partition::replicas() const {
  if (!replicated()) return {context_.node_id};
  return replica_group_->replicas;
}

std::vector<int32_t> Partition::in_sync_replicas() const {
  if (!replicated()) return {context_.node_id};
  if (!is_leader()) return replica_group_->replicas;
  const std::optional<raft::GroupStatus> status = replica_group_->host->status(replica_group_->group);
  if (!status.has_value()) return {context_.node_id};
  std::vector<int32_t> in_sync{context_.node_id};
  for (const raft::FollowerStatus& follower : status->followers) {
    // recent_active is raft's check-quorum flag: heard from within the last election timeout, which the cluster
    // sets below replica.lag.time.max.ms.
    if (follower.learner || !follower.recent_active || follower.match < status->commit_index) continue;
    in_sync.push_back(static_cast<int32_t>(follower.id));
  }
  std::sort(in_sync.begin(), in_sync.end());
  return in_sync;
}

Status Partition::not_leader() const {
  return kafka_error(ErrorCode::kNotLeaderOrFollower,
                     leader() >= 0 ? fmt::format("{} is led by node {}", tp_.to_string(), leader())
                                   : fmt::format("{} has no leader now", tp_.to_string()));
}

raft::GroupHooks Partition::hooks() {
  SLUICE_ASSERT(replicated());
  raft::GroupHooks hooks;
  hooks.apply_entries = false;  // the data is the log; only the commit index matters
  std::weak_ptr<Partition> weak = weak_from_this();
  hooks.on_commit = [weak](raft::Index commit) {
    if (const std::shared_ptr<Partition> self = weak.lock()) self->on_commit(commit);
  };
  hooks.on_role_change = [weak](raft::Role role, raft::Term term, raft::NodeId leader) {
    if (const std::shared_ptr<Partition> self = weak.lock()) self->on_role_change(role, term, leader);
  };
  return hooks;
}

// On the host's driver fiber: must not suspend.
void Partition::on_role_change(raft::Role role, raft::Term term, raft::NodeId leader) {
  SLUICE_ASSERT(replicated());
  SLUICE_ASSERT(term <= static_cast<raft::Term>(INT32_MAX));
  SLUICE_ASSERT(static_cast<int32_t>(term) >= leader_epoch_ || leader_epoch_ == kUndefinedEpoch);
  const bool became_leader = role == raft::Role::kLeader && role_ != raft::Role::kLeader;
  role_ = role;
  leader_epoch_ = static_cast<int32_t>(term);
  leader_id_ = leader == raft::kNoNode ? -1 : static_cast<int32_t>(leader);
  // The previous leader's appends reached this log without passing the producer state: rebuild it from the log.
  if (became_leader) producer_state_.invalidate();
  notify_appended();  // long polls re-check leadership
  if (context_.leadership_changed != nullptr) context_.leadership_changed->set();  // never suspends
}

// On the host's driver fiber: must not suspend. The high watermark is the commit index (an entry end), never past
// this log's end: a follower may hear of a commit before it holds the entries.
void Partition::on_commit(raft::Index commit) {
  SLUICE_ASSERT(replicated());
  const int64_t high_watermark =
      std::min<int64_t>(static_cast<int64_t>(commit), log_->log_end_offset());
  if (high_watermark <= log_->high_watermark()) return;
  log_->set_high_watermark(high_watermark);
  check_offsets();
  notify_appended();
}

// On the host's driver fiber, before the log is cut: must not suspend.
void Partition::on_committed_cut(int64_t end_offset) {
  SLUICE_ASSERT(replicated());
  SLUICE_ASSERT(end_offset < log_->high_watermark());
  SLUICE_PROBE("partition.committed_records_cut");
  seen_high_watermark_ = std::min(seen_high_watermark_, end_offset);
}

Result<storage::AppendResult> Partition::append_replicated(ByteView batch, int32_t* leader_epoch) {
  SLUICE_ASSERT(replicated());
  SLUICE_TRY(check_not_removed());
  if (!is_leader()) return not_leader();
  SLUICE_ASSIGN_OR_RETURN(const storage::BatchHeader header, storage::parse_batch_header(batch));
  std::string payload(reinterpret_cast<const char*>(batch.data()), batch.size());
  const bool log_append_time = config_.message_timestamp_type == storage::MessageTimestampType::kLogAppendTime;
  int64_t append_time_ms = -1;
  if (log_append_time) {
    // The leader stamps the time once, so every replica stores the same bytes.
    append_time_ms = to_unix_ms(context_.env.clock.wall_now());
    storage::set_log_append_time(MutableByteView(reinterpret_cast<uint8_t*>(payload.data()), payload.size()),
                                 append_time_ms);
  }
  const raft::Index count = static_cast<raft::Index>(header.last_offset_delta) + 1;
  const raft::Proposed proposed =
      replica_group_->host->propose(replica_group_->group, std::move(payload), count,
                                    context_.env.clock.now() + kAppendWaitMax, raft::ProposeWait::kAppended);
  switch (proposed.outcome) {
    case raft::ProposeOutcome::kAppended:
    case raft::ProposeOutcome::kCommitted: break;
    case raft::ProposeOutcome::kNotLeader:
    case raft::ProposeOutcome::kLost: return not_leader();
    case raft::ProposeOutcome::kUnknown:
      return kafka_error(ErrorCode::kRequestTimedOut,
                         fmt::format("{}: the append did not reach the log in time", tp_.to_string()));
  }
  SLUICE_ASSERT(proposed.index >= 1);
  SLUICE_ASSERT(proposed.last_index == proposed.index + count - 1);
  // The driver appended the entry and went on before this fiber ran again: in the same wake-up it may have heard of
  // a newer term and cut the entry (a deposed leader's uncommitted suffix), maybe even refilled those offsets with
  // the new leader's records. The append is then lost, never to commit: answer as a produce that reached a leader
  // which stepped down. (Raft's log matching: the same term at the same index is the same entry, so a matching
  // term proves the batch is still there.)
  const int64_t last_offset = offset_of_raft_index(proposed.last_index);
  if (last_offset >= log_->log_end_offset() ||
      log_->epoch_at(last_offset).value_or(static_cast<int32_t>(proposed.term)) !=
          static_cast<int32_t>(proposed.term)) {
    return not_leader();
  }
  storage::AppendResult result;
  result.base_offset = offset_of_raft_index(proposed.index);
  result.last_offset = offset_of_raft_index(proposed.last_index);
  result.log_append_time_ms = append_time_ms;
  result.log_start_offset = log_->log_start_offset();
  *leader_epoch = static_cast<int32_t>(proposed.term);
  SLUICE_ASSERT(result.last_offset - result.base_offset == header.last_offset_delta);
  if (context_.mutations.has(Mutation::kHwAheadOfQuorum)) {
    // Planted bug: the high watermark follows the leader's own log, not the quorum's commit.
    log_->set_high_watermark(log_->log_end_offset());
  }
  notify_appended();
  return result;
}

Status Partition::wait_replicated(int64_t end_offset, int32_t leader_epoch, Instant deadline) {
  SLUICE_ASSERT(replicated());
  SLUICE_ASSERT(end_offset >= 1);
  if (leader_epoch < 0) return not_leader();
  // Planted bug (KubeMQ's acks table): acks=all answered once the leader's own log has the records.
  if (context_.mutations.has(Mutation::kAcksAllBeforeQuorum)) return Status();
  if (log_->epoch_at(end_offset - 1) != leader_epoch) {
    SLUICE_TRY(wait_high_watermark(end_offset, leader_epoch, deadline));
    return wait_min_insync_copies(end_offset, leader_epoch, deadline);
  }
  const raft::Proposed committed = replica_group_->host->wait_committed(
      replica_group_->group, raft_index_for_end_offset(end_offset), static_cast<raft::Term>(leader_epoch), deadline);
  switch (committed.outcome) {
    case raft::ProposeOutcome::kCommitted: return wait_min_insync_copies(end_offset, leader_epoch, deadline);
    case raft::ProposeOutcome::kNotLeader:
    case raft::ProposeOutcome::kLost:
    case raft::ProposeOutcome::kAppended: return not_leader();
    case raft::ProposeOutcome::kUnknown: break;
  }
  return kafka_error(ErrorCode::kRequestTimedOut,
                     fmt::format("{}: offsets below {} were not replicated to a quorum in time", tp_.to_string(),
                                 end_offset));
}

// An entry appended in an earlier epoch (an idempotent retry answered from the producer state after a leader
// change): committed once this leader's high watermark passes it, which happens only while it still leads
// `leader_epoch` (Kafka's DelayedProduce: the high watermark reaches the required offset).
Status Partition::wait_high_watermark(int64_t end_offset, int32_t leader_epoch, Instant deadline) {
  while (true) {
    SLUICE_TRY(check_not_removed());
    if (!is_leader() || leader_epoch_ != leader_epoch) return not_leader();
    if (log_->high_watermark() >= end_offset) return Status();
    AppendWatch watch(context_.env.scheduler, 2);  // the high watermark or leadership moved, or the broker stops
    watch.watch(appends_);
    watch.watch(context_.broker_wide);
    if (!watch.wait_until(deadline)) break;
  }
  return kafka_error(ErrorCode::kRequestTimedOut,
                     fmt::format("{}: offsets below {} were not replicated to a quorum in time", tp_.to_string(),
                                 end_offset));
}

// Kafka's acks=all answer holds min.insync.replicas copies: its high watermark waits for every in-sync replica, and
// Partition.checkEnoughReplicasReachOffset answers NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
// min.insync.replicas meanwhile. A raft commit holds a majority's copies, so with min.insync.replicas above the
// majority the answer also waits for enough followers to match the entry, and gives up with
// NOT_ENOUGH_REPLICAS_AFTER_APPEND once too few replicas are left to hold them: the records stay (a retry may write
// them twice, as in Kafka). A follower is left when it has not answered within an election timeout, raft's own
// liveness bound (recent_active is reset each election timeout, so it would flicker). Followers' answers wake
// nothing here, so it polls.
Status Partition::wait_min_insync_copies(int64_t end_offset, int32_t leader_epoch, Instant deadline) {
  SLUICE_ASSERT(replicated());
  const size_t needed = static_cast<size_t>(std::max<int64_t>(config_.min_insync_replicas, 1));
  if (needed == 1) return Status();
  const raft::Index last = raft_index_for_end_offset(end_offset);
  const int64_t liveness_ticks = replica_group_->host->options().raft.election_ticks;
  while (true) {
    SLUICE_TRY(check_not_removed());
    if (!is_leader() || leader_epoch_ != leader_epoch) return not_leader();
    const std::optional<raft::GroupStatus> status = replica_group_->host->status(replica_group_->group);
    if (!status.has_value()) return not_leader();
    SLUICE_ASSERT(status->commit_index >= last);  // committed before this wait, in this leader's term
    SLUICE_ASSERT(status->last_index >= last);
    size_t voters = 1;  // this leader, which holds the records
    size_t copies = 1;
    size_t may_copy = 0;  // voters without them yet that answered lately
    for (const raft::FollowerStatus& follower : status->followers) {
      if (follower.learner) continue;
      ++voters;
      if (follower.match >= last) {
        ++copies;
      } else if (follower.ticks_since_answer >= 0 && follower.ticks_since_answer <= liveness_ticks) {
        ++may_copy;
      }
    }
    SLUICE_ASSERT(copies <= voters);
    if (needed <= majority_of(voters) || copies >= needed) return Status();
    if (copies + may_copy < needed) {
      SLUICE_PROBE("partition.not_enough_replicas_after_append");
      return kafka_error(ErrorCode::kNotEnoughReplicasAfterAppend,
                         fmt::format("{}: offsets below {} were committed but are held by {} replica(s) of {} and "
                                     "too few others are alive; min.insync.replicas is {}",
                                     tp_.to_string(), end_offset, copies, voters, needed));
    }
    const Instant now = context_.env.clock.now();
    if (now >= deadline) break;
    context_.env.scheduler.sleep_until(std::min(deadline, now + kInsyncCopiesPoll));
  }
  return kafka_error(ErrorCode::kRequestTimedOut,
                     fmt::format("{}: offsets below {} did not reach min.insync.replicas ({}) replicas in time",
                                 tp_.to_string(), end_offset, needed));
}

// Kafka's DelayedDeleteRecords: complete once the low watermark (the smallest log start of the live replicas)
// reached the new log start. The followers move theirs when the leader's next append or heartbeat carries it and
// report it in their answers; nothing wakes this fiber for those, so it polls.
Result<int64_t> Partition::wait_followers_log_start(int64_t log_start, int32_t leader_epoch, Instant deadline) {
  SLUICE_ASSERT(replicated());
  while (true) {
    SLUICE_TRY(check_not_removed());
    if (!is_leader() || leader_epoch_ != leader_epoch) return not_leader();
    const std::optional<raft::GroupStatus> status = replica_group_->host->status(replica_group_->group);
    if (!status.has_value()) return not_leader();
    SLUICE_ASSERT(status->log_start <= static_cast<raft::Index>(log_->log_start_offset()));
    const bool reached = std::all_of(status->followers.begin(), status->followers.end(),
                                     [&](const raft::FollowerStatus& follower) {
                                       return !follower.recent_active ||
                                              follower.log_start >= static_cast<raft::Index>(log_start);
                                     });
    if (reached) return log_start;
    const Instant now = context_.env.clock.now();
    if (now >= deadline) break;
    context_.env.scheduler.sleep_until(std::min(deadline, now + kDeleteRecordsPoll));
  }
  return kafka_error(ErrorCode::kRequestTimedOut,
                     fmt::format("{}: the followers did not reach log start {} in time", tp_.to_string(), log_start));
}

}  // namespace sluice::cluster
