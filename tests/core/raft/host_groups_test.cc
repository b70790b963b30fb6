// RaftHost's groups while it runs (add_group and remove_group after start: the partition layer adds a group per
// replica the metadata assigns to the node) and forward (a proposal handed to whichever node leads).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/raft/host.h"
#include "tests/core/raft/host_world.h"

namespace sluice::raft::testing {
namespace {

Membership three() { return Membership{.voters = {1, 2, 3}}; }

size_t count_applied(HostWorld& w, NodeId id, GroupId g, const std::string& payload) {
  const std::vector<Applied>& applied = w.applied(id, g);
  return static_cast<size_t>(
      std::count_if(applied.begin(), applied.end(), [&](const Applied& a) { return a.entry.payload == payload; }));
}

TEST(RaftHostGroups, AGroupAddedToARunningHostElectsCommitsAndIsApplied) {
  MemoryGroupStorage storage[3];  // outlives the world's hosts
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  for (NodeId id = 1; id <= 3; ++id) {
    ASSERT_EQ(w.host(id)->groups(), std::vector<GroupId>{1});
    w.host(id)->add_group(2, three(), storage[id - 1]);
    EXPECT_EQ(w.host(id)->groups(), (std::vector<GroupId>{1, 2}));
  }
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(2) != kNoNode; }));
  const NodeId leader = w.agreed_leader(2);
  const Proposed p = w.propose_and_wait(leader, 2, "second group");
  ASSERT_EQ(p.outcome, ProposeOutcome::kCommitted);
  ASSERT_TRUE(w.run_until([&] {
    for (NodeId id = 1; id <= 3; ++id) {
      if (count_applied(w, id, 2, "second group") != 1) return false;
    }
    return true;
  }));
  // Its first Ready persisted the raised incarnation, as a group's at start does.
  for (NodeId id = 1; id <= 3; ++id) EXPECT_EQ(storage[id - 1].hard_state().incarnation, 1u);
  // The first group went on meanwhile.
  EXPECT_EQ(w.propose_and_wait(w.agreed_leader(1), 1, "first group").outcome, ProposeOutcome::kCommitted);
}

TEST(RaftHostGroups, ARemovedGroupSettlesItsWaitersAndIsForgottenThenComesBackFromItsStorage) {
  HostWorld w(3, 2);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(2) != kNoNode; }));
  const NodeId leader = w.agreed_leader(2);
  for (NodeId id = 1; id <= 3; ++id) {
    if (id != leader) w.cut(leader, id);
  }
  // A proposal that cannot commit while its leader is cut off waits...
  Proposed hung;
  bool hung_done = false;
  w.propose(leader, 2, "never committed here", &hung, &hung_done);
  w.world().run_for(300ms);
  ASSERT_FALSE(hung_done);
  // ...until its group is removed: then its fate is unknown.
  ASSERT_TRUE(w.on_fiber(leader, [&] { w.host(leader)->remove_group(2); }));
  ASSERT_TRUE(w.run_until([&] { return hung_done; }, 1s));
  EXPECT_EQ(hung.outcome, ProposeOutcome::kUnknown);
  EXPECT_EQ(w.host(leader)->groups(), std::vector<GroupId>{1});
  EXPECT_FALSE(w.host(leader)->status(2).has_value());
  EXPECT_EQ(w.propose_and_wait(leader, 2, "gone").outcome, ProposeOutcome::kNotLeader);
  const uint64_t unknown_before = w.host(leader)->stats().messages_unknown_group;
  w.heal();
  ASSERT_TRUE(w.run_until([&] { return w.host(leader)->stats().messages_unknown_group > unknown_before; }));
  // Added back over the same storage, it rejoins with its log and hard state.
  w.host(leader)->add_group(2, three(), w.storage(leader, 2));
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(2) != kNoNode; }));
  const Proposed p = w.propose_and_wait(w.agreed_leader(2), 2, "after");
  ASSERT_EQ(p.outcome, ProposeOutcome::kCommitted);
  ASSERT_TRUE(w.run_until([&] { return count_applied(w, leader, 2, "after") == 1; }));
}

TEST(RaftHostGroups, RemovingAGroupOfAStoppedHostForgetsItAtOnce) {
  HostWorld w(1, 2);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  ASSERT_TRUE(w.on_fiber(1, [&] {
    w.host(1)->stop();
    w.host(1)->remove_group(1);  // waits for the driver to end, then erases
    EXPECT_EQ(w.host(1)->groups(), std::vector<GroupId>{2});
  }));
}

TEST(RaftHostGroups, ForwardedEntriesReachTheLeaderFromAnyNodeAndApplyOnce) {
  HostWorld w(3, 1);
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  const NodeId leader = w.agreed_leader(1);
  for (NodeId id = 1; id <= 3; ++id) w.host(id)->forward(1, "from " + std::to_string(id));
  ASSERT_TRUE(w.run_until([&] {
    for (NodeId on = 1; on <= 3; ++on) {
      for (NodeId from = 1; from <= 3; ++from) {
        if (count_applied(w, on, 1, "from " + std::to_string(from)) != 1) return false;
      }
    }
    return true;
  }));
  // Every node applied the same log.
  for (NodeId id = 1; id <= 3; ++id) {
    ASSERT_EQ(w.applied(id, 1).size(), w.applied(leader, 1).size());
    for (size_t i = 0; i < w.applied(id, 1).size(); ++i)
      EXPECT_EQ(w.applied(id, 1)[i].entry, w.applied(leader, 1)[i].entry);
  }
  // Nobody to forward to: dropped, never applied.
  for (NodeId id = 1; id <= 3; ++id) {
    if (id != leader) w.cut(leader, id);
  }
  const NodeId follower = leader == 1 ? 2 : 1;
  w.world().run_for(5s);  // the leader steps down (check quorum); the followers elect among themselves or not
  w.heal();
  ASSERT_TRUE(w.run_until([&] { return w.agreed_leader(1) != kNoNode; }));
  w.host(follower)->forward(1, "late");
  ASSERT_TRUE(w.run_until([&] { return count_applied(w, follower, 1, "late") == 1; }));
}

}  // namespace
}  // namespace sluice::raft::testing
