// Elections: timeouts, pre-vote (thesis §9.6), votes and their tally.
#include "core/base/assert.h"
#include "core/raft/raft.h"

namespace sluice::raft {

void Raft::tick_election() {
  SLUICE_ASSERT(role_ != Role::kLeader);
  ++election_elapsed_;
  if (!membership_.is_voter(options_.id)) return;  // a learner waits to be promoted
  if (election_elapsed_ < randomized_election_timeout_) return;
  campaign();
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
