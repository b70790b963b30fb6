// Log replication on a direct in-memory transport: commit, log matching, truncation of a divergent follower, the
// figure-8 commit rule, the in-flight window, heartbeats carrying the commit index, lost appends.
#include <gtest/gtest.h>

#include <functional>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {
namespace {

ClusterConfig config_of(size_t voters, bool check_quorum = true) {
  ClusterConfig config;
  config.voters = voters;
  config.options.check_quorum = check_quorum;
  return config;
}

// Campaigns until `id` wins (a first try can fail only by learning a higher term).
bool elect_until(RaftTestCluster& c, NodeId id, int tries = 4) {
  for (int i = 0; i < tries; ++i) {
    if (c.elect(id)) return true;
  }
  return false;
}

bool carries_index(const Message& m, Index index) {
  return m.type == MessageType::kAppend && !m.entries.empty() && m.log_index < index &&
         m.log_index + span_of(m.entries) >= index;
}

TEST(RaftReplication, ReplicatesAndCommitsOnEveryNode) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.propose(1, "e" + std::to_string(i)), static_cast<Index>(i + 2));
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 6u);
  c.tick(1);  // a heartbeat carries the commit index to the followers
  c.deliver_all();
  for (NodeId id : c.ids()) {
    EXPECT_EQ(c.node(id).log.entries(), c.node(1).log.entries()) << id;
    EXPECT_EQ(c.raft(id).commit_index(), 6u) << id;
  }
  const GroupStatus status = c.raft(1).status();
  ASSERT_EQ(status.followers.size(), 2u);
  for (const FollowerStatus& f : status.followers) {
    EXPECT_EQ(f.match, 6u);
    EXPECT_EQ(f.lag, 0u);
    EXPECT_EQ(f.state, ProgressState::kReplicate);
  }
}

TEST(RaftReplication, FollowerCutOffCatchesUpAfterTheHeal) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.cut(1, 3);
  for (int i = 0; i < 4; ++i) c.propose(1, "a" + std::to_string(i));
  c.deliver_all();
  c.heal();
  c.propose(1, "after");
  auto watch = [](const Message&) { return false; };
  for (int i = 0; i < 3; ++i) {
    c.deliver_all(watch);
    c.tick(1);
  }
  c.deliver_all(watch);
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries());
}

TEST(RaftReplication, DivergentFollowerIsTruncatedToTheLeadersLog) {
  RaftTestCluster c(config_of(3, /*check_quorum=*/false));
  ASSERT_TRUE(c.elect(1));
  c.isolate(1);
  c.propose(1, "lost-1");  // never leave node 1: uncommitted
  c.propose(1, "lost-2");
  c.propose(1, "lost-3");
  ASSERT_TRUE(elect_until(c, 2));
  c.propose(2, "kept-1");
  c.deliver_all();
  EXPECT_EQ(c.raft(2).commit_index(), 3u);
  c.heal();
  c.tick(2);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).role(), Role::kFollower);
  EXPECT_EQ(c.node(1).log.entries(), c.node(2).log.entries());
  for (const Entry& e : c.node(1).log.entries()) EXPECT_EQ(e.payload.rfind("lost", 0), std::string::npos);
}

