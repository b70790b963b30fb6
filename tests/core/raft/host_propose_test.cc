// RaftHost's partition-facing surface: proposals of entries covering spans, returning at the leader's append
// (ProposeWait::kAppended) and waiting for the commit apart (wait_committed: committed, lost, not leader, unknown),
// groups that never read their committed entries back (apply_entries false: on_commit only), and on_role_change.
#include "core/raft/host.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/core/raft/host_world.h"

namespace sluice::raft::testing {
namespace {

NodeId elected(HostWorld& w, GroupId g = 1) {
  EXPECT_TRUE(w.run_until([&] { return w.agreed_leader(g) != kNoNode; }));
  return w.agreed_leader(g);
}

void cut_off(HostWorld& w, NodeId leader) {
  for (NodeId id = 1; id <= 3; ++id) {
    if (id != leader) w.cut(leader, id);
  }
}

TEST(RaftHostPropose, AppendedReturnsBeforeTheCommitAndWaitCommittedSeesIt) {
  HostWorld w(3, 1);
  const NodeId leader = elected(w);
  Proposed appended;
  Proposed committed;
  Proposed again;
  Index commit_at_return = 0;
  Instant waited_from{};
  Instant answered_at{};
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    RaftHost& host = *w.host(leader);
    const Instant deadline = w.node(leader).clock().now() + 5s;
    appended = host.propose(1, "batch of ten", 10, deadline, ProposeWait::kAppended);
    commit_at_return = host.status(1)->commit_index;
    committed = host.wait_committed(1, appended.last_index, appended.term, deadline);
    waited_from = w.node(leader).clock().now();
    again = host.wait_committed(1, appended.last_index, appended.term, deadline);
    answered_at = w.node(leader).clock().now();
  }));
  ASSERT_EQ(appended.outcome, ProposeOutcome::kAppended) << propose_outcome_name(appended.outcome);
  EXPECT_EQ(appended.last_index, appended.index + 9);
  EXPECT_EQ(appended.leader, leader);
  EXPECT_LT(commit_at_return, appended.last_index) << "returned at the append, before any follower answered";
  ASSERT_EQ(committed.outcome, ProposeOutcome::kCommitted) << propose_outcome_name(committed.outcome);
  EXPECT_EQ(committed.index, appended.index);
  EXPECT_EQ(committed.last_index, appended.last_index);
  EXPECT_EQ(committed.term, appended.term);
  EXPECT_EQ(again.outcome, ProposeOutcome::kCommitted);
  EXPECT_EQ(answered_at, waited_from) << "a known fate is answered at once";
  // Applied once, at its first index, as one entry of ten indexes; the next proposal starts after it.
  ASSERT_FALSE(w.applied(leader, 1).empty());
  EXPECT_EQ(w.applied(leader, 1).back().index, appended.index);
  EXPECT_EQ(w.applied(leader, 1).back().entry.count, 10u);
  const Proposed next = w.propose_and_wait(leader, 1, "one");
  ASSERT_EQ(next.outcome, ProposeOutcome::kCommitted);
  EXPECT_EQ(next.index, appended.last_index + 1);
  EXPECT_EQ(next.last_index, next.index);
}

TEST(RaftHostPropose, ProposalsOfSpansCommitAndEveryNodeAppliesThemAtTheirFirstIndex) {
  HostWorld w(3, 1);
  const NodeId leader = elected(w);
  std::vector<Proposed> done;
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    for (Index count : {1, 7, 100, 2, 1}) {
      done.push_back(w.host(leader)->propose(1, "n" + std::to_string(count), count,
                                             w.node(leader).clock().now() + 5s, ProposeWait::kCommitted));
    }
  }));
  for (size_t i = 0; i < done.size(); ++i) {
    ASSERT_EQ(done[i].outcome, ProposeOutcome::kCommitted) << i;
    if (i > 0) EXPECT_EQ(done[i].index, done[i - 1].last_index + 1) << i;
  }
  const Index last = done.back().last_index;
  ASSERT_TRUE(w.run_until([&] {
    for (NodeId id = 1; id <= 3; ++id) {
      if (w.applied(id, 1).empty() || w.applied(id, 1).back().index != last) return false;
    }
    return true;
  }));
  for (NodeId id = 1; id <= 3; ++id) {
    Index expected = 1;
    for (const Applied& a : w.applied(id, 1)) {
      EXPECT_EQ(a.index, expected) << "node " << id;
      expected = a.index + a.entry.count;
    }
    EXPECT_EQ(w.commits(id, 1).back(), last) << "on_commit is called for applying groups too";
  }
}

