// The log start (issue 22, step 6): a leader whose log dropped a committed prefix (retention, DeleteRecords) sends a
// follower that needs it from its first entry kept, anchored on that entry; a follower that does not hold it
// discards its log and starts at the leader's log start (raft's InstallSnapshot of an empty snapshot, Kafka's
// truncateFullyAndStartAt). Followers move their own start to the leader's low watermark, never past their commit
// index, and a restarted node counts its dropped prefix as committed.
#include <gtest/gtest.h>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {
namespace {

ClusterConfig three() {
  ClusterConfig config;
  config.voters = 3;
  config.options.check_quorum = true;
  return config;
}

// Node 1 leads, commits `entries` proposals that node 3 never sees, and drops its log up to its commit index.
void leader_drops_what_node3_lacks(RaftTestCluster& c, int entries) {
  ASSERT_TRUE(c.elect(1));
  c.tick(1);  // the no-op's commit reaches everyone
  c.deliver_all();
  c.isolate(3);
  for (int i = 0; i < entries; ++i) c.propose(1, "e" + std::to_string(i));
  c.deliver_all();
  const Index commit = c.raft(1).commit_index();
  ASSERT_EQ(commit, c.node(1).log.last_index());
  c.node(1).log.advance_start(commit - 1);  // retention on the leader: all but its last entry
  ASSERT_EQ(c.node(1).log.log_start(), commit - 1);
}

TEST(RaftLogStart, AFollowerBelowTheLeadersLogStartResetsToItAndCatchesUp) {
  RaftTestCluster c(three());
  leader_drops_what_node3_lacks(c, 5);
  const Index start = c.node(1).log.log_start();
  c.heal();
  c.propose(1, "after");
  c.tick(1, 3);
  c.deliver_all();
  c.tick(1, 3);
  c.deliver_all();
  MemoryRaftLog& lagging = c.node(3).log;
  EXPECT_EQ(lagging.log_start(), start) << "it starts where the leader's log starts";
  EXPECT_EQ(lagging.last_index(), c.node(1).log.last_index());
  EXPECT_EQ(lagging.entries(), c.node(1).log.entries());
  EXPECT_EQ(lagging.term_at(start), c.node(1).log.term_at(start));
  EXPECT_EQ(c.raft(3).commit_index(), c.raft(1).commit_index());
  // The follower that kept up moved its start to the leader's too (carried by appends and heartbeats).
  EXPECT_EQ(c.node(2).log.log_start(), start);
  for (const FollowerStatus& f : c.raft(1).status().followers) EXPECT_EQ(f.log_start, start) << f.id;
}

TEST(RaftLogStart, AFollowerHoldingTheFirstEntryKeptIsAnchoredThereNotReset) {
  RaftTestCluster c(three());
  ASSERT_TRUE(c.elect(1));
  for (int i = 0; i < 4; ++i) c.propose(1, "e" + std::to_string(i));
  c.deliver_all();  // node 3 holds entries 1..5; its commit index lags the leader's
  const Index last = c.node(1).log.last_index();
  ASSERT_EQ(c.node(3).log.last_index(), last);
  const Index follower_commit = c.raft(3).commit_index();
  ASSERT_LT(follower_commit, 3u);
  // The leader's retention drops indexes 1..3; an append from its log start carries prev = 3 with a term that only
  // bounds the truth (here a wrong one).
  ASSERT_GE(c.raft(1).commit_index(), 3u);
  c.node(1).log.advance_start(3);
  ASSERT_EQ(c.node(1).log.log_start(), 3u);
  const Term term_at_start = c.node(1).log.term_at(3);
  Message m{.type = MessageType::kAppend,
            .from = 1,
            .to = 3,
            .term = c.raft(1).term(),
            .log_index = 3,
            .log_term = c.raft(1).term() + 5,
            .commit = last,
            .log_start = 3,
            .from_log_start = true};
  m.entries = c.node(1).log.read(4, 10, 1 << 20);
  c.raft(3).step(m);
  c.process(3);
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries()) << "it took the leader's log start";
  EXPECT_EQ(c.node(3).log.term_at(3), term_at_start) << "not reset to the bound the append carried";
  EXPECT_EQ(c.node(3).log.last_index(), last);
  EXPECT_EQ(c.raft(3).commit_index(), last);
  const std::vector<Message> answers = c.take_if([](const Message& a) {
    return a.type == MessageType::kAppendResponse && a.from == 3;
  });
  ASSERT_FALSE(answers.empty());
  EXPECT_FALSE(answers.back().reject);
  EXPECT_EQ(answers.back().hint_index, last);
}

