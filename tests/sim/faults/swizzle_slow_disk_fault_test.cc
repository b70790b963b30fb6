// The injector's swizzle-clog (links of half the brokers clogged one at a time, released in reverse order) and its
// slow-disk and stalled-fsync faults (the node's disk slowness set for the fault's length) and timer-jitter, on bare
// nodes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/faults/injector.h"
#include "sim/world/sim_cluster.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// Brokers n1..n3 that idle; nothing goes down here.
class IdleBrokers final : public FaultTarget {
 public:
  explicit IdleBrokers(int brokers) : cluster_(17, LogLevel::kOff) {
    for (int i = 0; i < brokers; ++i) {
      SimNode& node = cluster_.add_node();
      node.boot([](Env env) { env.scheduler.sleep_for(std::chrono::hours(24)); });
      nodes_.push_back(&node);
    }
  }
  SimCluster& cluster() override { return cluster_; }
  SimNode* broker_node(const std::string& name) override {
    for (SimNode* n : nodes_) {
      if (n->name() == name) return n;
    }
    return nullptr;
  }
  std::vector<SimNode*> broker_nodes() override { return nodes_; }
  std::vector<SimNode*> client_nodes() override { return {}; }
  void take_down(SimNode& node, bool power_loss) override { power_loss ? node.power_loss() : node.crash(); }
  void stop_gracefully(SimNode& node) override { node.crash(); }
  void bring_up(SimNode& node) override {
    if (!node.up()) node.restart();
  }

 private:
  SimCluster cluster_;
  std::vector<SimNode*> nodes_;
};

TEST(SwizzleClogFault, ClogsHalfTheBrokersInTurnAndReleasesThemInReverse) {
  IdleBrokers target(3);
  History history;
  Injector injector(target, history);
  SimWorld& world = target.cluster().world();
  SimNetwork& net = target.cluster().network();
  const Instant start = world.now();
  // Two of three brokers from n2 on: n2 clogged at 1 s, n3 at 3 s; n3 released at 7 s, n2 at 9 s.
  injector.schedule({Fault{1s, FaultKind::kSwizzleClog, "n2", "", 8s, 0, "", ""}}, start);
  auto links = [&] {
    std::string text;
    for (NodeId a = 1; a <= 3; ++a) {
      for (NodeId b = 1; b <= 3; ++b) {
        if (a != b && net.blocked(a, b)) text += std::to_string(a) + ">" + std::to_string(b) + " ";
      }
    }
    return text;
  };
  world.run_until(start + 500ms);
  EXPECT_EQ(links(), "");
  world.run_until(start + 1500ms);
  EXPECT_EQ(links(), "1>2 2>1 2>3 3>2 ") << "n2 alone";
  world.run_until(start + 3500ms);
  EXPECT_EQ(links(), "1>2 1>3 2>1 2>3 3>1 3>2 ") << "n2 and n3: every link of both";
  world.run_until(start + 7500ms);
  EXPECT_EQ(links(), "1>2 2>1 2>3 3>2 ") << "n3 released first; its link to n2 stays held while n2 is clogged";
  world.run_until(start + 9500ms);
  EXPECT_EQ(links(), "") << "n2, clogged first, released last";
  EXPECT_EQ(injector.faults_applied(), 1u);
}

TEST(SwizzleClogFault, ASecondSwizzleDuringTheFirstIsSkippedAndHealEndsIt) {
  IdleBrokers target(3);
  History history;
  Injector injector(target, history);
  SimWorld& world = target.cluster().world();
  const Instant start = world.now();
  injector.schedule({Fault{1s, FaultKind::kSwizzleClog, "n1", "", 8s, 3, "", ""},
                     Fault{2s, FaultKind::kSwizzleClog, "n3", "", 8s, 0, "", ""}},
                    start);
  world.run_until(start + 6s);
  EXPECT_EQ(injector.faults_applied(), 1u);
  EXPECT_EQ(injector.faults_skipped(), 1u);
  EXPECT_TRUE(target.cluster().network().blocked(1, 3));
  injector.heal_all();
  EXPECT_FALSE(target.cluster().network().blocked(1, 3));
  world.run_until(start + 20s);
  EXPECT_FALSE(target.cluster().network().blocked(1, 3));
}

TEST(SlowDiskFault, SlowsTheNodesDiskForItsLength) {
  IdleBrokers target(2);
  History history;
  Injector injector(target, history);
  SimWorld& world = target.cluster().world();
  const Instant start = world.now();
  SimNode& n2 = *target.broker_node("n2");
  injector.schedule({Fault{1s, FaultKind::kSlowDisk, "n2", "", 4s, 700, "", ""},
                     Fault{2s, FaultKind::kStalledFsync, "n2", "", 1s, 1500, "", ""},
                     Fault{2s, FaultKind::kSlowDisk, "n2", "", 4s, 10, "", ""}},
                    start);
  world.run_until(start + 2500ms);
  EXPECT_EQ(n2.disk_tail_max(), 700ms);
  EXPECT_EQ(n2.sync_stall(), 1500ms);
  EXPECT_EQ(injector.faults_skipped(), 1u) << "one slow-disk at a time";
  world.run_until(start + 3500ms);
  EXPECT_EQ(n2.disk_tail_max(), 700ms);
  EXPECT_EQ(n2.sync_stall(), 0ms);
  world.run_until(start + 5500ms);
  EXPECT_EQ(n2.disk_tail_max(), 0ms);
  EXPECT_EQ(target.broker_node("n1")->disk_tail_max(), 0ms);
}

// timer-jitter: a node's timers late for the fault's length, one fault at a time per node, and the heal ends it (a
// jitter left on at the heal made every disk wait of the node late through the liveness phase: no convergence).
TEST(TimerJitterFault, JittersOneNodesTimersForItsLengthAndTheHealEndsIt) {
  IdleBrokers target(2);
  History history;
  Injector injector(target, history);
  SimWorld& world = target.cluster().world();
  SimNode& n1 = *target.broker_node("n1");
  SimNode& n2 = *target.broker_node("n2");
  const Instant start = world.now();
  injector.schedule({Fault{1s, FaultKind::kTimerJitter, "n1", "", 2s, 30, "", ""},
                     Fault{2s, FaultKind::kTimerJitter, "n1", "", 2s, 50, "", ""},
                     Fault{5s, FaultKind::kTimerJitter, "n2", "", 60s, 40, "", ""}},
                    start);
  world.run_until(start + 1500ms);
  EXPECT_EQ(n1.clock().timer_jitter(), 30ms);
  EXPECT_EQ(n2.clock().timer_jitter(), 0ms);
  world.run_until(start + 3500ms);
  EXPECT_EQ(n1.clock().timer_jitter(), 0ms) << "its length ended; the second one was skipped";
  world.run_until(start + 6s);
  EXPECT_EQ(n2.clock().timer_jitter(), 40ms);
  injector.heal_all();
  EXPECT_EQ(n2.clock().timer_jitter(), 0ms) << "the heal ends it";
  EXPECT_EQ(injector.faults_applied(), 2u);
}

}  // namespace
}  // namespace sluice::sim
