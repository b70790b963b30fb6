// Log replication: appends with log matching and conflict-term backtracking, follower truncation, pipelined appends
// under a window, heartbeats carrying the commit index, the commit rule, check-quorum and leadership transfer.
//
// Spans: an entry covers Entry::count indexes. Everything the leader tracks per follower (match, next, the in-flight
// window) and the commit index are indexes; match, commit and what an append ends at are always entry ends, and an
// append always starts at an entry start (a `next` inside an entry is moved back to that entry's start). Within one
// term a single leader produced a single sequence of entries, so two logs holding an entry of the same term at an
// index hold the same entry there (same start, same count): log matching holds entry by entry.
#include <algorithm>

#include "core/base/assert.h"
#include "core/raft/raft.h"

namespace sluice::raft {

// ---- leader ----

void Raft::tick_leader() {
  SLUICE_ASSERT(role_ == Role::kLeader);
  ++heartbeat_elapsed_;
  ++election_elapsed_;
  if (transfer_target_ != kNoNode && ++transfer_elapsed_ >= options_.election_ticks) {
    SLUICE_PROBE("raft.transfer_timed_out");
    transfer_target_ = kNoNode;  // the target did not take over in time: keep leading
  }
  if (election_elapsed_ >= options_.election_ticks) {
    election_elapsed_ = 0;
    if (options_.check_quorum && !quorum_active()) {
      if (options_.mutations.has(Mutation::kRaftIgnoreCheckQuorum)) [[unlikely]] {
        SLUICE_PROBE("mutation.raft-ignore-check-quorum");
      } else {
        SLUICE_PROBE("raft.check_quorum_step_down");
        return become_follower(hard_.term, kNoNode);
      }
    }
    for (auto& [peer, progress] : progress_) progress.recent_active = false;
  }
  if (heartbeat_elapsed_ >= options_.heartbeat_ticks) {
    heartbeat_elapsed_ = 0;
    broadcast_heartbeat();
  }
}

bool Raft::quorum_active() const {
  SLUICE_ASSERT(role_ == Role::kLeader);
  return quorum_index(membership_, [this](NodeId id) -> Index {
           if (id == options_.id) return 1;
           auto it = progress_.find(id);
           return it != progress_.end() && it->second.recent_active ? 1 : 0;
         }) >= 1;
}

Index Raft::propose(std::string payload, Index count) {
  SLUICE_ASSERT(count >= 1);
  SLUICE_ASSERT(count <= kEntryCountMax);
  if (role_ != Role::kLeader || transfer_target_ != kNoNode) return 0;
  const Index first = log_.last_index() + 1;
  const Entry entry{.term = hard_.term, .count = count, .payload = std::move(payload)};
  log_.append(first, std::span<const Entry>(&entry, 1));
  SLUICE_ASSERT(log_.last_index() == first + count - 1);
  SLUICE_ASSERT(log_.entry_start(log_.last_index()) == first);
  SLUICE_ASSERT(log_.term_at(first) == hard_.term);
  broadcast_append();
  maybe_commit();
  return first;
}

NodeId Raft::forward(std::string payload, Index count) {
  SLUICE_ASSERT(count >= 1);
  SLUICE_ASSERT(count <= kEntryCountMax);
  if (role_ == Role::kLeader || leader_ == kNoNode) return kNoNode;
  SLUICE_ASSERT(leader_ != options_.id);
  SLUICE_ASSERT(membership_.contains(leader_));
  Message m{.type = MessageType::kPropose, .to = leader_};
  // The term is the leader's to give; send() stamps this node's term on the message, which the leader ignores.
  m.entries.push_back(Entry{.term = 0, .count = count, .payload = std::move(payload)});
  send(std::move(m));
  return leader_;
}

void Raft::handle_propose(const Message& m) {
  SLUICE_ASSERT(m.type == MessageType::kPropose);
  if (role_ != Role::kLeader || transfer_target_ != kNoNode) {
    // The sender's view of the leader is stale, or leadership is moving: the proposer retries at the new leader.
    SLUICE_PROBE("raft.forwarded_proposal_dropped");
    return;
  }
  for (const Entry& entry : m.entries) {
    // The wire refuses counts outside [1, kEntryCountMax]; a message built in memory must hold to the same.
    SLUICE_ASSERT(entry.count >= 1);
    SLUICE_ASSERT(entry.count <= kEntryCountMax);
    const Index first = propose(entry.payload, entry.count);
    SLUICE_ASSERT(first != 0);  // a leader not transferring always accepts
  }
}

void Raft::broadcast_append() {
  SLUICE_ASSERT(role_ == Role::kLeader);
  for (auto& [peer, progress] : progress_) send_append(peer);
}

void Raft::broadcast_heartbeat() {
  SLUICE_ASSERT(role_ == Role::kLeader);
  for (auto& [peer, progress] : progress_) {
    progress.acked_since_heartbeat = false;
    // Never tell a follower to commit beyond what it is known to hold; the whole commit index (and its term) only
    // tells an unclean follower how far it must match to be caught up (maybe_caught_up).
    send(Message{.type = MessageType::kHeartbeat,
                 .to = peer,
                 .log_index = commit_,
                 .log_term = log_.term_at(commit_),
                 .commit = std::min(commit_, progress.match),
                 .log_start = log_.low_watermark()});
  }
}

bool Raft::paused(const Progress& progress) const {
  if (progress.state == ProgressState::kProbe) return progress.probe_sent;
  return progress.inflight.size() >= options_.max_inflight_appends;
}

// Sends what `to` lacks from its `next`, if its flow control allows; in the probe state an empty append asks where
// the logs meet. A `next` inside an entry (a rejection's hint can land there) is moved back to the entry's start:
// appends carry whole entries.
void Raft::send_append(NodeId to) {
  Progress& progress = progress_.at(to);
  SLUICE_ASSERT(progress.next >= 1);
  SLUICE_ASSERT(progress.next > progress.match);
  SLUICE_ASSERT(progress.next <= log_.last_index() + 1);
  SLUICE_ASSERT(log_.is_entry_end(progress.match));
  if (paused(progress)) return;
  const Index log_start = log_.log_start();
  SLUICE_ASSERT(log_start <= commit_);
  if (progress.next <= log_start) {
    // The follower needs entries this log no longer holds (retention, DeleteRecords): send from the first entry
    // kept, anchored on that entry rather than on the term before it (handle_append). Raft's InstallSnapshot of an
    // empty snapshot: the follower either holds that entry or discards its log and starts at our log start.
    SLUICE_PROBE("raft.append_from_log_start");
    progress.next = log_start + 1;
  }
  if (progress.state == ProgressState::kReplicate && progress.next > log_.last_index()) return;
  if (progress.next <= log_.last_index() && log_.entry_start(progress.next) != progress.next) {
    SLUICE_PROBE("raft.next_inside_an_entry");
    progress.next = log_.entry_start(progress.next);
  }
  // match is an entry end, so the start of the entry holding `next` (above match) is above it too.
  SLUICE_ASSERT(progress.next > progress.match);
  Message m{.type = MessageType::kAppend,
            .to = to,
            .log_index = progress.next - 1,
            .commit = commit_,
            .log_start = log_.low_watermark(),
            .from_log_start = progress.next == log_start + 1 && log_start > 0};
  SLUICE_ASSERT(m.log_index >= log_start);
  SLUICE_ASSERT(m.log_start >= log_start);
  SLUICE_ASSERT(m.log_start <= commit_);
  m.log_term = log_.term_at(m.log_index);
  SLUICE_ASSERT(log_.is_entry_end(m.log_index));
  if (progress.next <= log_.last_index()) {
    m.entries = log_.read(progress.next, options_.max_entries_per_append, options_.max_bytes_per_append);
    // The log failed (a disk error; its driver stops the group), or its start passed `next` meanwhile (a partition's
    // retention runs beside the driver): the next heartbeat's answer sends again, from the new start.
    if (m.entries.empty()) return;
    SLUICE_ASSERT(m.entries.size() <= options_.max_entries_per_append);
  }
  const Index last_sent = m.log_index + span_of(m.entries);
  SLUICE_ASSERT(last_sent <= log_.last_index());
  SLUICE_ASSERT(log_.is_entry_end(last_sent));
  SLUICE_ASSERT(m.entries.empty() || log_.term_at(last_sent) == m.entries.back().term);
  if (progress.state == ProgressState::kReplicate) {
    SLUICE_ASSERT(!m.entries.empty());
    progress.inflight.push_back(last_sent);
    progress.next = last_sent + 1;  // optimistic: the next append follows without waiting
  } else {
    progress.probe_sent = true;
  }
  send(std::move(m));
}

bool Raft::admit_incarnation(Progress& progress, uint64_t incarnation) {
  if (incarnation < progress.incarnation) {
    SLUICE_PROBE("raft.answer_from_earlier_incarnation");
    return false;  // sent before the follower restarted: what it acknowledged may be gone
  }
  if (incarnation > progress.incarnation) {
    if (progress.incarnation != 0) {
      // The follower restarted and may have lost an unsynced suffix it acknowledged: start over from nothing.
      SLUICE_PROBE("raft.follower_restarted");
      progress = Progress{.match = 0, .next = log_.last_index() + 1};
    }
    progress.incarnation = incarnation;
  }
  return true;
}

void Raft::handle_append_response(const Message& m) {
  if (role_ != Role::kLeader) return;
  SLUICE_ASSERT(m.term == hard_.term);
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& progress = it->second;
  if (!admit_incarnation(progress, m.incarnation)) return;
  progress.recent_active = true;
  progress.log_start = m.log_start;
  if (m.reject) return handle_rejection(progress, m);
  SLUICE_ASSERT(m.log_index <= m.hint_index);
  SLUICE_ASSERT(m.hint_index <= log_.last_index());
  progress.acked_since_heartbeat = true;
  progress.match = std::max(progress.match, m.log_index);
  note_answer(progress);
  while (!progress.inflight.empty() && progress.inflight.front() <= m.hint_index) progress.inflight.pop_front();
  if (progress.state == ProgressState::kProbe) {
    // The probe found where the logs meet: pipeline from there.
    progress.state = ProgressState::kReplicate;
    progress.probe_sent = false;
    progress.inflight.clear();
  }
  progress.next = std::max({progress.next, m.hint_index + 1, progress.match + 1});
  SLUICE_ASSERT(progress.next <= log_.last_index() + 1);
  maybe_commit();
  maybe_send_timeout_now(m.from);
  if (role_ == Role::kLeader) send_append(m.from);
}

void Raft::handle_rejection(Progress& progress, const Message& m) {
  // A refusal of an append we no longer stand behind is stale (reordered or duplicated): ignore it.
  if (progress.state == ProgressState::kReplicate && m.log_index <= progress.match) return;
  if (progress.state == ProgressState::kProbe && m.log_index + 1 != progress.next) return;
  SLUICE_PROBE("raft.append_rejected");
  // The follower's log at hint_index has hint_term (and nothing above hint_index matches there). Skip every
  // entry of ours whose term is above hint_term: they cannot match (etcd's findConflictByTerm, on both sides).
  // The result may fall inside one of our entries; send_append moves it to that entry's start.
  const Index next = log_.last_index_with_term_at_most(std::min(m.hint_index, log_.last_index()), m.hint_term);
  SLUICE_ASSERT(next <= m.hint_index);
  progress.next = std::max(next + 1, progress.match + 1);
  progress.state = ProgressState::kProbe;
  progress.probe_sent = false;
  progress.inflight.clear();
  SLUICE_ASSERT(progress.next <= m.log_index + 1);
  send_append(m.from);
}

// Observability only (status()): when the follower last answered, and last answered holding the leader's whole log.
void Raft::note_answer(Progress& progress) {
  SLUICE_ASSERT(role_ == Role::kLeader);
  progress.answered_tick = ticks_ + 1;  // + 1: 0 stands for "never"
  if (progress.match >= log_.last_index()) progress.caught_up_tick = ticks_ + 1;
}

void Raft::handle_heartbeat_response(const Message& m) {
  if (role_ != Role::kLeader) return;
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& progress = it->second;
  if (!admit_incarnation(progress, m.incarnation)) return;
  progress.recent_active = true;
  progress.log_start = m.log_start;
  SLUICE_ASSERT(m.log_index <= m.hint_index);
  SLUICE_ASSERT(m.hint_index <= log_.last_index());
  if (m.log_index > progress.match) {
    progress.match = m.log_index;
    progress.next = std::max(progress.next, progress.match + 1);
    maybe_commit();
    if (role_ != Role::kLeader) return;
  }
  note_answer(progress);
  bool anchor = false;
  if (progress.state == ProgressState::kProbe) {
    progress.probe_sent = false;  // the last probe may have been lost: probe again
    anchor = m.hint_index < progress.match;
  } else if (!progress.inflight.empty() && !progress.acked_since_heartbeat) {
    // Appends in flight and not one answered for a whole heartbeat round: some were lost. Probe from the match.
    SLUICE_PROBE("raft.appends_presumed_lost");
    progress.state = ProgressState::kProbe;
    progress.probe_sent = false;
    progress.inflight.clear();
    progress.next = progress.match + 1;
  } else if (progress.inflight.empty() && m.hint_index < progress.match) {
    // The follower no longer knows how far its log matches ours (it campaigned meanwhile, and a pre-vote keeps the
    // term), so it caps our commit index at that and stays behind. Only an append teaches it again, and an idle
    // leader sends none: probe at the match, an empty append it accepts. (With appends in flight, the first one
    // accepted teaches it.)
    SLUICE_PROBE("raft.follower_forgot_its_match");
    progress.state = ProgressState::kProbe;
    progress.probe_sent = false;
    progress.next = progress.match + 1;
    anchor = true;
  }
  if (progress.match < log_.last_index() || anchor) send_append(m.from);
}

// What the leader may count for itself: its appended log, or only its durable part under `persisted`.
Index Raft::self_countable_index() const {
  return options_.commit_mode == CommitMode::kPersisted ? log_.durable_index() : log_.last_index();
}

void Raft::maybe_commit() {
  SLUICE_ASSERT(role_ == Role::kLeader);
  const Index quorum = quorum_index(membership_, [this](NodeId id) -> Index {
    if (id == options_.id) return self_countable_index();
    auto it = progress_.find(id);
    return it != progress_.end() ? it->second.match : 0;
  });
  SLUICE_ASSERT(quorum <= log_.last_index());
  if (quorum <= commit_) return;
  // Every match (and the leader's durable index) is an entry end, so the quorum index is one too.
  SLUICE_ASSERT(log_.is_entry_end(quorum));
  // Only an entry of the leader's own term commits by counting replicas; earlier ones commit beneath it (§5.4.2).
  if (log_.term_at(quorum) != hard_.term) {
    if (!options_.mutations.has(Mutation::kRaftCommitOldTermByCount)) return;
    SLUICE_PROBE("mutation.raft-commit-old-term-by-count");
  }
  commit_ = quorum;
}

void Raft::transfer_leadership(NodeId target) {
  if (role_ != Role::kLeader || target == options_.id || !membership_.is_voter(target)) return;
  SLUICE_ASSERT(progress_.count(target) == 1);
  transfer_target_ = target;
  transfer_elapsed_ = 0;
  maybe_send_timeout_now(target);
  if (role_ == Role::kLeader && transfer_target_ != kNoNode) send_append(target);
}

void Raft::maybe_send_timeout_now(NodeId to) {
  if (to != transfer_target_) return;
  SLUICE_ASSERT(role_ == Role::kLeader);
  if (progress_.at(to).match != log_.last_index()) return;
  SLUICE_PROBE("raft.transfer_timeout_now_sent");
  send(Message{.type = MessageType::kTimeoutNow, .to = to});
}

// ---- follower ----

void Raft::handle_append(const Message& m) {
  SLUICE_ASSERT(m.term == hard_.term);
  SLUICE_ASSERT(role_ != Role::kLeader);  // one leader per term: no other node can be sending appends in it
  if (role_ != Role::kFollower || leader_ != m.from) become_follower(hard_.term, m.from);
  election_elapsed_ = 0;
  SLUICE_ASSERT(m.log_start <= m.commit);  // a leader drops only committed entries
  SLUICE_ASSERT(log_.log_start() <= commit_);
  const Index prev = m.log_index;
  // Terms compare exactly above our log start, and when the leader's prev is not its own log start.
  const bool exact = prev > log_.log_start() && !m.from_log_start;
  const bool same_term = prev <= log_.last_index() && log_.term_at(prev) == m.log_term;
  if (prev <= commit_ && (!exact || same_term)) {
    // Committed here, so our log is the leader's up to prev (every leader holds the committed entries), even where
    // one of the two logs no longer holds them: no term to compare.
    SLUICE_ASSERT(log_.is_entry_end(prev));
    return append_from_leader(m);
  }
  if (prev > commit_ && same_term) {
    // The leader's prev is an entry end of its log; we hold the same entry there (log matching), so ours too.
    // (Above our commit index, so above our log start: the term is exact.)
    SLUICE_ASSERT(log_.is_entry_end(prev));
    return append_from_leader(m);
  }
  if (m.from_log_start && prev > commit_) return append_from_log_start(m);
  const Index hint = follower_conflict_hint(prev, m.log_term);
  // Committed entries are on every later leader, so the logs agree through our commit index: a mismatch lies above
  // it. Only a `replicated` group whose majority stopped uncleanly at once can break that (lose_committed_entries).
  Index keep = std::min(commit_, hint);
  if (prev <= commit_) keep = std::min(keep, log_.entry_start(prev) - 1);
  if (!log_.is_entry_end(keep)) keep = log_.entry_start(keep) - 1;
  keep = std::max(keep, log_.log_start());  // what is below our log start is gone already
  if (keep < commit_) lose_committed_entries(keep);
  SLUICE_ASSERT(prev > commit_);
  SLUICE_ASSERT(hint >= commit_);
  SLUICE_PROBE("raft.append_refused");
  send(Message{.type = MessageType::kAppendResponse,
               .to = m.from,
               .log_index = prev,
               .reject = true,
               .hint_index = hint,
               .hint_term = log_.term_at(hint),
               .log_start = log_.low_watermark()});
}

Index Raft::follower_conflict_hint(Index prev, Term prev_term) const {
  const Index hint = log_.last_index_with_term_at_most(std::min(prev, log_.last_index()), prev_term);
  SLUICE_ASSERT(hint <= prev);
  if (hint < commit_ && hint < log_.log_start()) {
    // Below our log start terms are upper bounds: our committed prefix is the leader's.
    SLUICE_PROBE("raft.conflict_hint_at_commit");
    return commit_;
  }
  SLUICE_ASSERT(log_.term_at(hint) <= prev_term);
  return hint;
}

// An append from the leader's first entry (its prev is the leader's log start, whose term the leader knows only as
// an upper bound) that did not match at prev: anchor on the first entry instead. We hold it (same term at its start)
// -> log matching holds up to its end. Otherwise everything we hold above prev differs from the leader's log (what
// matched would hold that entry) and everything at or below prev is gone from the leader, committed: discard the
// whole log and start at the leader's log start (Kafka's truncateFullyAndStartAt for a follower fetching below the
// leader's log start).
void Raft::append_from_log_start(const Message& m) {
  const Index prev = m.log_index;
  SLUICE_ASSERT(m.from_log_start);
  SLUICE_ASSERT(prev > commit_);
  SLUICE_ASSERT(prev <= m.commit);
  const bool anchored = !m.entries.empty() && prev < log_.last_index() && prev >= log_.log_start() &&
                        log_.term_at(prev + 1) == m.entries.front().term;
  if (anchored) {
    SLUICE_PROBE("raft.append_anchored_on_first_entry");
    SLUICE_ASSERT(log_.entry_start(prev + 1) == prev + 1);
  } else {
    // Nothing we discard was counted by this leader (it would have matched) or is needed: committed at or below
    // prev, which the leader dropped; divergent above.
    SLUICE_PROBE("raft.follower_reset_to_leader_log_start");
    log_.reset_to(prev, m.log_term);
    SLUICE_ASSERT(log_.last_index() == prev);
    SLUICE_ASSERT(log_.log_start() == prev);
    SLUICE_ASSERT(log_.durable_index() == prev);
  }
  // The leader's log start is committed: so is our log up to it now.
  commit_ = std::max(commit_, prev);
  append_from_leader(m);
}

void Raft::follow_log_start(Index leader_log_start) {
  // Kafka's follower: log start = max(its own, the leader's), never past what this node knows is committed.
  const Index through = std::min(leader_log_start, commit_);
  if (through > log_.low_watermark()) {
    SLUICE_PROBE("raft.follower_log_start_advanced");
    log_.advance_start(through);
  }
  SLUICE_ASSERT(log_.log_start() <= log_.low_watermark());
  SLUICE_ASSERT(log_.low_watermark() <= commit_);
}

// Walks the leader's entries over ours by their counts: an entry of the same term at its start is the same entry
// (skipped); the first whose term differs starts the suffix of a deposed leader, which is cut there and replaced.
// Entries at or below our log start are committed and gone here: skipped unread.
void Raft::append_from_leader(const Message& m) {
  Index index = m.log_index;  // the end of the last entry walked, in both logs
  SLUICE_ASSERT(index <= log_.last_index());
  const Index end = m.log_index + span_of(m.entries);
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const Entry& entry = m.entries[i];
    const Index start = index + 1;
    if (start <= log_.log_start()) {
      // Committed and dropped here: our log start is an entry end of the committed prefix both logs share, so no
      // entry straddles it, and there is no term left to compare.
      SLUICE_ASSERT(start + entry.count - 1 <= log_.log_start());
      index = start + entry.count - 1;
      continue;
    }
    if (start <= log_.last_index()) {
      // We hold entries from `start` on, and `index` is an entry end of ours, so an entry of ours starts there.
      SLUICE_ASSERT(log_.entry_start(start) == start);
      if (log_.term_at(start) == entry.term) {
        // The same leader wrote both: the same entry, covering the same indexes.
        SLUICE_ASSERT(start + entry.count - 1 <= log_.last_index());
        SLUICE_ASSERT(log_.is_entry_end(start + entry.count - 1));
        SLUICE_ASSERT(log_.term_at(start + entry.count - 1) == entry.term);
        index = start + entry.count - 1;
        continue;
      }
      // The first entry that differs: everything from here on came from a deposed leader and never committed
      // (unless the leader lacks committed entries: lose_committed_entries).
      SLUICE_ASSERT(start > leader_match_);  // what this leader's entries matched cannot differ from them
      if (start <= commit_) lose_committed_entries(start - 1);
      SLUICE_ASSERT(start > commit_);
      SLUICE_PROBE("raft.follower_truncated");
      log_.truncate_suffix(start);
    }
    SLUICE_ASSERT(start == log_.last_index() + 1);
    log_.append(start, std::span<const Entry>(m.entries).subspan(i));
    index = end;
    break;
  }
  SLUICE_ASSERT(index == end);
  SLUICE_ASSERT(index <= log_.last_index());
  SLUICE_ASSERT(log_.is_entry_end(index));
  leader_match_ = std::max(leader_match_, index);
  commit_ = std::max(commit_, std::min(m.commit, leader_match_));
  SLUICE_ASSERT(commit_ <= log_.last_index());
  SLUICE_ASSERT(log_.is_entry_end(commit_));
  maybe_caught_up(m.commit, m.commit <= leader_match_ ? log_.term_at(m.commit) : 0);
  follow_log_start(m.log_start);
  acknowledge_leader(false);
}

