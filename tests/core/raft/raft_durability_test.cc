// The durability rules: hard state synced before any answer, `persisted` counts only durable entries, a node that
// lost an unsynced suffix was never counted for it, and a restarted follower's old match index is forgotten.
#include <gtest/gtest.h>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {
namespace {

ClusterConfig config_of(CommitMode mode, MutationSet mutations = {}) {
  ClusterConfig config;
  config.voters = 3;
  config.options.commit_mode = mode;
  config.options.mutations = mutations;
  return config;
}

TEST(RaftDurability, VoteIsAnsweredOnlyAfterItsHardStateIsPersisted) {
  ClusterConfig config = config_of(CommitMode::kPersisted);
  config.options.pre_vote = false;
  RaftTestCluster c(config);
  c.raft(1).campaign();
  c.process(1);
  std::vector<Message> requests = c.take_if([](const Message& m) { return m.to == 2; });
  ASSERT_EQ(requests.size(), 1u);
  Raft& voter = c.raft(2);
  voter.step(requests[0]);
  Ready ready = voter.take_ready();
  ASSERT_TRUE(ready.hard_state.has_value());
  EXPECT_EQ(ready.hard_state->term, 1u);
  EXPECT_EQ(ready.hard_state->voted_for, 1u);
  EXPECT_TRUE(ready.messages.empty()) << "the grant waits for the vote to be on disk";
  EXPECT_TRUE(voter.take_ready().messages.empty());
  voter.on_hard_state_persisted(ready.hard_state_version);
  Ready after = voter.take_ready();
  ASSERT_EQ(after.messages.size(), 1u);
  EXPECT_EQ(after.messages[0].type, MessageType::kVoteResponse);
  EXPECT_FALSE(after.messages[0].reject);
}

TEST(RaftDurability, NothingLeavesARestartedNodeBeforeItsIncarnationIsPersisted) {
  MemoryRaftLog log;
  Random random(7);
  Options options;
  options.id = 1;
  Raft raft(options, Membership{.voters = {1, 2, 3}}, log, HardState{.term = 4, .voted_for = 2, .incarnation = 9},
            random);
  EXPECT_EQ(raft.hard_state().incarnation, 10u);
  raft.campaign();
  Ready ready = raft.take_ready();
  EXPECT_TRUE(ready.messages.empty());
  ASSERT_TRUE(ready.hard_state.has_value());
  raft.on_hard_state_persisted(ready.hard_state_version);
  EXPECT_EQ(raft.take_ready().messages.size(), 2u);  // the pre-votes
}

TEST(RaftDurability, PersistedCommitWaitsForFollowerSyncs) {
  RaftTestCluster c(config_of(CommitMode::kPersisted));
  ASSERT_TRUE(c.elect(1));
  c.node(2).auto_sync = false;
  c.node(3).auto_sync = false;
  const Index index = c.propose(1, "a");
  c.deliver_all();
  EXPECT_EQ(c.node(2).log.last_index(), index);
  EXPECT_LT(c.raft(1).commit_index(), index) << "the leader alone has it durable";
  c.sync(2);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), index);
}

TEST(RaftDurability, ReplicatedCommitDoesNotWaitForSyncs) {
  RaftTestCluster c(config_of(CommitMode::kReplicated));
  ASSERT_TRUE(c.elect(1));
  for (NodeId id : c.ids()) c.node(id).auto_sync = false;
  const Index index = c.propose(1, "a");
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), index);
}

TEST(RaftDurability, LeaderCountsItselfOnlyAtItsDurableIndex) {
  RaftTestCluster c(config_of(CommitMode::kPersisted));
  ASSERT_TRUE(c.elect(1));
  c.node(1).auto_sync = false;
  c.node(3).auto_sync = false;
  const Index index = c.propose(1, "a");
  c.deliver_all();
  EXPECT_LT(c.raft(1).commit_index(), index) << "only 2 has it durable";
  c.sync(1);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), index);
}

