// ClusterNode on simulated nodes: each node runs the real thing (its metadata group in files on the node's disk, a
// RaftTransport on the simulated network, a RaftHost), so these tests cover elections, forwarding, registration,
// crashes mid-proposal and replay after a restart end to end.
#include "core/cluster/cluster_node.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/assert.h"
#include "core/cluster/metadata/placement.h"
#include "core/cluster/metadata/topic_identity.h"
#include "core/protocol/error_codes.h"
#include "sim/world/sim_cluster.h"

namespace sluice::cluster {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kRaftPort = 9192;
constexpr uint16_t kKafkaPort = 9092;

struct Applied {
  metadata::Record record;
  ErrorCode outcome = ErrorCode::kNone;
  bool operator==(const Applied&) const = default;
};

class MetaCluster {
 public:
  // `retry_interval`: ClusterNodeOptions::retry_interval; shorter than a commit's round trip (a follower learns a
  // commit from the next heartbeat, a tick of 50 ms), it makes every forwarded proposal reach the log twice or more.
  explicit MetaCluster(size_t nodes, uint64_t seed = 11, Duration retry_interval = 300ms)
      : retry_interval_(retry_interval), cluster_(seed, LogLevel::kOff) {
    for (size_t i = 0; i < nodes; ++i) {
      cluster_.add_node();
      states_.push_back(std::make_unique<NodeState>());
    }
    for (raft::NodeId id = 1; id <= nodes; ++id) boot(id);
  }
  // The nodes' fibers reference the node states: unwind them first.
  ~MetaCluster() {
    for (size_t i = 0; i < cluster_.size(); ++i) {
      if (cluster_.node(i).up()) cluster_.node(i).crash();
    }
  }

  // Boots a node that is down, or whose main returned after a graceful stop (its SimNode is still up, idle).
  void boot(raft::NodeId id) {
    SLUICE_ASSERT(node(id) == nullptr);
    if (cluster_.node(id - 1).up()) cluster_.node(id - 1).crash();
    cluster_.node(id - 1).boot([this, id](Env env) { main(env, id); });
  }
  void crash(raft::NodeId id, bool power_loss) {
    if (power_loss) {
      cluster_.node(id - 1).power_loss();
    } else {
      cluster_.node(id - 1).crash();
    }
  }
  // A graceful stop: the node's main fiber stops the ClusterNode and returns.
  void stop(raft::NodeId id) { states_[id - 1]->stop->set(); }

  size_t size() const { return states_.size(); }
  ClusterNode* node(raft::NodeId id) { return states_[id - 1]->node; }
  const std::string& start_failure(raft::NodeId id) { return states_[id - 1]->failure; }
  // What the node's on_applied heard in this boot (a restarted node hears the whole log again).
  const std::vector<Applied>& applied(raft::NodeId id) { return states_[id - 1]->applied; }
  SimWorld& world() { return cluster_.world(); }
  SimNode& sim(raft::NodeId id) { return cluster_.node(id - 1); }

  bool run_until(const std::function<bool()>& done, Duration limit = 30s) {
    return world().run_until(done, world().now() + limit);
  }
  // Runs `body` on a fiber of node `id` and the world until it returns.
  bool on_fiber(raft::NodeId id, std::function<void()> body, Duration limit = 30s) {
    auto done = std::make_shared<bool>(false);
    sim(id).scheduler().spawn("test", [body = std::move(body), done] {
      body();
      *done = true;
    });
    return run_until([done] { return *done; }, limit);
  }