// The Raft paper's figure 8: an entry of an earlier term stored on a majority can still be overwritten, so a leader
// must not commit it by counting replicas; it commits only beneath an entry of its own term. Runs up to the point
// where node 5, whose log lacks the entry x (index 2, covering `count` indexes, term 1), has won an election again
// (its appends not yet delivered). With spans, x covers [2, 1 + count] and the later no-ops sit above it.
struct Figure8 {
  explicit Figure8(MutationSet mutations, Index count = 1) : c(make_config(mutations)), count(count) {}
  static ClusterConfig make_config(MutationSet mutations) {
    ClusterConfig config = config_of(5, /*check_quorum=*/false);
    config.options.max_entries_per_append = 1;
    config.options.mutations = mutations;
    return config;
  }
  void campaign_until_leader(NodeId id, const std::function<bool(const Message&)>& drop) {
    for (int i = 0; i < 4 && c.raft(id).role() != Role::kLeader; ++i) {
      c.raft(id).campaign();
      c.process(id);
      c.deliver_all(drop);
    }
    ASSERT_EQ(c.raft(id).role(), Role::kLeader);
  }
  Index x_last() const { return 1 + count; }
  void run() {
    ASSERT_TRUE(c.elect(1));  // index 1: term-1 no-op, committed
    c.tick(1);
    c.deliver_all();
    for (NodeId id : {3, 4, 5}) c.cut(1, id);
    ASSERT_EQ(c.propose(1, "x", count), 2u);  // [2, 1 + count], term 1: only on 1 and 2
    c.deliver_all();
    c.crash(1, false);
    c.heal();
    // 5 wins with 3 and 4 (2 refuses: its log is longer) and writes its no-op at index 2 for itself alone.
    campaign_until_leader(5, [](const Message& m) { return m.from == 5 && m.type == MessageType::kAppend; });
    c.crash(5, false);
    c.restart(1);
    // 1 wins a later term and copies x (term 1) to 3 and 4; its own no-op (above x) reaches nobody.
    campaign_until_leader(1, [this](const Message& m) {
      return carries_index(m, x_last() + 1) && c.node(m.to).log.last_index() >= x_last();
    });
    for (NodeId id : {2, 3, 4}) {
      ASSERT_EQ(c.node(id).log.term_at(x_last()), 1u) << id;
      ASSERT_EQ(c.node(id).log.entry_start(x_last()), 2u) << id;
    }
    commit_seen = c.raft(1).commit_index();
    c.crash(1, false);
    c.restart(5);
    campaign_until_leader(5, [](const Message& m) { return m.from == 5 && m.type == MessageType::kAppend; });
  }
  RaftTestCluster c;
  Index count = 1;
  Index commit_seen = 0;
};

void expect_figure8_rule_holds(Index count) {
  Figure8 f{MutationSet(), count};
  ASSERT_NO_FATAL_FAILURE(f.run());
  EXPECT_LT(f.commit_seen, 2u) << "x (term 1) is on a majority but must not commit in term 3";
  // And rightly so: 5 is a legal leader and overwrites it, whatever its span.
  for (int i = 0; i < 5; ++i) {
    f.c.tick(5);
    f.c.deliver_all();
  }
  for (NodeId id : {2, 3, 4}) {
    EXPECT_EQ(f.c.node(id).log.term_at(2), 2u) << id;
    EXPECT_EQ(f.c.node(id).log.entries(), f.c.node(5).log.entries()) << id;
  }
}

void expect_figure8_mutation_breaks_it(Index count) {
  MutationSet mutations;
  mutations.add(Mutation::kRaftCommitOldTermByCount);
  Figure8 f{mutations, count};
  ASSERT_NO_FATAL_FAILURE(f.run());
  EXPECT_EQ(f.commit_seen, f.x_last()) << "the whole of x, and not a part of it";
  EXPECT_NE(f.c.node(5).log.term_at(2), 1u) << "leader 5 lacks a committed entry: the violation the rule prevents";
}

TEST(RaftReplication, Figure8EntryOfAnEarlierTermIsNotCommittedByCounting) { expect_figure8_rule_holds(1); }

TEST(RaftReplication, Figure8MutationCommitsAnEntryALegalLeaderLacks) { expect_figure8_mutation_breaks_it(1); }

TEST(RaftReplication, Figure8WithSpansEntryOfAnEarlierTermIsNotCommittedByCounting) {
  expect_figure8_rule_holds(7);
}

TEST(RaftReplication, Figure8WithSpansMutationCommitsAnEntryALegalLeaderLacks) {
  expect_figure8_mutation_breaks_it(7);
}

