// RaftHost: every raft group of one node, driven by one fiber on the node's Env. The driver owns each group's Raft
// and performs its Ready contract (raft.h): it steps inbound messages, ticks every group from one timer (a thousand
// groups are a thousand ticks of one loop, not a thousand timers), persists hard states, syncs logs as the group's
// commit mode says, sends what the groups produced as one batch per peer and round, and applies committed entries
// (or, for a group that asked not to, reports its commit index).
//
// Rounds: a round takes every dirty group's Ready, sends the messages at once (raft holds back whatever must wait for
// the disk), then stores the hard states and syncs the logs of all those groups, tells each group, applies (or
// reports) what is committed, settles the waits whose fate is known, and goes round again while anything moved. A
// group whose storage fails is taken offline (fsyncgate: a failed sync may have lost writes the page cache pretended
// to hold): it stops answering until the node restarts and reloads what is durable.
//
// Proposals come from any fiber of the node and wait for their fate: committed at (index, term), not the leader,
// lost (it can never commit), or unknown (the deadline passed first: it may still commit). A proposal may instead
// return once the leader has appended it (ProposeWait::kAppended) and its caller wait for the commit separately
// (wait_committed), as a partition does: append, answer acks=1, then wait for the quorum for acks=all.
//
// Which outcomes are definite: kCommitted (it is in every later leader's log), kLost (it is in none: the commit
// index covers its last index with another entry, or the committed prefix ends in a later term, or this node leads
// its term and never appended it) and a propose's kNotLeader (it was never appended). kUnknown, and kNotLeader from
// wait_committed (this node stopped leading the entry's term first), say nothing: the entry may still commit.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/raft/envelope.h"
#include "core/raft/group_storage.h"
#include "core/raft/raft.h"

namespace sluice::raft {

struct HostOptions {
  Duration tick = std::chrono::milliseconds(100);  // one raft tick of every group
  // `replicated` groups sync their logs this often (they count appended, not synced, entries); `persisted` groups
  // sync in every round that appended.
  Duration replicated_sync_interval = std::chrono::milliseconds(500);
  Options raft;  // every group's options; `id` is the host's
};

enum class ProposeOutcome : uint8_t {
  kCommitted,  // at [index, last_index] in `term`
  kNotLeader,  // `leader` names the leader this node knows of (kNoNode: none). See above for when it is definite.
  kLost,       // it can never commit (definite; see above)
  kUnknown,    // the deadline passed (or the host stopped) first: it may yet commit
  kAppended,   // ProposeWait::kAppended: the leader appended it at [index, last_index] in `term`; not yet committed
};
std::string_view propose_outcome_name(ProposeOutcome outcome);

// How long propose() waits.
enum class ProposeWait : uint8_t {
  kCommitted,  // for the entry's fate (or the deadline)
  kAppended,   // until the leader has appended it to its log (kAppended), or could not (kNotLeader)
};

struct Proposed {
  ProposeOutcome outcome = ProposeOutcome::kUnknown;
  Index index = 0;  // the entry's first index; 0 when it was never appended (or wait_committed cannot tell)
  Term term = 0;
  NodeId leader = kNoNode;
  Index last_index = 0;  // the entry's last index: index + count - 1
};

// What one group tells its owner, besides the host's Apply. Every callback runs on the driver fiber, in the middle
// of a round: it must not block, wait or yield (no disk, no network, no locks that may wait), and it must not call
// back into the host's waiting calls (propose, wait_committed).
struct GroupHooks {
  // false: the host never reads committed entries back to apply them (a partition's data is already in its log;
  // reading every batch back would double the I/O). It only reports the commit index through on_commit.
  bool apply_entries = true;
  // The group's commit index advanced to `commit` (an entry end). Called after the round's syncs, after applying
  // (when apply_entries), once per advance, in increasing order; a restarted node reports again from 0 up.
  std::function<void(Index commit)> on_commit;
  // The group's role, term or known leader changed: called once per change, after the round's Ready was taken (so
  // the first round reports the initial state). A group taken offline reports (kFollower, its term, kNoNode) once
  // and nothing after.
  std::function<void(Role role, Term term, NodeId leader)> on_role_change;
  // The group's storage failed (`why`) and the host took it offline, after on_role_change's last report. Called once,
  // on the driver: it must not suspend. Whoever owns the storage may restart the group (remove_group, add_group).
  std::function<void(const Status& why)> on_stopped;
};

struct HostStats {
  uint64_t ticks = 0;
  uint64_t rounds = 0;
  uint64_t batches_sent = 0;   // one per peer per round with messages
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t messages_unknown_group = 0;
  uint64_t hard_state_stores = 0;
  uint64_t log_syncs = 0;
  uint64_t entries_applied = 0;
  uint64_t groups_offline = 0;
};

class RaftHost {
 public:
  // Sends one batch to a peer (the transport's send). Never blocks.
  using Send = std::function<void(NodeId to, std::vector<Envelope> batch)>;
  // A committed entry at its first index, in index order per group, once per host lifetime (a restarted node applies
  // from index 1). Never called for a group added with GroupHooks::apply_entries false. On the driver fiber: must
  // not block.
  using Apply = std::function<void(GroupId group, Index index, const Entry& entry)>;
  // This node became leader of `group` in `term`.
  using LeaderChange = std::function<void(GroupId group, Term term)>;

  RaftHost(Env& env, NodeId self, HostOptions options, Send send, Apply apply, LeaderChange on_leader = nullptr);
  ~RaftHost();  // stop(), and joins the driver when called from a fiber
  RaftHost(const RaftHost&) = delete;
  RaftHost& operator=(const RaftHost&) = delete;

