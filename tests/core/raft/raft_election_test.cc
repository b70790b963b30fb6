// Elections on a direct in-memory transport: timeouts, split votes, pre-vote, the up-to-date check, check-quorum,
// leadership transfer.
#include <gtest/gtest.h>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {
namespace {

ClusterConfig config_of(size_t voters, bool pre_vote = true, bool check_quorum = true) {
  ClusterConfig config;
  config.voters = voters;
  config.options.pre_vote = pre_vote;
  config.options.check_quorum = check_quorum;
  return config;
}

// Ticks every node and delivers everything until one leader is known to all, at most `rounds` times.
std::optional<NodeId> settle_leader(RaftTestCluster& c, int rounds = 200) {
  for (int i = 0; i < rounds; ++i) {
    c.tick_all();
    c.deliver_all();
    std::optional<NodeId> leader = c.leader();
    if (!leader) continue;
    bool all_follow = true;
    for (NodeId id : c.ids()) {
      if (c.node(id).up && c.raft(id).leader() != *leader) all_follow = false;
    }
    if (all_follow) return leader;
  }
  return std::nullopt;
}

TEST(RaftElection, ElectsOneLeaderByTimeout) {
  RaftTestCluster c(config_of(3));
  std::optional<NodeId> leader = settle_leader(c);
  ASSERT_TRUE(leader.has_value());
  int leaders = 0;
  for (NodeId id : c.ids()) {
    leaders += c.raft(id).role() == Role::kLeader ? 1 : 0;
    EXPECT_EQ(c.raft(id).term(), c.raft(*leader).term());
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_GE(c.raft(*leader).term(), 1u);
  EXPECT_EQ(c.raft(*leader).commit_index(), 1u);  // the new leader's no-op
}

TEST(RaftElection, SplitVoteElectsNobodyThenRetriesInALaterTerm) {
  RaftTestCluster c(config_of(4, /*pre_vote=*/false));
  c.raft(1).campaign();
  c.process(1);
  c.raft(2).campaign();
  c.process(2);
  // 3 hears 1 first and 4 hears 2 first: two votes each, three needed.
  std::vector<Message> first = c.take_if([](const Message& m) {
    return (m.from == 1 && m.to == 3) || (m.from == 2 && m.to == 4);
  });
  std::vector<Message> rest = c.take_if([](const Message&) { return true; });
  c.inject(first);
  c.inject(rest);
  c.deliver_all();
  for (NodeId id : c.ids()) {
    EXPECT_NE(c.raft(id).role(), Role::kLeader) << id;
    EXPECT_EQ(c.raft(id).term(), 1u) << id;
  }
  EXPECT_EQ(c.raft(3).hard_state().voted_for, 1u);
  EXPECT_EQ(c.raft(4).hard_state().voted_for, 2u);
  std::optional<NodeId> leader = settle_leader(c);
  ASSERT_TRUE(leader.has_value());
  EXPECT_GE(c.raft(*leader).term(), 2u);
}

// A partitioned node's pre-votes fail, so its term stays and the healed group keeps its leader; without pre-vote
// the same history raises its term and deposes the leader (the control that shows the check can fail).
void run_rejoin(bool pre_vote, Term* leader_term_before, Term* term_after, NodeId* leader_after) {
  RaftTestCluster c(config_of(3, pre_vote));
  ASSERT_TRUE(c.elect(1));
  *leader_term_before = c.raft(1).term();
  c.isolate(3);
  for (int i = 0; i < 60; ++i) {
    c.tick_all();
    c.deliver_all();
  }
  EXPECT_EQ(c.raft(1).role(), Role::kLeader);
  c.heal();
  for (int i = 0; i < 5; ++i) {
    c.tick_all();
    c.deliver_all();
  }
  std::optional<NodeId> leader = settle_leader(c);
  ASSERT_TRUE(leader.has_value());
  *term_after = c.raft(*leader).term();
  *leader_after = *leader;
}

TEST(RaftElection, PreVotePreventsADisruptiveRejoin) {
  Term before = 0;
  Term after = 0;
  NodeId leader = kNoNode;
  run_rejoin(/*pre_vote=*/true, &before, &after, &leader);
  EXPECT_EQ(leader, 1u);
  EXPECT_EQ(after, before);
  run_rejoin(/*pre_vote=*/false, &before, &after, &leader);
  EXPECT_GT(after, before) << "without pre-vote the rejoining node's raised term must depose the leader";
}

TEST(RaftElection, CandidateWithAStaleLogLoses) {
  RaftTestCluster c(config_of(3, /*pre_vote=*/true, /*check_quorum=*/false));
  ASSERT_TRUE(c.elect(1));
  c.isolate(3);
  c.propose(1, "a");
  c.propose(1, "b");
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 3u);
  c.crash(1, /*power_loss=*/false);
  c.heal();
  EXPECT_FALSE(c.elect(3)) << "2 holds committed entries 3 lacks";
  EXPECT_FALSE(c.elect(3));
  EXPECT_TRUE(c.elect(2));
  c.deliver_all();
  EXPECT_EQ(c.node(3).log.entries(), c.node(2).log.entries());
}

TEST(RaftElection, CheckQuorumStepsDownAnIsolatedLeader) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.isolate(1);
  for (int i = 0; i < 3 * 10; ++i) c.tick(1);
  EXPECT_EQ(c.raft(1).role(), Role::kFollower);
  EXPECT_EQ(c.raft(1).leader(), kNoNode);
  EXPECT_EQ(c.propose(1, "refused"), 0u);
}