TEST(RaftHostPropose, WaitCommittedAnswersUnknownAtTheDeadlineWhileStillLeading) {
  HostWorld w(3, 1);
  const NodeId leader = elected(w);
  cut_off(w, leader);
  Proposed appended;
  Proposed waited;
  Instant started{};
  Instant ended{};
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    RaftHost& host = *w.host(leader);
    started = w.node(leader).clock().now();
    appended = host.propose(1, "no quorum", 3, started + 5s, ProposeWait::kAppended);
    waited = host.wait_committed(1, appended.last_index, appended.term, started + 200ms);
    ended = w.node(leader).clock().now();
  }));
  ASSERT_EQ(appended.outcome, ProposeOutcome::kAppended) << "appended although no quorum can commit it";
  EXPECT_EQ(waited.outcome, ProposeOutcome::kUnknown) << propose_outcome_name(waited.outcome);
  EXPECT_EQ(waited.last_index, appended.last_index);
  EXPECT_GE(ended - started, 200ms);
  EXPECT_EQ(w.host(leader)->raft(1)->role(), Role::kLeader) << "the check-quorum step-down is later";
}

TEST(RaftHostPropose, WaitCommittedAnswersNotLeaderWhenTheLeaderStepsDownThenLostOnceItKnows) {
  HostWorld w(3, 1);
  const NodeId leader = elected(w);
  cut_off(w, leader);
  Proposed appended;
  Proposed waited;
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    RaftHost& host = *w.host(leader);
    const Instant now = w.node(leader).clock().now();
    appended = host.propose(1, "isolated", 5, now + 5s, ProposeWait::kAppended);
    waited = host.wait_committed(1, appended.last_index, appended.term, now + 20s);
  }));
  ASSERT_EQ(appended.outcome, ProposeOutcome::kAppended);
  EXPECT_EQ(waited.outcome, ProposeOutcome::kNotLeader) << propose_outcome_name(waited.outcome);
  EXPECT_NE(w.host(leader)->raft(1)->role(), Role::kLeader);
  // The others elect a leader of a later term, whose entries take those indexes; once the old leader's commit
  // index covers a later term's entry, it knows its entry can never commit.
  const NodeId other = leader == 1 ? 2 : 1;
  ASSERT_TRUE(w.run_until([&] {
    const NodeId l = w.host(other)->raft(1)->leader();
    return l != kNoNode && l != leader;
  }));
  const NodeId next = w.host(other)->raft(1)->leader();
  ASSERT_EQ(w.propose_and_wait(next, 1, "majority").outcome, ProposeOutcome::kCommitted);
  w.heal();
  ASSERT_TRUE(w.run_until([&] {
    const Raft* raft = w.host(leader)->raft(1);
    return raft->commit_index() >= appended.index && raft->leader() == next;
  }));
  Proposed later;
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    later = w.host(leader)->wait_committed(1, appended.last_index, appended.term,
                                          w.node(leader).clock().now() + 5s);
  }));
  EXPECT_EQ(later.outcome, ProposeOutcome::kLost) << propose_outcome_name(later.outcome);
  EXPECT_EQ(later.leader, next);
}

TEST(RaftHostPropose, WaitCommittedForAPositionTheLeaderNeverAppendedIsLost) {
  HostWorld w(3, 1);
  const NodeId leader = elected(w);
  const Proposed p = w.propose_and_wait(leader, 1, "real");
  ASSERT_EQ(p.outcome, ProposeOutcome::kCommitted);
  Proposed beyond;
  Proposed other_term;
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    RaftHost& host = *w.host(leader);
    const Instant deadline = w.node(leader).clock().now() + 5s;
    beyond = host.wait_committed(1, p.last_index + 100, p.term, deadline);
    other_term = host.wait_committed(1, p.last_index, p.term + 1, deadline);
  }));
  EXPECT_EQ(beyond.outcome, ProposeOutcome::kLost) << propose_outcome_name(beyond.outcome);
  EXPECT_EQ(beyond.index, 0u);
  EXPECT_EQ(other_term.outcome, ProposeOutcome::kLost) << propose_outcome_name(other_term.outcome);
}