// The leader's log differs from ours at or below our commit index: it lacks entries that were committed. Under
// `persisted` that cannot happen (a node acknowledges only what survives a power loss, so every election's voters
// include a holder of each committed entry), and the assertion stays strict. Under `replicated` it is the documented
// trade-off when a majority stopped uncleanly at once (README, "Commit modes and the power-loss rule"): the entries
// above `keep` are gone, and so is the commit index that covered them.
void Raft::lose_committed_entries(Index keep) {
  SLUICE_ASSERT(options_.commit_mode == CommitMode::kReplicated);
  SLUICE_ASSERT(keep < commit_);
  SLUICE_ASSERT(log_.is_entry_end(keep));
  SLUICE_ASSERT(role_ == Role::kFollower);
  SLUICE_PROBE("raft.committed_entries_lost");
  commit_ = keep;
}

// How far the leader may count this node: the log known to match it, and only its durable part under `persisted`
// (a power loss would take the rest).
Index Raft::countable_match() const {
  SLUICE_ASSERT(role_ == Role::kFollower);
  if (options_.commit_mode != CommitMode::kPersisted) return leader_match_;
  if (options_.mutations.has(Mutation::kRaftAckBeforeSync)) [[unlikely]] {
    SLUICE_PROBE("mutation.raft-ack-before-sync");
    return leader_match_;
  }
  return std::min(leader_match_, log_.durable_index());
}