  // The metadata leader every running node agrees on, or kNoNode.
  raft::NodeId agreed_leader() {
    raft::NodeId leader = raft::kNoNode;
    for (raft::NodeId id = 1; id <= size(); ++id) {
      if (node(id) == nullptr) return raft::kNoNode;
      const raft::NodeId seen = node(id)->metadata_leader();
      if (seen == raft::kNoNode || (leader != raft::kNoNode && seen != leader)) return raft::kNoNode;
      leader = seen;
    }
    return leader;
  }
  // Every node runs, is registered in this boot, and holds the same image at the same index.
  bool converged() {
    for (raft::NodeId id = 1; id <= size(); ++id) {
      if (node(id) == nullptr || !node(id)->registered()) return false;
      if (node(id)->image().brokers().size() != size()) return false;
      if (node(id)->image().applied_index() != node(1)->image().applied_index()) return false;
      if (node(id)->image().digest() != node(1)->image().digest()) return false;
    }
    return true;
  }

 private:
  struct NodeState {
    ClusterNode* node = nullptr;  // while it runs
    Event* stop = nullptr;
    std::vector<Applied> applied;  // this boot's
    std::string failure;
  };

  ClusterNodeOptions options_for(raft::NodeId id) {
    ClusterNodeOptions options;
    options.node_id = id;
    options.raft_address = Address{sim(id).name(), kRaftPort};
    for (raft::NodeId other = 1; other <= size(); ++other)
      options.voters[other] = Address{sim(other).name(), kRaftPort};
    options.metadata_dir = "data/__cluster_metadata";
    options.host = sim(id).name();
    options.port = kKafkaPort;
    options.rack = "rack-" + std::to_string(id % 2);
    options.host_options.tick = 50ms;
    options.retry_interval = retry_interval_;
    return options;
  }

  void main(Env env, raft::NodeId id) {
    NodeState& state = *states_[id - 1];
    state.applied.clear();
    ClusterNode node(env, options_for(id));
    node.on_applied([&state](const metadata::Record& record, const Status& outcome) {
      state.applied.push_back(Applied{record, to_error_code(outcome)});
    });
    if (Status started = node.start(); !started.ok()) {
      state.failure = started.message();
      return;
    }
    Event stop(env.scheduler);
    struct Forget {
      NodeState& state;
      ~Forget() {
        state.node = nullptr;
        state.stop = nullptr;
      }
    } forget{state};
    state.node = &node;
    state.stop = &stop;
    stop.wait();
    state.node = nullptr;
    node.stop();
  }

