// The process-pause fault end to end on raft nodes: the paused leader's groups are taken over by the others while
// it is stopped; it resumes (its clock jumped, its timers late, its peers' bytes waiting) without a crash or a
// restart, learns the newer term and steps down, and the group converges with every raft checker passing.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/faults/injector.h"
#include "sim/raft/raft_checks.h"
#include "sim/raft/raft_world.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kThreeNodes = R"(
name = "raft-pause"
brokers = 3
duration = "20s"
liveness = "30s"
[raft]
groups = 1
max_stale_leader = "3s"
)";

// The node that led group 1 in its latest term, by the leaderships recorded so far.
const RaftLeadership* latest_leadership(const RaftHistory& history) {
  const RaftLeadership* latest = nullptr;
  for (const RaftLeadership& l : history.leaderships) {
    if (l.group == 1 && (latest == nullptr || l.term > latest->term)) latest = &l;
  }
  return latest;
}

TEST(ProcessPauseFault, APausedLeaderIsReplacedAndResumesWithoutCrashing) {
  Result<Scenario> scenario = parse_scenario(kThreeNodes, "pause.toml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  History history;
  RaftHistory raft_history;
  RaftWorld world(*scenario, 7, LogLevel::kOff, MutationSet{}, history, raft_history);
  SimWorld& sim = world.world();
  Injector injector(world, history);
  ASSERT_TRUE(sim.run_until([&] { return world.all_running(); }, sim.now() + 30s));
  sim.run_for(3s);
  const RaftLeadership* before = latest_leadership(raft_history);
  ASSERT_NE(before, nullptr);
  const std::string paused = before->node;
  const raft::Term paused_term = before->term;
  SimNode* node = world.broker_node(paused);
  ASSERT_NE(node, nullptr);
  const size_t proposals_before = raft_history.proposals.size();

  const Fault pause{0s, FaultKind::kProcessPause, paused, "", 6s, 0, "", ""};
  injector.schedule({pause}, sim.now());
  sim.run_for(5s);
  EXPECT_TRUE(node->paused());
  const RaftLeadership* during = latest_leadership(raft_history);
  ASSERT_NE(during, nullptr);
  EXPECT_NE(during->node, paused) << "the others elect a new leader while the leader is stopped";
  EXPECT_GT(during->term, paused_term);

  sim.run_for(3s);  // the pause ended 1 s ago
  EXPECT_FALSE(node->paused());
  EXPECT_TRUE(node->up());
  EXPECT_EQ(node->boots(), 1u) << "resumed, not restarted";
  EXPECT_EQ(injector.faults_applied(), 1u);
  EXPECT_TRUE(world.all_running());

  injector.heal_all();
  raft_history.healed = true;
  raft_history.healed_at = sim.now();
  std::string why;
  EXPECT_TRUE(sim.run_until([&] { return world.converged(&why); }, sim.now() + 30s)) << why;
  EXPECT_GT(raft_history.proposals.size(), proposals_before + 10) << "the group kept working";
  world.set_proposing(false);
  sim.run_until([&] { return world.proposals_in_flight() == 0 && world.caught_up(); }, sim.now() + 30s);
  CheckReport report;
  check_raft(RaftCheckInputs{raft_history, world.running_nodes(), scenario->raft->max_stale_leader}, {}, report);
  for (const Violation& v : report.violations) ADD_FAILURE() << v.invariant << ": " << v.evidence;
  EXPECT_EQ(node->boots(), 1u);
}

}  // namespace
}  // namespace sluice::sim
