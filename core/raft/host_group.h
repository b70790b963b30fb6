// RaftHost's per-group state and its waiters, shared by host.cc (the driver, proposals, rounds) and
// host_storage.cc (persisting, applying, judging waiters' fates, taking a group offline). Internal to core/raft.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "core/base/assert.h"
#include "core/raft/host.h"

namespace sluice::raft {

// A proposal (until the driver appends it) or a wait for an entry's commit: whoever waits holds it, and so does the
// group's pending map while its fate is open.
struct RaftHost::Waiter {
  explicit Waiter(Scheduler& scheduler) : done(scheduler) {}
  void finish(Proposed outcome) {
    SLUICE_ASSERT(!finished);
    SLUICE_ASSERT(outcome.outcome != ProposeOutcome::kCommitted || outcome.last_index >= 1);
    result = outcome;
    finished = true;
    done.set();
  }
  // A proposal's, until it is appended.
  std::string payload;
  Index count = 1;
  ProposeWait wait = ProposeWait::kCommitted;
  // wait_committed: settle as kNotLeader once this node no longer leads the entry's term. A proposal waiting for
  // its fate keeps waiting instead (its kNotLeader means "never appended").
  bool stop_on_leader_loss = false;
  Event done;
  Proposed result;  // once appended: index, last_index and term (what the fate is judged by)
  bool finished = false;
};

struct RaftHost::Group {
  GroupId id = 0;
  GroupStorage* storage = nullptr;
  CommitMode mode = CommitMode::kPersisted;
  GroupHooks hooks;
  std::unique_ptr<Raft> raft;
  Index applied = 0;         // apply_entries: the last index applied
  Index reported_commit = 0;  // the last commit index on_commit was told of
  Term reported_leader_term = 0;  // the last term on_leader was told of
  std::optional<std::tuple<Role, Term, NodeId>> reported_role;  // the last on_role_change
  // What the waiters were last fully judged against: (online, role, term, term at the commit index).
  std::optional<std::tuple<bool, Role, Term, Term>> judged;
  bool dirty = false;
  bool online = true;
  bool unsynced = false;  // `replicated`: appended entries wait for the periodic sync
  std::multimap<Index, std::shared_ptr<Waiter>> pending;  // by the last index each waits for
};

}  // namespace sluice::raft
