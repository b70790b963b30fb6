// Learners and the quorum arithmetic (joint configurations included, ready for joint consensus).
#include <gtest/gtest.h>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {
namespace {

TEST(RaftMembership, LearnerReceivesTheLogButNeverCampaignsNorCounts) {
  ClusterConfig config;
  config.voters = 3;
  config.learners = 1;  // node 4
  RaftTestCluster c(config);
  for (int i = 0; i < 100; ++i) c.tick(4);
  EXPECT_EQ(c.raft(4).role(), Role::kFollower);
  EXPECT_EQ(c.raft(4).term(), 0u);
  EXPECT_TRUE(c.network().empty()) << "a learner sends no (pre-)vote requests";
  ASSERT_TRUE(c.elect(1));
  c.propose(1, "a");
  c.deliver_all();
  EXPECT_EQ(c.node(4).log.entries(), c.node(1).log.entries());
  EXPECT_TRUE(c.raft(1).learner_caught_up(4));
  c.crash(2, false);
  c.crash(3, false);
  const Index index = c.propose(1, "b");
  c.deliver_all();
  EXPECT_EQ(c.node(4).log.last_index(), index);
  EXPECT_LT(c.raft(1).commit_index(), index) << "the learner holds it, but a learner is not counted";
}

TEST(RaftMembership, PromotedLearnerCountsTowardCommit) {
  ClusterConfig config;
  config.voters = 3;
  config.learners = 1;
  RaftTestCluster c(config);
  ASSERT_TRUE(c.elect(1));
  c.crash(3, false);
  c.propose(1, "a");
  c.deliver_all();
  EXPECT_TRUE(c.raft(1).learner_caught_up(4));
  c.crash(2, false);
  const Index index = c.propose(1, "b");
  c.deliver_all();
  EXPECT_LT(c.raft(1).commit_index(), index);
  // The cluster layer replaces the lost 3 by the caught-up learner 4 on every member.
  c.set_membership_everywhere(Membership{.voters = {1, 2, 4}});
  c.tick(1);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), index);
  // And the promoted node may now campaign.
  c.crash(1, false);
  c.restart(2);
  for (int i = 0; i < 100 && !c.leader(); ++i) {
    c.tick_all();
    c.deliver_all();
  }
  ASSERT_TRUE(c.leader().has_value());
}

TEST(RaftMembership, QuorumIndexOfASingleAndAJointConfiguration) {
  std::map<NodeId, Index> reached = {{1, 9}, {2, 5}, {3, 7}, {4, 2}, {5, 1}};
  auto at = [&reached](NodeId id) { return reached[id]; };
  EXPECT_EQ(quorum_index(Membership{.voters = {1, 2, 3}}, at), 7u);
  EXPECT_EQ(quorum_index(Membership{.voters = {1, 2, 3, 4}}, at), 5u);
  EXPECT_EQ(quorum_index(Membership{.voters = {1}}, at), 9u);
  EXPECT_EQ(quorum_index(Membership{.voters = {1, 2, 3}, .voters_outgoing = {3, 4, 5}}, at), 2u);
}

TEST(RaftMembership, TallyOfASingleAndAJointConfiguration) {
  std::map<NodeId, int> votes = {{1, 1}, {2, 1}, {3, -1}, {4, -1}};
  auto vote = [&votes](NodeId id) { return votes.count(id) ? votes[id] : 0; };
  EXPECT_EQ(tally(Membership{.voters = {1, 2, 3}}, vote), VoteResult::kWon);
  EXPECT_EQ(tally(Membership{.voters = {1, 3, 4}}, vote), VoteResult::kLost);
  EXPECT_EQ(tally(Membership{.voters = {1, 5, 6}}, vote), VoteResult::kPending);
  EXPECT_EQ(tally(Membership{.voters = {1, 2, 3}, .voters_outgoing = {3, 4, 5}}, vote), VoteResult::kLost);
  EXPECT_EQ(tally(Membership{.voters = {1, 2, 3}, .voters_outgoing = {1, 2, 5}}, vote), VoteResult::kWon);
}

TEST(RaftMembership, ValidityRules) {
  EXPECT_TRUE((Membership{.voters = {1, 2, 3}, .learners = {4}}).valid());
  EXPECT_FALSE((Membership{.voters = {}}).valid());
  EXPECT_FALSE((Membership{.voters = {1, 1}}).valid());
  EXPECT_FALSE((Membership{.voters = {1, 2}, .learners = {2}}).valid());
  EXPECT_FALSE((Membership{.voters = {0, 1}}).valid());
}

}  // namespace
}  // namespace sluice::raft::testing