  Duration retry_interval_;
  SimCluster cluster_;
  std::vector<std::unique_ptr<NodeState>> states_;
};

// A CreateTopic of `name` placed on the registered brokers of `node`'s image, drawn from the node's random stream.
metadata::CreateTopic topic_on(ClusterNode& node, Env env, const std::string& name, int32_t partitions) {
  const std::vector<int32_t> brokers = node.image().broker_ids();
  Result<metadata::ReplicaAssignment> placed =
      metadata::assign_replicas(brokers, partitions, static_cast<int16_t>(brokers.size()), env.random);
  EXPECT_TRUE(placed.ok()) << placed.status().to_string();
  metadata::CreateTopic topic;
  topic.name = name;
  topic.topic_id = metadata::new_topic_id(env.random);
  topic.partitions = metadata::numbered_partitions(*placed, 0);
  return topic;
}

// What a proposal's result holds before it returns.
Result<std::vector<Status>> not_yet() { return Status(Code::kInvalidArgument, "not answered yet"); }

bool is_create_of(const Applied& applied, const std::string& name) {
  const auto* create = std::get_if<metadata::CreateTopic>(&applied.record);
  return create != nullptr && create->name == name;
}

raft::NodeId a_follower(MetaCluster& c, raft::NodeId leader) { return leader == 1 ? 2 : 1; }

TEST(ClusterNode, ThreeNodesElectAMetadataLeaderAndEveryNodeRegisters) {
  MetaCluster c(3);
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  EXPECT_NE(c.agreed_leader(), raft::kNoNode);
  for (raft::NodeId id = 1; id <= 3; ++id) {
    ClusterNode& node = *c.node(id);
    EXPECT_TRUE(c.start_failure(id).empty());
    EXPECT_EQ(node.incarnation(), 1u);
    EXPECT_EQ(node.image(), c.node(1)->image());
    for (raft::NodeId other = 1; other <= 3; ++other) {
      const metadata::BrokerRegistration* broker = node.image().broker(static_cast<int32_t>(other));
      ASSERT_NE(broker, nullptr) << "node " << id << " lacks broker " << other;
      EXPECT_EQ(broker->host, c.sim(other).name());
      EXPECT_EQ(broker->port, kKafkaPort);
      EXPECT_EQ(broker->rack, "rack-" + std::to_string(other % 2));
      EXPECT_EQ(broker->incarnation, 1u);
    }
    // Each registration applied exactly once, with success, on every node.
    size_t registrations = 0;
    for (const Applied& a : c.applied(id)) {
      if (std::holds_alternative<metadata::RegisterBroker>(a.record)) {
        ++registrations;
        EXPECT_EQ(a.outcome, ErrorCode::kNone);
      }
    }
    EXPECT_EQ(registrations, 3u);
  }
}

TEST(ClusterNode, ACreateTopicProposedOnAFollowerAppliesOnEveryNodeWithIdenticalDigests) {
  MetaCluster c(3);
  ASSERT_TRUE(c.run_until([&] { return c.converged() && c.agreed_leader() != raft::kNoNode; }));
  const raft::NodeId follower = a_follower(c, c.agreed_leader());
  Result<std::vector<Status>> first = not_yet();
  Result<std::vector<Status>> again = not_yet();
  metadata::CreateTopic topic;
  ASSERT_TRUE(c.on_fiber(follower, [&] {
    ClusterNode& node = *c.node(follower);
    topic = topic_on(node, c.sim(follower).env(), "orders", 6);
    first = node.propose(metadata::Batch{{topic}}, c.sim(follower).clock().now() + 10s);
    // The same name again, under another id: refused on every node, and its proposer hears why.
    metadata::CreateTopic other = topic;
    other.topic_id = metadata::new_topic_id(c.sim(follower).random());
    again = node.propose(metadata::Batch{{other}}, c.sim(follower).clock().now() + 10s);
  }));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_TRUE(first->front().ok()) << first->front().to_string();
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(to_error_code(again->front()), ErrorCode::kTopicAlreadyExists);
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  for (raft::NodeId id = 1; id <= 3; ++id) {
    const metadata::TopicImage* t = c.node(id)->image().topic("orders");
    ASSERT_NE(t, nullptr) << id;
    EXPECT_EQ(t->id, topic.topic_id);
    EXPECT_EQ(t->partition_count(), 6);
    EXPECT_EQ(c.node(id)->image().digest(), c.node(follower)->image().digest());
    EXPECT_EQ(c.applied(id), c.applied(follower)) << id;
  }
}

TEST(ClusterNode, ConcurrentProposalsFromEveryNodeEachApplyOnce) {
  MetaCluster c(3);
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  constexpr int kPerNode = 4;
  std::vector<Result<std::vector<Status>>> results(3 * kPerNode, not_yet());
  int done = 0;
  for (raft::NodeId id = 1; id <= 3; ++id) {
    for (int k = 0; k < kPerNode; ++k) {
      const size_t slot = (id - 1) * kPerNode + k;
      c.sim(id).scheduler().spawn("proposer", [&, id, k, slot] {
        ClusterNode& node = *c.node(id);
        const metadata::CreateTopic topic =
            topic_on(node, c.sim(id).env(), "t" + std::to_string(id) + "-" + std::to_string(k), 2);
        results[slot] = node.propose(metadata::Batch{{topic}}, c.sim(id).clock().now() + 10s);
        ++done;
      });
    }
  }
  ASSERT_TRUE(c.run_until([&] { return done == 3 * kPerNode; }));
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_TRUE(r->front().ok()) << r->front().to_string();
  }
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  EXPECT_EQ(c.node(1)->image().topics().size(), 3u * kPerNode);
  for (raft::NodeId id = 1; id <= 3; ++id) EXPECT_EQ(c.applied(id), c.applied(1));
}

