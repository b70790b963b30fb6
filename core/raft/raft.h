// Raft: one group's consensus as a pure state machine (etcd-io/raft's shape). It performs no I/O: the driver steps it
// with messages (step), logical time (tick) and proposals, and collects what it produced with take_ready(). It writes
// entries into the RaftLog it is given (writes, not promises), and reads only Random from the Env (election timeouts).
//
// The driver's contract, for each Ready:
//   1. persist and sync `hard_state` when present, then call on_hard_state_persisted(hard_state_version);
//   2. send `messages` (any order; the network may drop, delay, duplicate or reorder them);
//   3. sync the log when `sync_log_through` is non-zero, whenever its durability policy says (at once for
//      `persisted`), then call on_log_synced();
//   4. apply entries up to `commit_index`.
// Messages that depend on a hard state not yet persisted are held inside until it is, so no answer ever leaves
// with a term or vote a power loss could undo.
//
// Single-threaded: one fiber (or the test) owns it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/env/random.h"
#include "core/raft/message.h"
#include "core/raft/progress.h"
#include "core/raft/quorum.h"
#include "core/raft/raft_log.h"
#include "core/raft/types.h"

namespace sluice::raft {

struct Ready {
  std::vector<Message> messages;
  std::optional<HardState> hard_state;  // to persist and sync before on_hard_state_persisted
  uint64_t hard_state_version = 0;
  Index sync_log_through = 0;  // the log has unsynced entries up to here; 0 when it is all durable
  Index commit_index = 0;

  bool has_work() const { return !messages.empty() || hard_state.has_value() || sync_log_through != 0; }
};

// Observability: what the cluster layer and `sluice` commands show per group.
struct FollowerStatus {
  NodeId id = kNoNode;
  bool learner = false;
  Index match = 0;
  Index next = 0;
  Index lag = 0;  // leader's last index - match
  ProgressState state = ProgressState::kProbe;
  size_t inflight = 0;
  bool recent_active = false;
  Index log_start = 0;  // the follower's log start as it last answered
  // Ticks since its latest answer, and since its latest answer that matched the leader's whole log then; -1: none
  // since this node became leader. The host turns them into times (DescribeQuorum's timestamps).
  int64_t ticks_since_answer = -1;
  int64_t ticks_since_caught_up = -1;
};

struct GroupStatus {
  NodeId id = kNoNode;
  Term term = 0;
  Role role = Role::kFollower;
  NodeId leader = kNoNode;
  Index commit_index = 0;
  Index last_index = 0;
  Index durable_index = 0;
  Index log_start = 0;
  std::vector<FollowerStatus> followers = {};  // the leader's view; empty on other roles
};

class Raft {
 public:
  // `persisted` is the hard state read back from disk ({} for a new replica). The log is the node's log after
  // recovery (only its durable part, after a power loss). Every message waits for the first Ready's hard state.
  Raft(const Options& options, Membership membership, RaftLog& log, HardState persisted, Random& random);

  void tick();
  void step(const Message& message);
  // Leader only (and not while transferring leadership): appends one entry covering `count` indexes (1 to
  // kEntryCountMax) and starts replicating it. Returns its first index (its last is first + count - 1), or 0 when
  // this node cannot accept proposals.
  Index propose(std::string payload, Index count = 1);
  // Not the leader: hands the entry to the leader this node knows (a kPropose message; etcd's MsgProp forwarding),
  // which appends it if it still leads and drops it otherwise. Returns that leader, or kNoNode when this node
  // leads (call propose) or knows no leader. Nothing comes back: the proposer learns the entry's fate from the log.
  NodeId forward(std::string payload, Index count = 1);
  // Starts an election now, as if the election timeout had passed (etcd's MsgHup). Voters only.
  void campaign();
  // Leader only: hand leadership to `target` (a voter) once it has the whole log (thesis §3.10).
  void transfer_leadership(NodeId target);
  // Applied identically on every member by the caller (static membership; learner promotion).
  void set_membership(Membership membership);

  Ready take_ready();
  void on_hard_state_persisted(uint64_t version);
  // The log's durable index advanced.
  void on_log_synced();

