// Forwarded proposals (kPropose, etcd's MsgProp): a follower hands an entry to the leader it knows, the leader
// appends it as its own, and any node that does not lead drops it without touching its term.
#include <gtest/gtest.h>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {
namespace {

ClusterConfig three() {
  ClusterConfig config;
  config.voters = 3;
  return config;
}

TEST(RaftForward, AFollowersProposalIsAppendedByTheLeaderAndCommitsEverywhere) {
  RaftTestCluster c(three());
  ASSERT_TRUE(c.elect(1));
  EXPECT_EQ(c.raft(2).leader(), 1u);
  EXPECT_EQ(c.raft(2).forward("from-2", 3), 1u);
  c.process(2);
  c.deliver_all();
  c.tick(1);  // a heartbeat carries the commit index
  c.deliver_all();
  // The leader's no-op at 1, then the forwarded entry at [2, 4] in the leader's term.
  const std::vector<Entry> entries = c.node(1).log.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].payload, "from-2");
  EXPECT_EQ(entries[1].count, 3u);
  EXPECT_EQ(entries[1].term, c.raft(1).term());
  for (NodeId id : c.ids()) {
    EXPECT_EQ(c.node(id).log.entries(), entries) << id;
    EXPECT_EQ(c.raft(id).commit_index(), 4u) << id;
  }
}

TEST(RaftForward, NothingIsForwardedByTheLeaderOrWithoutAKnownLeader) {
  RaftTestCluster c(three());
  EXPECT_EQ(c.raft(2).forward("nobody leads"), kNoNode);
  c.process(2);
  EXPECT_TRUE(c.network().empty());
  ASSERT_TRUE(c.elect(1));
  EXPECT_EQ(c.raft(1).forward("the leader proposes instead"), kNoNode);
  c.process(1);
  EXPECT_TRUE(c.network().empty());
}

// A follower with a stale view forwards to a node that no longer leads: dropped there, and its (newer) term moves
// nobody. The proposer's retry at the real leader is what gets it in.
TEST(RaftForward, ANodeThatDoesNotLeadDropsAForwardedProposalAndKeepsItsTerm) {
  ClusterConfig config = three();
  config.options.check_quorum = false;  // no leases: node 3 votes for node 2 at once
  RaftTestCluster c(config);
  ASSERT_TRUE(c.elect(1));
  c.isolate(1);
  ASSERT_TRUE(c.elect(2));  // node 3 votes; node 1 still believes it leads the old term
  c.heal();
  ASSERT_EQ(c.raft(3).leader(), 2u);
  const Term old_term = c.raft(1).term();
  ASSERT_LT(old_term, c.raft(3).term());
  // Node 3 forwards with its newer term to node 1, as if it still thought node 1 led.
  Message stale{.type = MessageType::kPropose, .from = 3, .to = 1, .term = c.raft(3).term()};
  stale.entries.push_back(Entry{.term = 0, .count = 1, .payload = "lost"});
  const Index before = c.node(1).log.last_index();
  c.raft(1).step(stale);
  EXPECT_EQ(c.raft(1).term(), old_term) << "a forwarded proposal must not raise the term";
  EXPECT_EQ(c.raft(1).role(), Role::kLeader) << "nor depose a leader (the heartbeats' answers do that)";
  // Node 1 still leads its old term: it appends (harmlessly: the new leader's log overwrites it). A node that does
  // not lead drops it.
  EXPECT_EQ(c.node(1).log.last_index(), before + 1);
  c.process(1);
  c.deliver_all();
  EXPECT_NE(c.raft(1).role(), Role::kLeader);
  const Index follower_last = c.node(3).log.last_index();
  stale.to = 3;
  stale.from = 1;
  c.raft(3).step(stale);
  EXPECT_EQ(c.node(3).log.last_index(), follower_last);
  // Forwarded to the new leader, it commits.
  ASSERT_EQ(c.raft(3).forward("kept"), 2u);
  c.process(3);
  c.deliver_all();
  for (int i = 0; i < 5; ++i) {
    c.tick(2);
    c.deliver_all();
  }
  const std::vector<Entry> entries = c.node(2).log.entries();
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.back().payload, "kept");
  EXPECT_EQ(c.raft(3).commit_index(), c.node(2).log.last_index());
  for (const Entry& e : c.node(1).log.entries()) EXPECT_NE(e.payload, "lost");
}

}  // namespace
}  // namespace sluice::raft::testing