// Forwarded again faster than a commit comes back, each proposal reaches the log several times: the first copy
// applies, every later one is refused on every node alike (an empty entry), and the proposer hears one outcome.
TEST(ClusterNode, AProposalForwardedManyTimesAppliesOnceWithOneOutcome) {
  MetaCluster c(3, 21, 5ms);
  ASSERT_TRUE(c.run_until([&] { return c.converged() && c.agreed_leader() != raft::kNoNode; }));
  const raft::NodeId follower = a_follower(c, c.agreed_leader());
  ASSERT_TRUE(c.on_fiber(follower, [&] {
    ClusterNode& node = *c.node(follower);
    for (int i = 0; i < 5; ++i) {
      const auto r = node.propose(metadata::Batch{{topic_on(node, c.sim(follower).env(), "r" + std::to_string(i), 2)}},
                                  c.sim(follower).clock().now() + 10s);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_TRUE(r->front().ok()) << r->front().to_string();
    }
  }));
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  EXPECT_GT(c.node(follower)->stats().copies_refused, 0u) << "the test needs copies in the log";
  for (raft::NodeId id = 1; id <= 3; ++id) {
    EXPECT_EQ(c.node(id)->stats().copies_refused, c.node(follower)->stats().copies_refused);
    for (int i = 0; i < 5; ++i) {
      const std::string name = "r" + std::to_string(i);
      size_t outcomes = 0;
      for (const Applied& a : c.applied(id)) {
        if (!is_create_of(a, name)) continue;
        ++outcomes;
        EXPECT_EQ(a.outcome, ErrorCode::kNone) << name << " applied again on node " << id;
      }
      EXPECT_EQ(outcomes, 1u) << name << " on node " << id;
    }
  }
}

// The leader crashes just after appending a follower's forwarded proposal, at a few delays: the follower forwards
// it again to the next leader, and the copy that the old leader may have replicated commits too. Whatever
// happens, the topic is created once at most, no node ever applies a second outcome for it (TOPIC_ALREADY_EXISTS
// of its own copy), and the proposer hears the one outcome or an unknown fate.
TEST(ClusterNode, AProposalWhoseLeaderCrashesMidWayAppliesOnceOrReportsAnUnknownFate) {
  int applied_ok = 0;
  for (int trial = 0; trial < 8; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    MetaCluster c(3, 100 + trial, 20ms);  // retries race the old leader's copy to the next leader
    ASSERT_TRUE(c.run_until([&] { return c.converged() && c.agreed_leader() != raft::kNoNode; }));
    const raft::NodeId leader = c.agreed_leader();
    const raft::NodeId follower = a_follower(c, leader);
    const raft::Index before = c.node(leader)->host().status(kMetadataGroup)->last_index;
    const std::string name = "crash-" + std::to_string(trial);
    Result<std::vector<Status>> result = not_yet();
    bool done = false;
    c.sim(follower).scheduler().spawn("proposer", [&] {
      ClusterNode& node = *c.node(follower);
      result = node.propose(metadata::Batch{{topic_on(node, c.sim(follower).env(), name, 3)}},
                            c.sim(follower).clock().now() + 8s);
      done = true;
    });
    ASSERT_TRUE(c.run_until([&] { return c.node(leader)->host().status(kMetadataGroup)->last_index > before; }));
    c.world().run_for(std::chrono::milliseconds(trial));
    c.crash(leader, /*power_loss=*/trial % 2 == 0);
    ASSERT_TRUE(c.run_until([&] { return done; }));
    c.boot(leader);
    ASSERT_TRUE(c.run_until([&] { return c.converged(); }, 60s));
    size_t created = 0;
    for (const Applied& a : c.applied(follower)) {
      if (!is_create_of(a, name)) continue;
      EXPECT_EQ(a.outcome, ErrorCode::kNone) << "a second outcome for the same proposal";
      ++created;
    }
    EXPECT_LE(created, 1u);
    if (result.ok()) {
      ASSERT_EQ(result->size(), 1u);
      EXPECT_TRUE(result->front().ok()) << result->front().to_string();
      EXPECT_EQ(created, 1u);
      ++applied_ok;
    } else {
      EXPECT_EQ(to_error_code(result.status()), ErrorCode::kRequestTimedOut) << result.status().to_string();
    }
    EXPECT_EQ(c.node(follower)->image().topic(name) != nullptr, created == 1);
    // The restarted leader replayed the whole log: it heard the same records with the same outcomes.
    for (raft::NodeId id = 1; id <= 3; ++id) EXPECT_EQ(c.applied(id), c.applied(follower)) << id;
  }
  EXPECT_GE(applied_ok, 6) << "the retries to the new leader should nearly always get the proposal in";
}

