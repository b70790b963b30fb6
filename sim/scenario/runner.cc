#include "sim/scenario/runner.h"

#include <fmt/format.h>

#include <chrono>

#include "sim/raft/raft_run.h"
#include "sim/scenario/simulation.h"

namespace sluice::sim {

std::string replay_command(const Scenario& scenario, uint64_t seed, const MutationSet& mutations) {
  std::string command = fmt::format("sluice sim --scenario {} --seed {}", scenario.path.empty() ? scenario.name
                                                                                                 : scenario.path,
                                    seed);
  if (!mutations.empty()) command += " --mutation " + mutations.to_string();
  if (scenario.buggify && !scenario.raft) command += " --buggify";
  return command;
}

double wall_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The phases in order (simulation.h): setup, the workloads, the fault phase, the heal, convergence, the final read.
RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  if (scenario.raft) return run_raft_scenario(scenario, options);
  Simulation simulation(scenario, options);
  if (simulation.setup().ok()) {
    simulation.start_workloads();
    simulation.schedule_drawn();
    simulation.run_for(simulation.scenario().duration);
    simulation.heal();
    simulation.converge();
    simulation.stop_workloads();
    simulation.final_read();
  }
  return simulation.finish();
}

}  // namespace sluice::sim