  NodeId id() const { return options_.id; }
  Role role() const { return role_; }
  Term term() const { return hard_.term; }
  NodeId leader() const { return leader_; }
  Index commit_index() const { return commit_; }
  const HardState& hard_state() const { return hard_; }
  const Membership& membership() const { return membership_; }
  // A `replicated` node restarted after an unclean stop that has not caught up with a leader since: it neither votes
  // nor campaigns (README, "Commit modes and the power-loss rule").
  bool unclean() const { return unclean_; }
  // Leader only: the learner's log matches the leader's up to the commit index.
  bool learner_caught_up(NodeId learner) const;
  GroupStatus status() const;

 private:
  // raft.cc: roles, terms, the message gate, ready.
  void become_follower(Term term, NodeId leader);
  void become_pre_candidate();
  void become_candidate(bool transfer);
  // Both kinds of campaign: take `role`, forget the leader, vote for itself; true when that vote alone wins.
  bool campaign(Role role);
  // A (pre-)vote request for `term` to every other voter, with this node's last log position.
  void solicit_votes(MessageType type, Term term, bool transfer);
  void become_leader();
  void set_hard_state(Term term, NodeId voted_for);
  void send(Message message);
  void reset_election_timer();
  bool in_lease() const;
  bool accept_term(const Message& message);
  void dispatch(const Message& message);
  Term last_term() const { return log_.term_at(log_.last_index()); }

  // election.cc
  void tick_election();
  void handle_vote_request(const Message& message);
  void handle_vote_response(const Message& message);
  void on_vote_result(VoteResult result);
  bool unclean_timed_out();
  void maybe_caught_up(Index leader_commit, Term leader_commit_term);
  bool log_up_to_date(Index last_index, Term last_term) const;

  // replication.cc
  void tick_leader();
  void broadcast_append();
  void broadcast_heartbeat();
  void send_append(NodeId to);
  bool paused(const Progress& progress) const;
  void handle_append(const Message& message);
  Index follower_conflict_hint(Index prev_index, Term prev_term) const;
  void append_from_leader(const Message& message);
  void append_from_log_start(const Message& message);
  void follow_log_start(Index leader_log_start);
  Index countable_match() const;
  void acknowledge_leader(bool only_if_more);
  void handle_heartbeat(const Message& message);
  void handle_append_response(const Message& message);
  void handle_rejection(Progress& progress, const Message& message);
  void handle_heartbeat_response(const Message& message);
  void note_answer(Progress& progress);
  int64_t ticks_since(uint64_t noted) const;
  void handle_propose(const Message& message);
  void lose_committed_entries(Index keep);
  bool admit_incarnation(Progress& progress, uint64_t incarnation);
  void maybe_commit();
  void maybe_send_timeout_now(NodeId to);
  bool quorum_active() const;
  Index self_countable_index() const;

  Options options_;
  Membership membership_;
  RaftLog& log_;
  Random& random_;

  HardState hard_;
  uint64_t hard_version_ = 0;       // bumped at every hard state change
  uint64_t persisted_version_ = 0;  // the driver has synced hard state up to this version

  Role role_ = Role::kFollower;
  NodeId leader_ = kNoNode;
  Index commit_ = 0;
  uint64_t ticks_ = 0;  // tick() calls so far, the leader's clock for its followers' answers (status())
  uint32_t election_elapsed_ = 0;
  uint32_t randomized_election_timeout_ = 0;
  uint32_t heartbeat_elapsed_ = 0;

  std::map<NodeId, int> votes_;  // candidate and pre-candidate: +1 granted, -1 refused

  std::map<NodeId, Progress> progress_;  // leader: every member but this node
  NodeId transfer_target_ = kNoNode;
  uint32_t transfer_elapsed_ = 0;

  // Follower: this node's log matches the current leader's up to here (0 when nothing was checked this term).
  Index leader_match_ = 0;
  Index acknowledged_ = 0;  // the last match this follower told its leader it may count

  // `replicated` only: restarted after an unclean stop and not caught up with a leader since (Options::unclean_start).
  bool unclean_ = false;
  uint32_t unclean_timeouts_ = 0;  // election timeouts that passed while unclean_

  std::vector<Message> outbox_;                             // may be sent now
  std::vector<std::pair<uint64_t, Message>> held_;  // waiting for that hard state version to be persisted
};

}  // namespace sluice::raft