// Several proposals of one node in flight when the leader crashes: after the election their retries reach the new
// leader in the order their timers fire, not their sequences, so a later one can apply first. The earlier ones can
// then never apply under their ids (ProposalFilter), and are proposed again under new ones: each still applies
// exactly once, before its deadline.
TEST(ClusterNode, ConcurrentProposalsOfOneNodeThroughALeaderCrashEachApplyOnce) {
  constexpr int kProposals = 6;
  uint64_t reissued = 0;
  for (int trial = 0; trial < 6; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    MetaCluster c(3, 300 + trial, 40ms);
    ASSERT_TRUE(c.run_until([&] { return c.converged() && c.agreed_leader() != raft::kNoNode; }));
    const raft::NodeId leader = c.agreed_leader();
    const raft::NodeId follower = a_follower(c, leader);
    std::vector<Result<std::vector<Status>>> results(kProposals, not_yet());
    int done = 0;
    for (int k = 0; k < kProposals; ++k) {
      c.sim(follower).scheduler().spawn("proposer", [&, k] {
        ClusterNode& node = *c.node(follower);
        c.sim(follower).scheduler().sleep_for(std::chrono::milliseconds(3 * k));
        results[k] = node.propose(metadata::Batch{{topic_on(node, c.sim(follower).env(), "c" + std::to_string(k), 1)}},
                                  c.sim(follower).clock().now() + 10s);
        ++done;
      });
    }
    c.world().run_for(std::chrono::milliseconds(2 * trial));
    c.crash(leader, /*power_loss=*/false);
    ASSERT_TRUE(c.run_until([&] { return done == kProposals; }));
    reissued += c.node(follower)->stats().reissued;
    c.boot(leader);
    ASSERT_TRUE(c.run_until([&] { return c.converged(); }, 60s));
    for (int k = 0; k < kProposals; ++k) {
      const std::string name = "c" + std::to_string(k);
      size_t created = 0;
      for (const Applied& a : c.applied(follower)) {
        if (!is_create_of(a, name)) continue;
        EXPECT_EQ(a.outcome, ErrorCode::kNone) << name << ": a second outcome";
        ++created;
      }
      // With a new leader within a second or two and ten seconds to go, every proposal gets in: an overtaken one
      // too, because it is proposed again (without that it would wait for its deadline and report an unknown fate).
      ASSERT_TRUE(results[k].ok()) << name << ": " << results[k].status().to_string();
      EXPECT_TRUE(results[k]->front().ok()) << results[k]->front().to_string();
      EXPECT_EQ(created, 1u) << name;
    }
    for (raft::NodeId id = 1; id <= 3; ++id) EXPECT_EQ(c.applied(id), c.applied(follower)) << id;
  }
  EXPECT_GT(reissued, 0u) << "no trial overtook a proposal: the re-issue path went untested";
}