TEST(RaftElection, LeaderThatHearsAMajorityKeepsLeading) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.isolate(3);
  for (int i = 0; i < 50; ++i) {
    c.tick_all();
    c.deliver_all();
  }
  EXPECT_EQ(c.raft(1).role(), Role::kLeader);
  EXPECT_EQ(c.raft(1).term(), 1u);
}

TEST(RaftElection, LeadershipTransferToACaughtUpFollower) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.propose(1, "a");
  c.deliver_all();
  const Term term = c.raft(1).term();
  c.raft(1).transfer_leadership(3);
  c.process(1);
  c.deliver_all();
  EXPECT_EQ(c.raft(3).role(), Role::kLeader);
  EXPECT_EQ(c.raft(3).term(), term + 1);
  EXPECT_EQ(c.raft(1).role(), Role::kFollower);
  EXPECT_EQ(c.raft(1).leader(), 3u);
}

TEST(RaftElection, LeadershipTransferWaitsForTheTargetToCatchUp) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.isolate(3);
  c.propose(1, "a");
  c.propose(1, "b");
  c.deliver_all();
  c.raft(1).transfer_leadership(3);
  c.process(1);
  EXPECT_EQ(c.propose(1, "during transfer"), 0u) << "a transferring leader takes no proposals";
  c.deliver_all();
  EXPECT_EQ(c.raft(1).role(), Role::kLeader) << "no TimeoutNow before 3 has the log";
  c.heal();
  c.tick(1);  // a heartbeat; its answer shows 3 is behind, and the catch-up ends with TimeoutNow
  c.deliver_all();
  EXPECT_EQ(c.raft(3).role(), Role::kLeader);
  EXPECT_EQ(c.node(3).log.entries().size(), 4u);  // two no-ops and a, b
}

TEST(RaftElection, AbandonedTransferLetsTheLeaderContinue) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.isolate(3);
  c.raft(1).transfer_leadership(3);
  c.process(1);
  for (int i = 0; i < 10; ++i) {
    c.tick(1);
    c.tick(2);
    c.deliver_all();
  }
  EXPECT_EQ(c.raft(1).role(), Role::kLeader);
  EXPECT_NE(c.propose(1, "after"), 0u);
}

}  // namespace
}  // namespace sluice::raft::testing
