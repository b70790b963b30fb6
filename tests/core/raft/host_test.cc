// RaftHost on simulated nodes: each node's host drives its groups on the node's scheduler and clock, and messages
// travel as the world's events (a few milliseconds each), so these tests exercise the driver (rounds, ticks, the
// Ready contract, proposals) without the transport.
#include "core/raft/host.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/world/sim_cluster.h"

namespace sluice::raft {
namespace {

using namespace std::chrono_literals;

// A storage whose disk can be made to fail.
class FailingStorage final : public GroupStorage {
 public:
  explicit FailingStorage(MemoryGroupStorage& inner) : inner_(inner) {}
  RaftLog& log() override { return inner_.log(); }
  HardState hard_state() const override { return inner_.hard_state(); }
  Status store_hard_state(const HardState& state) override {
    if (fail) return Status(Code::kIoError, "injected");
    return inner_.store_hard_state(state);
  }
  Status sync_log() override {
    if (fail) return Status(Code::kIoError, "injected");
    return inner_.sync_log();
  }
  bool fail = false;

 private:
  MemoryGroupStorage& inner_;
};

struct Applied {
  Index index = 0;
  Entry entry;
};

class HostWorld {
 public:
  HostWorld(size_t nodes, size_t groups, CommitMode mode = CommitMode::kPersisted) : cluster_(7, LogLevel::kOff) {
    for (size_t i = 1; i <= nodes; ++i) membership_.voters.push_back(i);
    options_.raft.commit_mode = mode;
    for (size_t i = 0; i < nodes; ++i) {
      cluster_.add_node();
      auto state = std::make_unique<NodeState>();
      for (GroupId g = 1; g <= groups; ++g) {
        state->storage[g] = std::make_unique<MemoryGroupStorage>();
        state->failing[g] = std::make_unique<FailingStorage>(*state->storage[g]);
      }
      nodes_.push_back(std::move(state));
    }
    for (size_t i = 0; i < nodes; ++i) boot(i + 1);
  }

  // The nodes' fibers reference the node states: unwind them first.
  ~HostWorld() {
    for (NodeId id = 1; id <= nodes_.size(); ++id) {
      if (node(id).up()) node(id).crash();
    }
  }

  void boot(NodeId id) {
    SimNode& node = cluster_.node(id - 1);
    node.boot([this, id](Env env) { main(env, id); });
  }
  void crash(NodeId id, bool power_loss) {
    if (power_loss) {
      cluster_.node(id - 1).power_loss();
      for (auto& [g, storage] : nodes_[id - 1]->storage) storage->power_loss();
    } else {
      cluster_.node(id - 1).crash();
    }
  }

  RaftHost* host(NodeId id) { return nodes_[id - 1]->host; }
  SimWorld& world() { return cluster_.world(); }
  SimNode& node(NodeId id) { return cluster_.node(id - 1); }
  const std::vector<Applied>& applied(NodeId id, GroupId g) { return nodes_[id - 1]->applied[g]; }
  FailingStorage& storage(NodeId id, GroupId g) { return *nodes_[id - 1]->failing[g]; }
  void cut(NodeId a, NodeId b) { cut_.insert({std::min(a, b), std::max(a, b)}); }
  void heal() { cut_.clear(); }

  // The leader of `g` every live node agrees on, or kNoNode.
  NodeId agreed_leader(GroupId g) {
    NodeId leader = kNoNode;
    for (NodeId id = 1; id <= nodes_.size(); ++id) {
      if (host(id) == nullptr) continue;
      const NodeId seen = host(id)->status(g)->leader;
      if (seen == kNoNode || (leader != kNoNode && seen != leader)) return kNoNode;
      leader = seen;
    }
    return leader != kNoNode && host(leader) != nullptr ? leader : kNoNode;
  }
  bool run_until(const std::function<bool()>& done, Duration limit = 30s) {
    return world().run_until(done, world().now() + limit);
  }

  // Proposes from a fiber of node `id`; the outcome lands in *out.
  void propose(NodeId id, GroupId g, std::string payload, Proposed* out, bool* done) {
    node(id).scheduler().spawn("proposer", [this, id, g, payload, out, done] {
      *out = host(id)->propose(g, payload, node(id).clock().now() + 5s);
      *done = true;
    });
  }
  Proposed propose_and_wait(NodeId id, GroupId g, std::string payload) {
    Proposed result;
    bool done = false;
    propose(id, g, std::move(payload), &result, &done);
    EXPECT_TRUE(run_until([&] { return done; }));
    return result;
  }

  HostOptions options_;

 private:
  struct NodeState {
    std::map<GroupId, std::unique_ptr<MemoryGroupStorage>> storage;  // survives crashes
    std::map<GroupId, std::unique_ptr<FailingStorage>> failing;
    std::map<GroupId, std::vector<Applied>> applied;  // this boot's
    RaftHost* host = nullptr;
  };

  void main(Env env, NodeId id) {
    NodeState& state = *nodes_[id - 1];
    state.applied.clear();
    RaftHost host(
        env, id, options_, [this, id](NodeId to, std::vector<Envelope> batch) { deliver(id, to, std::move(batch)); },
        [&state](GroupId g, Index index, const Entry& entry) { state.applied[g].push_back({index, entry}); });
    for (auto& [g, storage] : state.failing) host.add_group(g, membership_, *storage);
    struct Forget {
      NodeState& state;
      ~Forget() { state.host = nullptr; }
    } forget{state};
    state.host = &host;
    host.start();
    Event forever(env.scheduler);
    forever.wait();
  }

  void deliver(NodeId from, NodeId to, std::vector<Envelope> batch) {
    if (cut_.contains({std::min(from, to), std::max(from, to)})) return;
    auto shared = std::make_shared<std::vector<Envelope>>(std::move(batch));
    world().schedule_after(3ms, static_cast<sluice::NodeId>(to), EventKind::kNetwork, [this, from, to, shared] {
      if (RaftHost* target = host(to)) target->receive(from, *shared);
    });
  }

  SimCluster cluster_;
  Membership membership_;
  std::vector<std::unique_ptr<NodeState>> nodes_;
  std::set<std::pair<NodeId, NodeId>> cut_;
};

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
}  // namespace sluice::raft