TEST(RaftReplication, AppendsArePipelinedWithinTheWindow) {
  ClusterConfig config = config_of(3);
  config.options.max_inflight_appends = 2;
  config.options.max_entries_per_append = 1;
  RaftTestCluster c(config);
  ASSERT_TRUE(c.elect(1));
  for (int i = 0; i < 10; ++i) c.propose(1, "p" + std::to_string(i));
  size_t to_2 = 0;
  for (const Message& m : c.network()) to_2 += m.to == 2 && m.type == MessageType::kAppend ? 1 : 0;
  EXPECT_EQ(to_2, 2u) << "two appends in flight, the rest wait for answers";
  for (const FollowerStatus& f : c.raft(1).status().followers) EXPECT_EQ(f.inflight, 2u);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 11u);
  EXPECT_EQ(c.node(2).log.entries(), c.node(1).log.entries());
}

// Node 1 leads and has committed "a" (index 2); the followers hold it, not yet knowing it committed.
void commit_a_past_the_followers(RaftTestCluster& c) {
  ASSERT_TRUE(c.elect(1));
  c.propose(1, "a");
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 2u);
  EXPECT_EQ(c.raft(2).commit_index(), 1u) << "the append that brought a carried the old commit index";
  EXPECT_EQ(c.raft(3).commit_index(), 1u);
}

TEST(RaftReplication, HeartbeatsCarryTheCommitIndex) {
  RaftTestCluster c(config_of(3));
  commit_a_past_the_followers(c);
  c.tick(1);
  c.deliver_all();
  EXPECT_EQ(c.raft(2).commit_index(), 2u);
  EXPECT_EQ(c.raft(3).commit_index(), 2u);
}

// Found by cluster_five_nodes seed 934: a follower cut off long enough to campaign (a pre-vote, so its term stays)
// forgets how far its log matches the leader's, while the leader, idle, still counts it as caught up and sends no
// append. Its heartbeats' commit is then capped by that forgotten match: the follower's commit index, and every
// metadata record it applies, stalled for good (its Metadata answers named a leader that was gone).
TEST(RaftReplication, AFollowerBackFromACampaignLearnsTheCommitIndexFromAnIdleLeader) {
  RaftTestCluster c(config_of(3));
  commit_a_past_the_followers(c);
  c.isolate(3);
  for (int i = 0; i < 20 && c.raft(3).role() == Role::kFollower; ++i) {
    c.tick(3);
    c.deliver_all();
  }
  ASSERT_EQ(c.raft(3).role(), Role::kPreCandidate);
  ASSERT_EQ(c.raft(3).term(), c.raft(1).term()) << "a pre-vote leaves the term alone";
  c.heal();
  for (int i = 0; i < 4; ++i) {
    c.tick(1);
    c.deliver_all();
  }
  EXPECT_EQ(c.raft(3).role(), Role::kFollower);
  EXPECT_EQ(c.raft(3).commit_index(), 2u);
}

TEST(RaftReplication, LostAppendsAreResentAfterAHeartbeat) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  c.propose(1, "a");
  c.propose(1, "b");
  c.deliver_all([](const Message& m) { return m.type == MessageType::kAppend; });  // every append lost
  EXPECT_EQ(c.raft(1).commit_index(), 1u);
  for (int i = 0; i < 3; ++i) {
    c.tick(1);
    c.deliver_all();
  }
  EXPECT_EQ(c.raft(1).commit_index(), 3u);
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries());
}

TEST(RaftReplication, DuplicatedAndReorderedAppendsAreHarmless) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));
  for (int i = 0; i < 6; ++i) c.propose(1, "r" + std::to_string(i));
  std::vector<Message> appends = c.take_if([](const Message& m) { return m.type == MessageType::kAppend; });
  std::vector<Message> shuffled(appends.rbegin(), appends.rend());
  shuffled.insert(shuffled.end(), appends.begin(), appends.end());
  c.inject(shuffled);
  for (int i = 0; i < 3; ++i) {
    c.deliver_all();
    c.tick(1);
  }
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 7u);
  EXPECT_EQ(c.node(2).log.entries(), c.node(1).log.entries());
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries());
}

}  // namespace
}  // namespace sluice::raft::testing