TEST(RaftLogStart, AFollowersStartNeverPassesItsCommitIndex) {
  RaftTestCluster c(three());
  ASSERT_TRUE(c.elect(1));
  for (int i = 0; i < 4; ++i) c.propose(1, "e" + std::to_string(i));
  c.deliver_all();
  const Index follower_commit = c.raft(2).commit_index();
  ASSERT_LT(follower_commit, c.raft(1).commit_index());
  // A heartbeat that claims a later low watermark but carries only a smaller commit (the follower's match bounds
  // it): the follower moves its start only as far as what it knows is committed.
  Message hb{.type = MessageType::kHeartbeat,
             .from = 1,
             .to = 2,
             .term = c.raft(1).term(),
             .commit = follower_commit + 1,
             .log_start = c.raft(1).commit_index()};
  c.raft(2).step(hb);
  c.process(2);
  EXPECT_LE(c.node(2).log.log_start(), c.raft(2).commit_index());
  EXPECT_EQ(c.raft(2).commit_index(), follower_commit + 1);
}

TEST(RaftLogStart, ARestartedNodeCountsItsDroppedPrefixAsCommitted) {
  RaftTestCluster c(three());
  leader_drops_what_node3_lacks(c, 3);
  c.heal();
  c.tick(1, 3);
  c.deliver_all();
  const Index start = c.node(1).log.log_start();
  const Index last = c.node(1).log.last_index();
  c.crash(1, /*power_loss=*/false);
  c.restart(1);
  EXPECT_EQ(c.raft(1).commit_index(), start) << "what the log dropped was committed";
  std::optional<NodeId> leader;
  for (int i = 0; i < 100 && !leader; ++i) {
    c.tick_all();
    c.deliver_all();
    leader = c.leader();
  }
  ASSERT_TRUE(leader.has_value());
  c.propose(*leader, "new");
  c.deliver_all();
  c.tick(*leader, 3);  // heartbeats carry the commit index
  c.deliver_all();
  for (NodeId id : c.ids()) {
    EXPECT_GT(c.node(id).log.last_index(), last) << id;
    EXPECT_EQ(c.node(id).log.last_index(), c.node(*leader).log.last_index()) << id;
    EXPECT_EQ(c.raft(id).commit_index(), c.raft(*leader).commit_index()) << id;
  }
}

TEST(RaftLogStart, AnEmptyLogAnswersTheTermOfItsStartForElections) {
  MemoryRaftLog log;
  const Entry entries[] = {Entry{.term = 2, .count = 1, .payload = "a"}, Entry{.term = 3, .count = 2, .payload = "b"}};
  log.append(1, entries);
  log.sync();
  log.advance_start(3);
  EXPECT_EQ(log.log_start(), 3u);
  EXPECT_EQ(log.last_index(), 3u);
  EXPECT_EQ(log.term_at(3), 3u) << "the last term of an empty log is its start's";
  log.reset_to(7, 4);
  EXPECT_EQ(log.log_start(), 7u);
  EXPECT_EQ(log.last_index(), 7u);
  EXPECT_EQ(log.durable_index(), 7u);
  EXPECT_EQ(log.term_at(7), 4u);
  log.power_loss();
  EXPECT_EQ(log.log_start(), 7u) << "a reset is durable";
}

}  // namespace
}  // namespace sluice::raft::testing