  // Before or after start(), from a fiber of this node or the world's driver (never from a hook: the driver is in
  // a round). `storage` outlives the group's time in the host (until remove_group returns, or the host is
  // destroyed); its hard state and durable log are the group's after a restart. `commit_mode` overrides the host's
  // (a topic's durability setting); `hooks` are the group's callbacks. A group added to a running host is driven
  // from the driver's next turn, and its first Ready persists its raised incarnation like any group's at start.
  void add_group(GroupId id, Membership membership, GroupStorage& storage,
                 std::optional<CommitMode> commit_mode = std::nullopt, GroupHooks hooks = {});
  // Takes a group out of the host: its waiters settle as kUnknown (the entry may still commit on the other
  // members), its messages are then counted as for an unknown group, and nothing touches its storage once this
  // returns. On a running host it waits for the driver to do it between rounds, so call it from a fiber of this
  // node. Unknown ids are ignored.
  void remove_group(GroupId id);
  // Spawns the driver. From a fiber or the world's driver.
  void start();
  // The driver ends after its current step; waiting proposals get kUnknown. Idempotent; never blocks.
  void stop();

  // The transport's Deliver: queues the batch for the driver.
  void receive(NodeId from, std::vector<Envelope>& batch);
  // From a fiber of this node: proposes one entry of `payload` covering `count` indexes (1 to kEntryCountMax) to
  // `group`, and waits at most until `deadline`: for its fate (kCommitted) or for the leader's append (kAppended).
  Proposed propose(GroupId group, std::string payload, Index count, Instant deadline, ProposeWait wait);
  // One index, waiting for the fate.
  Proposed propose(GroupId group, std::string payload, Instant deadline) {
    return propose(group, std::move(payload), 1, deadline, ProposeWait::kCommitted);
  }
  // From a fiber of this node: waits at most until `deadline` for the entry of `term` ending at `last_index` (what
  // a kAppended proposal returned). kCommitted once the commit index reaches last_index with term_at(last_index) ==
  // term; kLost once it can never commit (definite, see above); kNotLeader, naming the leader this node knows, once
  // this node no longer leads `term` (or its group went offline) before either: the entry may still commit
  // elsewhere; kUnknown at the deadline or when the host stops. Answers at once when the fate is already known.
  Proposed wait_committed(GroupId group, Index last_index, Term term, Instant deadline);
  // Hands one entry to the group's leader and returns without waiting: appended here when this node leads, sent to
  // the leader it knows otherwise (raft's kPropose), dropped when it knows none or the leader no longer leads. No
  // fate comes back: the caller recognises its entry when it is applied (it embeds an id of its own) and forwards
  // again after a while if it never is, so the payload must be safe to commit twice (cluster metadata is).
  void forward(GroupId group, std::string payload, Index count = 1);
  // Starts an election in `group` now (tests and an operator's "elect here").
  void campaign(GroupId group);
  void transfer_leadership(GroupId group, NodeId target);

  std::optional<GroupStatus> status(GroupId group) const;
  const HostOptions& options() const { return options_; }
  // The group's state machine, read only: role, term and leader without building a GroupStatus. Null if unknown.
  const Raft* raft(GroupId group) const;
  bool online(GroupId group) const;
  std::vector<GroupId> groups() const;
  const HostStats& stats() const { return stats_; }
  NodeId self() const { return self_; }

 private:
  struct Group;
  struct Waiter;
  struct Inbound {
    NodeId from = kNoNode;
    std::vector<Envelope> batch;
  };
  struct Command {
    GroupId group = 0;
    enum class Kind : uint8_t { kPropose, kCampaign, kTransfer, kForward, kRemove } kind = Kind::kPropose;
    std::shared_ptr<Waiter> proposal;    // kPropose; kRemove: finished once the group is gone
    NodeId target = kNoNode;             // kTransfer
    std::string payload = {};            // kForward
    Index count = 1;                     // kForward
  };

  void drive();
  void tick_all();
  void step_inbound();
  void run_commands();
  void run_rounds();
  // One round over the dirty groups; true when some group has more to do.
  bool round();
  void persist(Group& group, const Ready& ready);
  void sync_log(Group& group);
  void sync_replicated();
  void propose_now(Group* group, const std::shared_ptr<Waiter>& proposal);
  // After the round's syncs: apply (or report) the commit index, then settle what waits on it.
  void after_round(Group& group);
  void apply_committed(Group& group);
  void report_role(Group& group);
  // Settles the waiters whose fate is known; all of them when the leadership or the committed term moved.
  void resolve_pending(Group& group);
  // The waiter's outcome if its fate is known now.
  std::optional<ProposeOutcome> fate(const Group& group, const Waiter& waiter) const;
  void take_offline(Group& group, const Status& why);
  // On the driver between rounds (or once it has ended): settles the group's waiters and forgets it.
  void erase_group(GroupId id);
  void mark_dirty(Group& group);
  void wake();

  Env& env_;
  NodeId self_;
  HostOptions options_;
  Send send_;
  Apply apply_;
  LeaderChange on_leader_;
  std::map<GroupId, std::unique_ptr<Group>> groups_;
  std::vector<Group*> dirty_;
  std::vector<Inbound> inbox_;
  std::vector<Command> commands_;
  Event wake_;
  Event stopped_;
  FiberRef driver_;
  bool started_ = false;
  bool stopping_ = false;
  Instant next_tick_{};
  Instant next_replicated_sync_{};
  HostStats stats_;
};

}  // namespace sluice::raft
