// RaftHost: every raft group of one node, driven by one fiber on the node's Env. The driver owns each group's Raft
// and performs its Ready contract (raft.h): it steps inbound messages, ticks every group from one timer (a thousand
// groups are a thousand ticks of one loop, not a thousand timers), persists hard states, syncs logs as the group's
// commit mode says, sends what the groups produced as one batch per peer and round, and applies committed entries.
//
// Rounds: a round takes every dirty group's Ready, sends the messages at once (raft holds back whatever must wait for
// the disk), then stores the hard states and syncs the logs of all those groups, tells each group, and goes round
// again while anything moved. A group whose storage fails is taken offline (fsyncgate: a failed sync may have lost
// writes the page cache pretended to hold): it stops answering until the node restarts and reloads what is durable.
//
// Proposals come from any fiber of the node and wait for their fate: committed at (index, term), not the leader,
// lost (another leader's entry took its index), or unknown (the deadline passed first: it may still commit).
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
  kCommitted,  // at `index` in `term`
  kNotLeader,  // `leader` names the leader this node knows of (kNoNode: none)
  kLost,       // appended at `index`, but that index committed another leader's entry
  kUnknown,    // the deadline passed (or the host stopped) first: it may yet commit
};
std::string_view propose_outcome_name(ProposeOutcome outcome);

struct Proposed {
  ProposeOutcome outcome = ProposeOutcome::kUnknown;
  Index index = 0;
  Term term = 0;
  NodeId leader = kNoNode;
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
  // A committed entry, in index order per group, once per host lifetime (a restarted node applies from index 1).
  using Apply = std::function<void(GroupId group, Index index, const Entry& entry)>;
  // This node became leader of `group` in `term`.
  using LeaderChange = std::function<void(GroupId group, Term term)>;

  RaftHost(Env& env, NodeId self, HostOptions options, Send send, Apply apply, LeaderChange on_leader = nullptr);
  ~RaftHost();  // stop(), and joins the driver when called from a fiber
  RaftHost(const RaftHost&) = delete;
  RaftHost& operator=(const RaftHost&) = delete;

  // Before start(). `storage` outlives the host; its hard state and durable log are the group's after a restart.
  // `commit_mode` overrides the host's (a topic's durability setting).
  void add_group(GroupId id, Membership membership, GroupStorage& storage,
                 std::optional<CommitMode> commit_mode = std::nullopt);
  // Spawns the driver. From a fiber or the world's driver.
  void start();
  // The driver ends after its current step; waiting proposals get kUnknown. Idempotent; never blocks.
  void stop();

  // The transport's Deliver: queues the batch for the driver.
  void receive(NodeId from, std::vector<Envelope>& batch);
  // From a fiber of this node: proposes `payload` to `group` and waits at most until `deadline` for its fate.
  Proposed propose(GroupId group, std::string payload, Instant deadline);
  // Starts an election in `group` now (tests and an operator's "elect here").
  void campaign(GroupId group);
  void transfer_leadership(GroupId group, NodeId target);

  std::optional<GroupStatus> status(GroupId group) const;
  // The group's state machine, read only: role, term and leader without building a GroupStatus. Null if unknown.
  const Raft* raft(GroupId group) const;
  bool online(GroupId group) const;
  std::vector<GroupId> groups() const;
  const HostStats& stats() const { return stats_; }
  NodeId self() const { return self_; }

 private:
  struct Group;
  struct Proposal;
  struct Inbound {
    NodeId from = kNoNode;
    std::vector<Envelope> batch;
  };
  struct Command {
    GroupId group = 0;
    enum class Kind : uint8_t { kPropose, kCampaign, kTransfer } kind = Kind::kPropose;
    std::shared_ptr<Proposal> proposal;  // kPropose
    NodeId target = kNoNode;             // kTransfer
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
  void apply_committed(Group& group);
  void resolve(Group& group, Index index, const Entry& entry);
  void take_offline(Group& group, const Status& why);
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