TEST(RaftHostPropose, AGroupThatDoesNotApplyReportsCommitsAndNeverReadsItsEntriesBack) {
  HostWorld w(3, 1, CommitMode::kPersisted, /*apply_entries=*/false);
  const NodeId leader = elected(w);
  std::vector<Proposed> done;
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    for (Index count : {4, 1, 30}) {
      done.push_back(w.host(leader)->propose(1, "batch", count, w.node(leader).clock().now() + 5s,
                                             ProposeWait::kCommitted));
    }
  }));
  for (const Proposed& p : done) ASSERT_EQ(p.outcome, ProposeOutcome::kCommitted);
  const Index last = done.back().last_index;
  ASSERT_TRUE(w.run_until([&] {
    for (NodeId id = 1; id <= 3; ++id) {
      if (w.commits(id, 1).empty() || w.commits(id, 1).back() < last) return false;
    }
    return true;
  }));
  int never_led = 0;
  for (NodeId id = 1; id <= 3; ++id) {
    EXPECT_TRUE(w.applied(id, 1).empty()) << "node " << id;
    const std::vector<Index>& commits = w.commits(id, 1);
    for (size_t i = 1; i < commits.size(); ++i) EXPECT_LT(commits[i - 1], commits[i]) << "node " << id;
    for (Index commit : commits) EXPECT_TRUE(w.storage(id, 1).log().is_entry_end(commit)) << commit;
    // A node that never led never sends appends: nothing of its log is ever read back.
    bool led = false;
    for (const RoleChange& r : w.roles(id, 1)) led = led || r.role == Role::kLeader;
    if (led) continue;
    ++never_led;
    EXPECT_EQ(w.storage(id, 1).counting_log().reads, 0u) << "node " << id << " read its log";
  }
  EXPECT_GE(never_led, 1) << "no node to check";
}

TEST(RaftHostPropose, RoleChangesAreReportedFromTheInitialStateOn) {
  HostWorld w(3, 1);
  const NodeId first = elected(w);
  ASSERT_TRUE(w.run_until([&] {
    for (NodeId id = 1; id <= 3; ++id) {
      if (w.roles(id, 1).empty() || w.roles(id, 1).back().leader != first) return false;
    }
    return true;
  }));
  const Term term = w.host(first)->raft(1)->term();
  for (NodeId id = 1; id <= 3; ++id) {
    const std::vector<RoleChange>& roles = w.roles(id, 1);
    EXPECT_EQ(roles.front(), (RoleChange{Role::kFollower, 0, kNoNode})) << "node " << id;
    EXPECT_EQ(roles.back(), (RoleChange{id == first ? Role::kLeader : Role::kFollower, term, first})) << id;
    for (size_t i = 1; i < roles.size(); ++i) EXPECT_NE(roles[i - 1], roles[i]) << "node " << id << " at " << i;
  }
  w.crash(first, /*power_loss=*/false);
  ASSERT_TRUE(w.run_until([&] {
    const NodeId l = w.agreed_leader(1);
    return l != kNoNode && l != first;
  }));
  const NodeId second = w.agreed_leader(1);
  const Term later = w.host(second)->raft(1)->term();
  for (NodeId id = 1; id <= 3; ++id) {
    if (id == first) continue;
    ASSERT_TRUE(w.run_until([&] { return w.roles(id, 1).back().leader == second; }));
    EXPECT_EQ(w.roles(id, 1).back(), (RoleChange{id == second ? Role::kLeader : Role::kFollower, later, second}));
  }
}

TEST(RaftHostPropose, AGroupTakenOfflineReportsNoLeaderAndSettlesItsWaiters) {
  HostWorld w(3, 1);
  const NodeId leader = elected(w);
  Proposed appended;
  Proposed waited;
  Instant started{};
  Instant ended{};
  ASSERT_TRUE(w.on_fiber(leader, [&] {
    RaftHost& host = *w.host(leader);
    cut_off(w, leader);
    started = w.node(leader).clock().now();
    w.storage(leader, 1).fail = true;  // the append is in memory; the round's sync of it fails
    appended = host.propose(1, "doomed", 2, started + 5s, ProposeWait::kAppended);
    waited = host.wait_committed(1, appended.last_index, appended.term, started + 20s);
    ended = w.node(leader).clock().now();
  }));
  ASSERT_EQ(appended.outcome, ProposeOutcome::kAppended);
  EXPECT_EQ(waited.outcome, ProposeOutcome::kNotLeader) << propose_outcome_name(waited.outcome);
  EXPECT_LT(ended - started, 1s) << "settled when the group went offline, not at the deadline";
  EXPECT_FALSE(w.host(leader)->online(1));
  EXPECT_EQ(w.roles(leader, 1).back(), (RoleChange{Role::kFollower, appended.term, kNoNode}));
}

}  // namespace
}  // namespace sluice::raft::testing
