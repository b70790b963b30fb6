// RaftHost on simulated nodes: each node's host drives its groups on the node's scheduler and clock, and messages
// travel as the world's events (a few milliseconds each), so these tests exercise the driver (rounds, ticks, the
// Ready contract, proposals) without the transport.
#include "core/raft/host.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/core/raft/host_world.h"

namespace sluice::raft::testing {
namespace {

TEST(RaftHost, ElectsALeaderAndCommitsProposalsThatEveryNodeApplies) {
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId leader = w.agreed_leader(1);
  for (int i = 0; i < 20; ++i) {
    const Proposed p = w.propose_and_wait(leader, 1, "v" + std::to_string(i));
    ASSERT_EQ(p.outcome, ProposeOutcome::kCommitted) << i;
    EXPECT_EQ(w.applied(leader, 1).at(p.index - 1).entry.payload, "v" + std::to_string(i));
  }
  ASSERT_TRUE(w.run_until([&] {
    return w.applied(1, 1).size() == w.applied(leader, 1).size() && w.applied(2, 1).size() == w.applied(1, 1).size() &&
           w.applied(3, 1).size() == w.applied(1, 1).size();
  }));
  for (NodeId id = 1; id <= 3; ++id) {
    ASSERT_EQ(w.applied(id, 1).size(), w.applied(leader, 1).size());
    for (size_t i = 0; i < w.applied(id, 1).size(); ++i) {
      EXPECT_EQ(w.applied(id, 1)[i].index, i + 1);
      EXPECT_EQ(w.applied(id, 1)[i].entry, w.applied(leader, 1)[i].entry);
    }
  }
}

TEST(RaftHost, AFollowerAnswersNotLeaderNamingTheLeader) {
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId leader = w.agreed_leader(1);
  const NodeId follower = leader == 1 ? 2 : 1;
  const Proposed p = w.propose_and_wait(follower, 1, "x");
  EXPECT_EQ(p.outcome, ProposeOutcome::kNotLeader);
  EXPECT_EQ(p.leader, leader);
}

// A thousand groups' heartbeats in one tick leave a node as one batch per peer: batches grow with ticks, not groups.
TEST(RaftHost, HeartbeatsOfManyGroupsShareOneBatchPerPeerAndTick) {
  HostWorld w(3, 300);
  ASSERT_TRUE(w.run_until(
      [&] {
        for (GroupId g = 1; g <= 300; ++g) {
          if (w.agreed_leader(g) == kNoNode) return false;
        }
        return true;
      },
      60s));
  std::map<NodeId, HostStats> before;
  for (NodeId id = 1; id <= 3; ++id) before[id] = w.host(id)->stats();
  w.world().run_for(10s);  // idle: heartbeats only
  uint64_t batches = 0;
  uint64_t messages = 0;
  uint64_t ticks = 0;
  for (NodeId id = 1; id <= 3; ++id) {
    batches += w.host(id)->stats().batches_sent - before[id].batches_sent;
    messages += w.host(id)->stats().messages_sent - before[id].messages_sent;
    ticks += w.host(id)->stats().ticks - before[id].ticks;
  }
  std::printf("heartbeats of 300 groups over 10 s: %lu messages in %lu batches, %lu ticks\n", (unsigned long)messages, (unsigned long)batches, (unsigned long)ticks);
  // Each node sends heartbeats (as a leader) and answers (as a follower) to 2 peers per tick, in a round or two.
  EXPECT_LE(batches, ticks * 2 * 3) << "batches " << batches << " ticks " << ticks;
  EXPECT_GE(messages, batches * 50) << "messages " << messages << " batches " << batches;
}

TEST(RaftHost, ANewLeaderTakesOverAfterACrashAndCommittedEntriesSurvive) {
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId first = w.agreed_leader(1);
  std::vector<Index> committed;
  for (int i = 0; i < 5; ++i) {
    const Proposed p = w.propose_and_wait(first, 1, "a" + std::to_string(i));
    ASSERT_EQ(p.outcome, ProposeOutcome::kCommitted);
    committed.push_back(p.index);
  }
  w.crash(first, /*power_loss=*/true);
  ASSERT_TRUE(w.run_until([&] {
    const NodeId l = w.agreed_leader(1);
    return l != kNoNode && l != first;
  }));
  const NodeId second = w.agreed_leader(1);
  ASSERT_EQ(w.propose_and_wait(second, 1, "b").outcome, ProposeOutcome::kCommitted);
  w.boot(first);
  ASSERT_TRUE(w.run_until([&] { return w.host(first) != nullptr && w.applied(first, 1).size() >= 7; }));
  for (size_t i = 0; i < committed.size(); ++i) {
    EXPECT_EQ(w.applied(first, 1).at(committed[i] - 1).entry.payload, "a" + std::to_string(i));
    EXPECT_EQ(w.applied(second, 1).at(committed[i] - 1).entry.payload, "a" + std::to_string(i));
  }
}

TEST(RaftHost, ReplicatedGroupsCommitBeforeTheirLogsAreSyncedAndSyncPeriodically) {
  HostWorld w(3, 1, CommitMode::kReplicated);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId leader = w.agreed_leader(1);
  const uint64_t syncs = w.host(leader)->stats().log_syncs;
  ASSERT_EQ(w.propose_and_wait(leader, 1, "r").outcome, ProposeOutcome::kCommitted);
  ASSERT_TRUE(w.run_until([&] { return w.host(leader)->stats().log_syncs > syncs; }, 2s));
  EXPECT_EQ(w.host(leader)->status(1)->durable_index, w.host(leader)->status(1)->last_index);
}

TEST(RaftHost, AGroupWhoseDiskFailsGoesOfflineAndTheOthersElectWithoutIt) {
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId leader = w.agreed_leader(1);
  w.storage(leader, 1).fail = true;
  bool done = false;
  Proposed p;
  w.propose(leader, 1, "doomed", &p, &done);
  ASSERT_TRUE(w.run_until([&] { return !w.host(leader)->online(1); }));
  EXPECT_EQ(w.host(leader)->stats().groups_offline, 1u);
  const NodeId other = leader == 1 ? 2 : 1;
  ASSERT_TRUE(w.run_until([&] {
    const auto s = w.host(other)->status(1);
    return s->leader != kNoNode && s->leader != leader;
  }));
  ASSERT_TRUE(w.run_until([&] { return done; }));
  EXPECT_NE(p.outcome, ProposeOutcome::kCommitted);
}

TEST(RaftHost, ProposalsOfADeposedLeaderAreLostOrUnknownNeverCommittedTwice) {
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId leader = w.agreed_leader(1);
  for (NodeId id = 1; id <= 3; ++id) {
    if (id != leader) w.cut(leader, id);
  }
  bool done = false;
  Proposed p;
  w.propose(leader, 1, "isolated", &p, &done);
  ASSERT_TRUE(w.run_until([&] {
    const NodeId other = leader == 1 ? 2 : 1;
    const auto s = w.host(other)->status(1);
    return s->leader != kNoNode && s->leader != leader;
  }));
  const NodeId other = leader == 1 ? 2 : 1;
  const NodeId next = w.host(other)->status(1)->leader;
  ASSERT_EQ(w.propose_and_wait(next, 1, "majority").outcome, ProposeOutcome::kCommitted);
  w.heal();
  ASSERT_TRUE(w.run_until([&] { return done; }));
  EXPECT_TRUE(p.outcome == ProposeOutcome::kLost || p.outcome == ProposeOutcome::kUnknown)
      << propose_outcome_name(p.outcome);
  ASSERT_TRUE(w.run_until([&] { return w.applied(leader, 1).size() == w.applied(next, 1).size(); }));
  for (const Applied& a : w.applied(leader, 1)) EXPECT_NE(a.entry.payload, "isolated");
}

}  // namespace
}  // namespace sluice::raft::testing
