// RaftHost's storage side: persisting a Ready (hard state, log syncs), applying committed entries, judging the fate
// of the waiters, and taking a group offline when its storage fails (fail-stop).
#include "core/base/assert.h"
#include "core/raft/host.h"
#include "core/raft/host_group.h"

namespace sluice::raft {
namespace {

// Entries and payload bytes read back per step of applying committed entries (at least one entry is read).
constexpr size_t kApplyEntriesMax = 256;
constexpr uint64_t kApplyBytesMax = uint64_t{1} << 20;

}  // namespace

void RaftHost::persist(Group& group, const Ready& ready) {
  if (!group.online) return;
  if (ready.hard_state) {
    SLUICE_ASSERT(ready.hard_state->term >= group.storage->hard_state().term);
    ++stats_.hard_state_stores;
    const Status stored = group.storage->store_hard_state(*ready.hard_state);
    if (!stored.ok()) return take_offline(group, stored);
    SLUICE_ASSERT(group.storage->hard_state() == *ready.hard_state);
    group.raft->on_hard_state_persisted(ready.hard_state_version);
    mark_dirty(group);
  }
  if (ready.sync_log_through == 0) return;
  if (group.mode == CommitMode::kReplicated) {
    group.unsynced = true;  // counted once appended; synced by the periodic flush
    return;
  }
  sync_log(group);
}

void RaftHost::sync_log(Group& group) {
  ++stats_.log_syncs;
  const Status synced = group.storage->sync_log();
  if (!synced.ok()) return take_offline(group, synced);
  SLUICE_ASSERT(group.storage->log().durable_index() == group.storage->log().last_index());
  group.raft->on_log_synced();
  mark_dirty(group);
}

void RaftHost::apply_committed(Group& group) {
  SLUICE_ASSERT(group.hooks.apply_entries);
  const Index commit = group.raft->commit_index();
  const RaftLog& log = group.storage->log();
  SLUICE_ASSERT(commit <= log.last_index());
  SLUICE_ASSERT(log.is_entry_end(commit));
  while (group.applied < commit) {
    const std::vector<Entry> entries = log.read(group.applied + 1, kApplyEntriesMax, kApplyBytesMax);
    if (entries.empty()) return take_offline(group, group.storage->status());  // the log failed to read
    SLUICE_ASSERT(entries.size() <= kApplyEntriesMax);
    for (const Entry& entry : entries) {
      const Index first = group.applied + 1;
      if (first > commit) break;  // the read went past the commit index
      const Index last = first + entry.count - 1;
      SLUICE_ASSERT(last <= commit);  // the commit index is an entry end
      ++stats_.entries_applied;
      if (apply_) apply_(group.id, first, entry);
      group.applied = last;
    }
  }
  SLUICE_ASSERT(group.applied == commit);
}

std::optional<ProposeOutcome> RaftHost::fate(const Group& group, const Waiter& waiter) const {
  const Raft& raft = *group.raft;
  const RaftLog& log = group.storage->log();
  const Index last = waiter.result.last_index;
  const Term term = waiter.result.term;
  SLUICE_ASSERT(last >= 1);
  SLUICE_ASSERT(term >= 1);
  const Index commit = raft.commit_index();
  SLUICE_ASSERT(commit <= log.last_index());
  // Committed entries never change: the entry there now is the one every later leader holds.
  if (commit >= last) return log.term_at(last) == term ? ProposeOutcome::kCommitted : ProposeOutcome::kLost;
  // The committed prefix ends in a later term: every later leader holds that entry at `commit`, and terms never
  // decrease along a log, so no entry of `term` can ever commit above it.
  if (log.term_at(commit) > term) return ProposeOutcome::kLost;
  const bool leads_term = group.online && raft.role() == Role::kLeader && raft.term() == term;
  if (leads_term && (last > log.last_index() || log.term_at(last) != term)) {
    // The only leader of `term` is this node, and its log never loses an entry while it leads: no entry of `term`
    // ends at `last`, and none ever will (a wait_committed with a position this node never returned).
    return ProposeOutcome::kLost;
  }
  if (waiter.stop_on_leader_loss && !leads_term) return ProposeOutcome::kNotLeader;
  return std::nullopt;
}

void RaftHost::resolve_pending(Group& group) {
  if (group.pending.empty()) return;
  const Raft& raft = *group.raft;
  const Index commit = raft.commit_index();
  const std::tuple<bool, Role, Term, Term> now{group.online, raft.role(), raft.term(),
                                               group.storage->log().term_at(commit)};
  // Only a commit can settle a waiter while the leadership and the committed term stay as they were: then the
  // waiters at or below the commit index suffice.
  const bool all = group.judged != now;
  group.judged = now;
  const auto end = all ? group.pending.end() : group.pending.upper_bound(commit);
  for (auto it = group.pending.begin(); it != end;) {
    Waiter& waiter = *it->second;
    const std::optional<ProposeOutcome> outcome = waiter.finished ? std::nullopt : fate(group, waiter);
    if (!waiter.finished && !outcome) {
      ++it;
      continue;
    }
    if (!waiter.finished) {
      Proposed settled = waiter.result;
      settled.outcome = *outcome;
      settled.leader = raft.leader();
      waiter.finish(settled);
    }
    it = group.pending.erase(it);
  }
  // Nothing at or below the commit index is left open: its fate is always known.
  SLUICE_ASSERT(group.pending.empty() || group.pending.begin()->first > commit);
}

void RaftHost::take_offline(Group& group, const Status& why) {
  SLUICE_ASSERT(group.online);
  group.online = false;
  ++stats_.groups_offline;
  env_.log.error("raft group {}: storage failed, offline until started again: {}", group.id, why.message());
  if (group.hooks.on_role_change) group.hooks.on_role_change(Role::kFollower, group.raft->term(), kNoNode);
  // Nothing more is learned about this group in this host's life: settle every waiter with what is known.
  for (auto& [last, waiter] : group.pending) {
    if (waiter->finished) continue;
    Proposed settled = waiter->result;
    settled.outcome = fate(group, *waiter).value_or(ProposeOutcome::kUnknown);
    settled.leader = kNoNode;
    waiter->finish(settled);
  }
  group.pending.clear();
  if (group.hooks.on_stopped) group.hooks.on_stopped(why);
}

}  // namespace sluice::raft