// A follower that lost an unsynced suffix in a power loss never acknowledged it, so it was never counted; the entry
// commits only once a majority holds it durably, and is then on the restarted node too.
TEST(RaftDurability, NodeThatLostAnUnsyncedSuffixWasNeverCountedForIt) {
  RaftTestCluster c(config_of(CommitMode::kPersisted));
  ASSERT_TRUE(c.elect(1));
  c.node(1).auto_sync = false;
  c.node(2).auto_sync = false;
  c.node(3).auto_sync = false;
  const Index index = c.propose(1, "a");
  c.deliver_all();
  EXPECT_EQ(c.node(2).log.last_index(), index);
  c.crash(2, /*power_loss=*/true);
  EXPECT_LT(c.node(2).log.last_index(), index);
  EXPECT_LT(c.raft(1).commit_index(), index);
  c.restart(2);
  c.node(2).auto_sync = true;
  c.tick(1);
  c.deliver_all();
  EXPECT_LT(c.raft(1).commit_index(), index) << "2 has it durable now, but 1 does not";
  c.sync(1);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), index);
  EXPECT_EQ(c.node(2).log.durable_entries().size(), index);
}

TEST(RaftDurability, AckBeforeSyncMutationCountsEntriesAPowerLossThenTakes) {
  MutationSet mutations;
  mutations.add(Mutation::kRaftAckBeforeSync);
  RaftTestCluster c(config_of(CommitMode::kPersisted, mutations));
  ASSERT_TRUE(c.elect(1));
  c.node(2).auto_sync = false;
  c.node(3).auto_sync = false;
  const Index index = c.propose(1, "a");
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), index) << "committed on acknowledgements of unsynced entries";
  c.crash(2, true);
  c.crash(3, true);
  EXPECT_LT(c.node(2).log.last_index(), index);
  EXPECT_LT(c.node(3).log.last_index(), index) << "a majority lost a committed entry";
}

// In `replicated` mode a follower's acknowledgement may cover entries a power loss takes; once the leader hears
// from the restarted incarnation it forgets that match index and probes again.
TEST(RaftDurability, RestartedFollowersMatchIndexIsForgotten) {
  RaftTestCluster c(config_of(CommitMode::kReplicated));
  ASSERT_TRUE(c.elect(1));
  c.node(3).auto_sync = false;
  c.propose(1, "a");
  c.propose(1, "b");
  c.deliver_all();
  auto match_of_3 = [&c] {
    for (const FollowerStatus& f : c.raft(1).status().followers) {
      if (f.id == 3) return f.match;
    }
    return Index{0};
  };
  EXPECT_EQ(match_of_3(), 3u);
  c.crash(3, true);
  c.restart(3);
  c.tick(1);  // heartbeat; 3 answers from its new incarnation
  c.deliver_all([](const Message& m) { return m.type == MessageType::kAppend; });
  EXPECT_EQ(match_of_3(), 0u);
  c.tick(1);
  c.deliver_all();
  EXPECT_EQ(match_of_3(), 3u);
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries());
}

TEST(RaftDurability, LogAheadOfTheSyncedTermRefusesToVoteInThatTerm) {
  MemoryRaftLog log;
  const Entry entry{.term = 5, .payload = "written before the term was synced"};
  log.append(1, std::span<const Entry>(&entry, 1));
  Random random(3);
  Options options;
  options.id = 2;
  Raft raft(options, Membership{.voters = {1, 2, 3}}, log, HardState{.term = 4, .voted_for = kNoNode}, random);
  EXPECT_EQ(raft.term(), 5u);
  EXPECT_EQ(raft.hard_state().voted_for, 2u);
  raft.on_hard_state_persisted(raft.take_ready().hard_state_version);
  Message vote{.type = MessageType::kVote, .from = 3, .to = 2, .term = 5, .log_index = 1, .log_term = 5};
  raft.step(vote);
  Ready ready = raft.take_ready();
  ASSERT_EQ(ready.messages.size(), 1u);
  EXPECT_TRUE(ready.messages[0].reject);
}

}  // namespace
}  // namespace sluice::raft::testing