TEST(ClusterNode, ARestartedNodeReplaysTheMetadataLogAndReachesTheSameDigest) {
  MetaCluster c(3);
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  ASSERT_TRUE(c.on_fiber(2, [&] {
    ClusterNode& node = *c.node(2);
    for (int i = 0; i < 3; ++i) {
      const auto r = node.propose(metadata::Batch{{topic_on(node, c.sim(2).env(), "t" + std::to_string(i), 4)}},
                                  c.sim(2).clock().now() + 10s);
      ASSERT_TRUE(r.ok());
      ASSERT_TRUE(r->front().ok());
    }
  }));
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  const metadata::MetadataImage before = c.node(3)->image();
  c.crash(3, /*power_loss=*/true);
  c.world().run_for(2s);
  c.boot(3);
  // Back at its old index, it holds exactly the image it had (replay is deterministic)...
  ASSERT_TRUE(c.run_until(
      [&] { return c.node(3) != nullptr && c.node(3)->image().applied_index() >= before.applied_index(); }));
  ASSERT_TRUE(
      c.on_fiber(3, [&] { EXPECT_TRUE(c.node(3)->wait_applied(before.applied_index(), c.sim(3).clock().now())); }));
  // ...and then registers its new incarnation, which every node applies alike.
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  EXPECT_EQ(c.node(3)->incarnation(), 2u);
  EXPECT_EQ(c.node(1)->image().broker(3)->incarnation, 2u);
  EXPECT_GT(c.node(1)->image().broker(3)->broker_epoch, before.broker(3)->broker_epoch);
  EXPECT_EQ(c.node(3)->image(), c.node(1)->image());
  EXPECT_EQ(c.node(3)->image().topics(), before.topics());
  for (raft::NodeId id = 1; id <= 3; ++id) EXPECT_EQ(c.node(id)->image().digest(), c.node(3)->image().digest());
  // Its first applied records this boot are the ones it had applied before.
  EXPECT_GT(c.applied(3).size(), before.topics().size());
}

TEST(ClusterNode, AGracefulStopAnswersWaitingProposalsAndObserversSeeEveryChange) {
  MetaCluster c(3);
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  // Two nodes stop: no quorum, so a proposal on the third cannot apply; its node's stop answers it.
  c.stop(1);
  c.stop(2);
  ASSERT_TRUE(c.run_until([&] { return c.node(1) == nullptr && c.node(2) == nullptr; }));
  Result<std::vector<Status>> result = not_yet();
  bool done = false;
  uint64_t version = c.node(3)->version();
  c.sim(3).scheduler().spawn("proposer", [&] {
    ClusterNode& node = *c.node(3);
    result = node.propose(metadata::Batch{{topic_on(node, c.sim(3).env(), "late", 1)}}, c.sim(3).clock().now() + 60s);
    done = true;
  });
  c.world().run_for(2s);
  EXPECT_FALSE(done);
  c.stop(3);
  ASSERT_TRUE(c.run_until([&] { return done; }, 1s));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kClosed);
  EXPECT_EQ(to_error_code(result.status()), ErrorCode::kRequestTimedOut);
  // Everyone back: the node's version moves as it replays and registers again.
  for (raft::NodeId id = 1; id <= 3; ++id) c.boot(id);
  ASSERT_TRUE(c.run_until([&] { return c.converged(); }));
  EXPECT_GT(c.node(3)->version(), 0u);
  version = c.node(3)->version();
  bool changed = false;
  c.sim(3).scheduler().spawn("watcher",
                             [&] { changed = c.node(3)->wait_for_change(version, c.sim(3).clock().now() + 10s); });
  ASSERT_TRUE(c.on_fiber(1, [&] {
    ClusterNode& node = *c.node(1);
    const auto r =
        node.propose(metadata::Batch{{topic_on(node, c.sim(1).env(), "after", 1)}}, c.sim(1).clock().now() + 10s);
    ASSERT_TRUE(r.ok());
  }));
  ASSERT_TRUE(c.run_until([&] { return changed; }));
}

}  // namespace
}  // namespace sluice::cluster
