// Roles, terms, the message gate (which term a message is judged in) and the Ready hand-off.
#include "core/raft/raft.h"

#include <algorithm>

#include "core/base/assert.h"

namespace sluice::raft {
namespace {

bool is_vote_request(MessageType type) { return type == MessageType::kPreVote || type == MessageType::kVote; }

bool is_from_leader(MessageType type) {
  return type == MessageType::kAppend || type == MessageType::kHeartbeat || type == MessageType::kTimeoutNow;
}

}  // namespace

Raft::Raft(const Options& options, Membership membership, RaftLog& log, HardState persisted, Random& random)
    : options_(options), membership_(std::move(membership)), log_(log), random_(random), hard_(persisted) {
  SLUICE_ASSERT(options_.id != kNoNode);
  SLUICE_ASSERT(membership_.valid());
  SLUICE_ASSERT(options_.election_ticks > 1);
  SLUICE_ASSERT(options_.heartbeat_ticks >= 1);
  SLUICE_ASSERT(options_.heartbeat_ticks < options_.election_ticks);
  SLUICE_ASSERT(options_.max_inflight_appends >= 1);
  SLUICE_ASSERT(options_.max_entries_per_append >= 1);
  SLUICE_ASSERT(options_.max_bytes_per_append >= 1);
  SLUICE_ASSERT(log_.is_entry_end(log_.durable_index()));
  // The log may hold entries of a term whose hard state never reached the disk (written to the log before the
  // driver synced the term, then a process crash). The vote in that term is unknown, so refuse to vote in it at all.
  if (last_term() > hard_.term) {
    SLUICE_PROBE("raft.restart_log_ahead_of_term");
    hard_.term = last_term();
    hard_.voted_for = options_.id;
  }
  // Whatever the log dropped was committed (retention, DeleteRecords, a jump to a leader's log start).
  commit_ = log_.low_watermark();
  SLUICE_ASSERT(commit_ <= log_.last_index());
  hard_.incarnation = persisted.incarnation + 1;
  // Under `replicated` an entry counts once appended, so an unclean stop may have taken entries this node had
  // acknowledged (a node that never stored a hard state, incarnation 0, never acknowledged anything).
  if (options_.commit_mode == CommitMode::kReplicated && options_.unclean_start && persisted.incarnation > 0) {
    if (options_.mutations.has(Mutation::kRaftUncleanNodeVotes)) [[unlikely]] {
      SLUICE_PROBE("mutation.raft-unclean-node-votes");
    } else {
      SLUICE_PROBE("raft.unclean_start");
      unclean_ = true;
    }
  }
  hard_version_ = 1;  // every message waits for the restarted incarnation to be persisted
  become_follower(hard_.term, kNoNode);
  SLUICE_ASSERT(hard_.term >= persisted.term);
}

void Raft::set_hard_state(Term term, NodeId voted_for) {
  SLUICE_ASSERT(term >= hard_.term);
  SLUICE_ASSERT(term > hard_.term || hard_.voted_for == kNoNode || hard_.voted_for == voted_for);
  if (hard_.term == term && hard_.voted_for == voted_for) return;
  hard_.term = term;
  hard_.voted_for = voted_for;
  ++hard_version_;
}

void Raft::reset_election_timer() {
  election_elapsed_ = 0;
  const uint64_t spread = random_.uniform(options_.election_ticks);
  randomized_election_timeout_ = options_.election_ticks + static_cast<uint32_t>(spread);
  SLUICE_ASSERT(randomized_election_timeout_ < 2 * options_.election_ticks);
}

void Raft::become_follower(Term term, NodeId leader) {
  SLUICE_ASSERT(term >= hard_.term);
  SLUICE_ASSERT(leader != options_.id);
  if (term > hard_.term) set_hard_state(term, kNoNode);
  if (term != hard_.term || leader != leader_ || role_ != Role::kFollower) {
    leader_match_ = 0;
    acknowledged_ = 0;
  }
  role_ = Role::kFollower;
  leader_ = leader;
  progress_.clear();
  votes_.clear();
  transfer_target_ = kNoNode;
  reset_election_timer();
}

void Raft::become_pre_candidate() {
  SLUICE_ASSERT(role_ != Role::kLeader);
  SLUICE_ASSERT(!unclean_);  // an unclean node never campaigns
  SLUICE_ASSERT(membership_.is_voter(options_.id));
  if (campaign(Role::kPreCandidate)) return become_candidate(false);
  solicit_votes(MessageType::kPreVote, hard_.term + 1, false);
}

bool Raft::campaign(Role role) {
  role_ = role;
  leader_ = kNoNode;
  leader_match_ = 0;
  votes_.clear();
  votes_[options_.id] = 1;
  reset_election_timer();
  return tally(membership_, [this](NodeId id) { return votes_.count(id) ? votes_[id] : 0; }) == VoteResult::kWon;
}

void Raft::solicit_votes(MessageType type, uint64_t term, bool transfer) {
  for (NodeId peer : membership_.members()) {
    if (peer == options_.id || !membership_.is_voter(peer)) continue;
    Message m{.type = type, .to = peer, .term = term};
    m.log_index = log_.last_index();
    m.log_term = last_term();
    m.transfer = transfer;
    send(std::move(m));
  }
}

void Raft::become_candidate(bool transfer) {
  SLUICE_ASSERT(role_ != Role::kLeader);
  SLUICE_ASSERT(!unclean_);
  SLUICE_ASSERT(membership_.is_voter(options_.id));
  set_hard_state(hard_.term + 1, options_.id);
  if (campaign(Role::kCandidate)) return become_leader();
  solicit_votes(MessageType::kVote, hard_.term, transfer);
}

void Raft::become_leader() {
  SLUICE_ASSERT(role_ == Role::kCandidate);
  SLUICE_ASSERT(hard_.voted_for == options_.id);
  SLUICE_ASSERT(!unclean_);
  role_ = Role::kLeader;
  leader_ = options_.id;
  votes_.clear();
  progress_.clear();
  for (NodeId peer : membership_.members()) {
    if (peer == options_.id) continue;
    progress_[peer] = Progress{.match = 0, .next = log_.last_index() + 1};
  }
  heartbeat_elapsed_ = 0;
  election_elapsed_ = 0;
  // A no-op of the new term: entries of earlier terms commit only beneath one of the leader's own (§5.4.2). It
  // covers one index, as any entry may.
  const Entry noop{.term = hard_.term, .count = 1, .payload = {}};
  log_.append(log_.last_index() + 1, std::span<const Entry>(&noop, 1));
  SLUICE_ASSERT(last_term() == hard_.term);
  broadcast_append();
  maybe_commit();
}

void Raft::campaign() {
  if (!membership_.is_voter(options_.id)) return;  // learners never campaign
  if (unclean_) return;                            // nor does a node that may have lost what it acknowledged
  if (role_ == Role::kLeader) return;
  if (options_.pre_vote) {
    become_pre_candidate();
  } else {
    become_candidate(false);
  }
}

bool Raft::in_lease() const {
  return options_.check_quorum && leader_ != kNoNode && election_elapsed_ < options_.election_ticks;
}

void Raft::tick() {
  ++ticks_;
  if (role_ == Role::kLeader) return tick_leader();
  tick_election();
}

// Judges the message's term; false when it is to be dropped (or was answered here).
bool Raft::accept_term(const Message& m) {
  if (m.term > hard_.term) {
    if (is_vote_request(m.type) && !m.transfer && in_lease()) {
      // Thesis §4.2.3: a node that heard from a leader recently ignores elections, so a removed or partitioned
      // node cannot depose a working leader.
      SLUICE_PROBE("raft.vote_ignored_in_lease");
      return false;
    }
    const bool keeps_term = m.type == MessageType::kPreVote || (m.type == MessageType::kPreVoteResponse && !m.reject);
    if (!keeps_term) become_follower(m.term, is_from_leader(m.type) ? m.from : kNoNode);
    return true;
  }
  if (m.term < hard_.term) {
    // A stale leader learns the newer term from the answer and steps down; a stale pre-candidate too.
    if (m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat) {
      send(Message{.type = MessageType::kAppendResponse, .to = m.from, .term = hard_.term, .reject = true});
    } else if (m.type == MessageType::kPreVote) {
      send(Message{.type = MessageType::kPreVoteResponse, .to = m.from, .term = hard_.term, .reject = true});
    }
    return false;
  }
  return true;
}

void Raft::step(const Message& m) {
  SLUICE_ASSERT(m.to == options_.id);
  SLUICE_ASSERT(m.from != options_.id);
  SLUICE_ASSERT(m.from != kNoNode);
  if (!membership_.contains(m.from)) {
    SLUICE_PROBE("raft.message_from_non_member");
    return;
  }
  // A forwarded proposal is not part of the term protocol (etcd treats MsgProp as local): its term is only what
  // the follower knew, and whichever node leads now may append it.
  if (m.type == MessageType::kPropose) return handle_propose(m);
  if (!accept_term(m)) return;
  dispatch(m);
}

void Raft::dispatch(const Message& m) {
  switch (m.type) {
    case MessageType::kPreVote:
    case MessageType::kVote: return handle_vote_request(m);
    case MessageType::kPreVoteResponse:
    case MessageType::kVoteResponse: return handle_vote_response(m);
    case MessageType::kAppend: return handle_append(m);
    case MessageType::kHeartbeat: return handle_heartbeat(m);
    case MessageType::kAppendResponse: return handle_append_response(m);
    case MessageType::kHeartbeatResponse: return handle_heartbeat_response(m);
    case MessageType::kTimeoutNow:
      SLUICE_ASSERT(m.term == hard_.term);
      if (role_ == Role::kLeader || !membership_.is_voter(options_.id) || unclean_) return;
      SLUICE_PROBE("raft.timeout_now");
      leader_ = kNoNode;
      return become_candidate(true);
    case MessageType::kPropose: return handle_propose(m);
  }
  SLUICE_UNREACHABLE();
}

void Raft::send(Message m) {
  SLUICE_ASSERT(m.to != options_.id);
  SLUICE_ASSERT(m.to != kNoNode);
  m.from = options_.id;
  m.incarnation = hard_.incarnation;
  if (m.term == 0) m.term = hard_.term;
  if (hard_version_ > persisted_version_) {
    held_.emplace_back(hard_version_, std::move(m));
  } else {
    outbox_.push_back(std::move(m));
  }
}

Ready Raft::take_ready() {
  Ready ready;
  ready.messages = std::move(outbox_);
  outbox_.clear();
  if (hard_version_ > persisted_version_) {
    ready.hard_state = hard_;
    ready.hard_state_version = hard_version_;
  }
  SLUICE_ASSERT(log_.durable_index() <= log_.last_index());
  if (log_.durable_index() < log_.last_index()) ready.sync_log_through = log_.last_index();
  ready.commit_index = commit_;
  return ready;
}

void Raft::on_hard_state_persisted(uint64_t version) {
  SLUICE_ASSERT(version <= hard_version_);
  SLUICE_ASSERT(version > 0);
  if (version <= persisted_version_) return;
  persisted_version_ = version;
  std::vector<std::pair<uint64_t, Message>> still_held;
  for (auto& [needed, message] : held_) {
    if (needed <= persisted_version_) {
      outbox_.push_back(std::move(message));
    } else {
      still_held.emplace_back(needed, std::move(message));
    }
  }
  held_ = std::move(still_held);
}

void Raft::on_log_synced() {
  SLUICE_ASSERT(log_.durable_index() <= log_.last_index());
  if (role_ == Role::kLeader) return maybe_commit();
  if (role_ == Role::kFollower && leader_ != kNoNode) acknowledge_leader(true);
}

void Raft::set_membership(Membership membership) {
  SLUICE_ASSERT(membership.valid());
  membership_ = std::move(membership);
  if (role_ != Role::kLeader) return;
  if (!membership_.is_voter(options_.id)) return become_follower(hard_.term, kNoNode);
  std::map<NodeId, Progress> kept;
  for (NodeId peer : membership_.members()) {
    if (peer == options_.id) continue;
    auto it = progress_.find(peer);
    kept[peer] = it != progress_.end() ? it->second : Progress{.match = 0, .next = log_.last_index() + 1};
  }
  progress_ = std::move(kept);
  maybe_commit();
}

bool Raft::learner_caught_up(NodeId learner) const {
  if (role_ != Role::kLeader || !membership_.is_learner(learner)) return false;
  auto it = progress_.find(learner);
  SLUICE_ASSERT(it != progress_.end());
  return it->second.match >= commit_;
}

// A tick noted as ticks_ + 1 (0: never), as ticks ago.
int64_t Raft::ticks_since(uint64_t noted) const {
  if (noted == 0) return -1;
  SLUICE_ASSERT(noted <= ticks_ + 1);
  return static_cast<int64_t>(ticks_ + 1 - noted);
}

GroupStatus Raft::status() const {
  GroupStatus s{.id = options_.id, .term = hard_.term, .role = role_, .leader = leader_, .commit_index = commit_};
  s.last_index = log_.last_index();
  s.durable_index = log_.durable_index();
  s.log_start = log_.low_watermark();  // no disk read: other fibers ask for the status
  for (const auto& [peer, progress] : progress_) {
    SLUICE_ASSERT(progress.match <= log_.last_index());
    s.followers.push_back(FollowerStatus{.id = peer,
                                         .learner = membership_.is_learner(peer),
                                         .match = progress.match,
                                         .next = progress.next,
                                         .lag = log_.last_index() - progress.match,
                                         .state = progress.state,
                                         .inflight = progress.inflight.size(),
                                         .recent_active = progress.recent_active,
                                         .log_start = progress.log_start,
                                         .ticks_since_answer = ticks_since(progress.answered_tick),
                                         .ticks_since_caught_up = ticks_since(progress.caught_up_tick)});
  }
  return s;
}

}  // namespace sluice::raft