// Answers every append (the leader's flow control waits for it), and again after a sync that covers more.
void Raft::acknowledge_leader(bool only_if_more) {
  SLUICE_ASSERT(role_ == Role::kFollower);
  SLUICE_ASSERT(leader_ != kNoNode);
  const Index countable = countable_match();
  SLUICE_ASSERT(countable <= leader_match_);
  if (only_if_more && countable <= acknowledged_) return;
  acknowledged_ = std::max(acknowledged_, countable);
  send(Message{.type = MessageType::kAppendResponse, .to = leader_, .log_index = countable,
               .hint_index = leader_match_, .log_start = log_.low_watermark()});
}

void Raft::handle_heartbeat(const Message& m) {
  SLUICE_ASSERT(m.term == hard_.term);
  SLUICE_ASSERT(role_ != Role::kLeader);
  if (role_ != Role::kFollower || leader_ != m.from) become_follower(hard_.term, m.from);
  election_elapsed_ = 0;
  commit_ = std::max(commit_, std::min(m.commit, leader_match_));
  SLUICE_ASSERT(commit_ <= log_.last_index());
  SLUICE_ASSERT(log_.is_entry_end(commit_));
  maybe_caught_up(m.log_index, m.log_term);
  follow_log_start(m.log_start);
  // Carries the countable match too, so an acknowledgement lost after a sync is repaired within a heartbeat.
  send(Message{.type = MessageType::kHeartbeatResponse, .to = m.from, .log_index = countable_match(),
               .hint_index = leader_match_, .log_start = log_.low_watermark()});
}

}  // namespace sluice::raft
