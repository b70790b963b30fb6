// Elections: timeouts, pre-vote (thesis §9.6), votes and their tally.
#include "core/base/assert.h"
#include "core/raft/raft.h"

namespace sluice::raft {

void Raft::tick_election() {
  SLUICE_ASSERT(role_ != Role::kLeader);
  ++election_elapsed_;
  if (!membership_.is_voter(options_.id)) return;  // a learner waits to be promoted
  if (election_elapsed_ < randomized_election_timeout_) return;
  if (unclean_ && !unclean_timed_out()) return reset_election_timer();
  campaign();
}

// An election timeout passed without a leader while unclean. After Options::unclean_election_timeouts of them the
// node stops waiting and votes and campaigns as before: then a majority of the group may have stopped uncleanly at
// once, no election can be sure to include an intact holder of every committed entry, and a leader lacking one may
// win (the documented loss of `replicated`; lose_committed_entries).
bool Raft::unclean_timed_out() {
  SLUICE_ASSERT(unclean_);
  SLUICE_ASSERT(options_.commit_mode == CommitMode::kReplicated);
  if (++unclean_timeouts_ < options_.unclean_election_timeouts) {
    SLUICE_PROBE("raft.unclean_waits_for_a_leader");
    return false;
  }
  SLUICE_PROBE("raft.unclean_gave_up_waiting");
  unclean_ = false;
  return true;
}

// Caught up: this node's log matches the current leader's through the leader's commit index, and that index is in
// the leader's term, so the leader has committed its own first entry and every entry committed in an earlier term lies
// below it. Whatever was committed before this node's unclean stop is then in its log again, and its vote is safe.
void Raft::maybe_caught_up(Index leader_commit, Term leader_commit_term) {
  if (!unclean_) return;
  SLUICE_ASSERT(role_ == Role::kFollower);
  SLUICE_ASSERT(leader_ != kNoNode);
  if (leader_commit_term != hard_.term || leader_match_ < leader_commit) return;
  SLUICE_ASSERT(log_.term_at(leader_commit) == hard_.term);  // log matching through leader_match_
  SLUICE_PROBE("raft.unclean_caught_up");
  unclean_ = false;
}

bool Raft::log_up_to_date(Index last_index, Term last_term_of_candidate) const {
  if (options_.mutations.has(Mutation::kRaftVoteWithoutLogCheck)) [[unlikely]] {
    SLUICE_PROBE("mutation.raft-vote-without-log-check");
    return true;
  }
  const Term mine = last_term();
  if (last_term_of_candidate != mine) return last_term_of_candidate > mine;
  return last_index >= log_.last_index();
}

void Raft::handle_vote_request(const Message& m) {
  const bool pre_vote = m.type == MessageType::kPreVote;
  SLUICE_ASSERT(pre_vote || m.term <= hard_.term);  // a real vote request raised our term in accept_term
  // A node votes once per term; a pre-vote for a later term promises nothing, so it may be granted freely.
  const bool can_vote = hard_.voted_for == m.from || (hard_.voted_for == kNoNode && leader_ == kNoNode) ||
                        (pre_vote && m.term > hard_.term);
  const MessageType answer = pre_vote ? MessageType::kPreVoteResponse : MessageType::kVoteResponse;
  if (unclean_) {
    // Its log may lack entries committed on its word: a candidate that lacks them too could win with this vote.
    SLUICE_ASSERT(role_ == Role::kFollower);
    SLUICE_ASSERT(options_.commit_mode == CommitMode::kReplicated);
    SLUICE_PROBE("raft.vote_refused_unclean");
    send(Message{.type = answer, .to = m.from, .term = hard_.term, .reject = true});
    return;
  }
  if (can_vote && m.term >= hard_.term && log_up_to_date(m.log_index, m.log_term)) {
    if (!pre_vote) {
      SLUICE_ASSERT(m.term == hard_.term);
      SLUICE_ASSERT(role_ != Role::kLeader);
      SLUICE_ASSERT(role_ != Role::kCandidate);
      if (role_ == Role::kPreCandidate) become_follower(hard_.term, kNoNode);  // it voted for m.from this term
      set_hard_state(hard_.term, m.from);  // before the answer: send() holds it until this is on disk
      election_elapsed_ = 0;
    }
    send(Message{.type = answer, .to = m.from, .term = m.term, .reject = false});
    return;
  }
  SLUICE_PROBE("raft.vote_refused");
  send(Message{.type = answer, .to = m.from, .term = hard_.term, .reject = true});
}

void Raft::handle_vote_response(const Message& m) {
  if (m.type == MessageType::kPreVoteResponse) {
    if (role_ != Role::kPreCandidate) return;
    // Granted answers carry the term we would campaign in; refusals carry the voter's (not above ours here).
    if (!m.reject && m.term != hard_.term + 1) return;
  } else {
    if (role_ != Role::kCandidate || m.term != hard_.term) return;
  }
  if (!membership_.is_voter(m.from)) return;
  votes_.try_emplace(m.from, m.reject ? -1 : 1);
  on_vote_result(tally(membership_, [this](NodeId id) { return votes_.count(id) ? votes_[id] : 0; }));
}

void Raft::on_vote_result(VoteResult result) {
  SLUICE_ASSERT(role_ == Role::kPreCandidate || role_ == Role::kCandidate);
  if (result == VoteResult::kPending) return;
  if (result == VoteResult::kLost) {
    SLUICE_PROBE("raft.election_lost");
    return become_follower(hard_.term, kNoNode);
  }
  if (role_ == Role::kPreCandidate) return become_candidate(false);
  become_leader();
  SLUICE_ASSERT(role_ == Role::kLeader || role_ == Role::kFollower);
}

}  // namespace sluice::raft
