#include "sim/raft/raft_run.h"

#include <fmt/format.h>

#include <chrono>

#include "core/base/assert.h"
#include "sim/faults/injector.h"
#include "sim/raft/raft_checks.h"
#include "sim/raft/raft_world.h"
#include "sim/world/sim_disk.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kSetupLimit = 60s;
constexpr Duration kSettleLimit = 30s;
constexpr Duration kSampleEvery = 100ms;

// Runs the world to `deadline` (or until `done`), sampling leaders every kSampleEvery between steps: samples are
// taken outside the world, so they never change a run or its trace hash.
bool advance(RaftWorld& world, Instant deadline, const std::function<bool()>& done, Instant& next_sample) {
  SimWorld& sim = world.world();
  const std::function<bool()> holds = done ? done : std::function<bool()>([] { return false; });
  for (;;) {
    if (holds()) return true;
    const Instant until = std::min(deadline, next_sample);
    if (sim.run_until(holds, until)) return true;
    if (sim.now() >= next_sample) {
      world.sample_leaders();
      next_sample = sim.now() + kSampleEvery;
    }
    if (sim.now() >= deadline) return holds();
  }
}

void fail_boots(const History& history, CheckReport& report) {
  for (const WorldEvent& e : history.events()) {
    if (e.kind == WorldEvent::Kind::kBootFailed) {
      report.fail("boot", fmt::format("{} failed to boot at {:.3f}s: {}", e.node, to_seconds(e.at.time_since_epoch()),
                                      e.text));
      return;
    }
  }
}

}  // namespace

RunResult run_raft_scenario(const Scenario& raw, const RunOptions& options) {
  SLUICE_ASSERT(raw.raft.has_value());
  const double wall_start = wall_clock_seconds();
  const Scenario scenario = expand(raw, options.seed);
  RunResult result;
  result.scenario = scenario.name;
  result.seed = options.seed;
  result.replay = replay_command(scenario, options.seed, options.mutations);
  result.expanded = to_toml(scenario, true);

  History history;
  RaftHistory raft_history;
  {
    RaftWorld world(scenario, options.seed, options.log_level, options.mutations, history, raft_history);
    SimWorld& sim = world.world();
    AssertFailureHook previous = set_assert_failure_hook(simulation_failure_hook(sim, result.replay));
    if (options.record_events) {
      sim.set_event_observer([&result](Instant at, uint64_t sequence, NodeId node, EventKind kind, uint64_t hash) {
        result.events_trace.push_back(
            TracedEvent{at.time_since_epoch().count(), sequence, node, static_cast<uint8_t>(kind), hash});
      });
    }
    Injector injector(world, history);
    Instant next_sample = sim.now();
    const bool up = advance(world, sim.now() + kSetupLimit,
                            [&] { return world.all_running() || world.boot_failed(); }, next_sample);
    if (!up || !world.all_running()) {
      result.report.fail("setup", "the raft nodes did not start (see the boot-failed events)");
    } else {
      injector.schedule(scenario.schedule, sim.now());
      advance(world, sim.now() + scenario.duration, nullptr, next_sample);
      injector.heal_all();
      result.faults_applied = injector.faults_applied();
      result.faults_skipped = injector.faults_skipped();
      raft_history.healed = true;
      raft_history.healed_at = sim.now();
      std::string why;
      if (!advance(world, sim.now() + scenario.liveness, [&] { return world.converged(&why); },
                   next_sample)) {
        result.report.fail("liveness", fmt::format("no convergence within {} after the heal: {}",
                                                   format_duration(scenario.liveness), why));
      }
      world.set_proposing(false);
      advance(world, sim.now() + kSettleLimit,
              [&] { return world.proposals_in_flight() == 0 && world.caught_up(); }, next_sample);
    }
    fail_boots(history, result.report);
    const double checks_start = wall_clock_seconds();
    check_raft(RaftCheckInputs{raft_history, world.running_nodes(), scenario.raft->max_stale_leader}, scenario.checks,
               result.report);
    result.check_seconds = wall_clock_seconds() - checks_start;
    uint64_t disks = 0;
    for (SimNode* node : world.broker_nodes()) disks = mix64(disks ^ node->disk().trace_state_hash());
    result.trace_hash = mix64(sim.trace_hash() ^ mix64(history.digest()) ^ disks ^ raft_history.applied.size());
    result.simulated_seconds = to_seconds(sim.now().time_since_epoch());
    result.events = sim.events_run();
    result.fiber_steps = sim.fiber_steps();
    sim.set_event_observer(nullptr);
    set_assert_failure_hook(std::move(previous));
  }
  result.operations = raft_history.proposals.size();
  result.report.count("raft proposals", static_cast<int64_t>(raft_history.proposals.size()));
  result.wall_seconds = wall_clock_seconds() - wall_start;
  return result;
}

}  // namespace sluice::sim
