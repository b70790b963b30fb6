// The scenario runner: one seeded run of a scenario. It expands the scenario with the seed, builds the world
// (broker nodes booted through the one boot path, core/broker/node; a client node per workload), creates the
// topics, runs the workloads through the fault phase, heals every fault, waits for convergence within the
// liveness bound, stops the workloads, reads every partition whole, and runs the checkers over the history.
//
// Phases: setup (topics) -> faults (scenario.duration) -> liveness (until every workload converged, at most
// scenario.liveness; "no convergence" otherwise) -> final read -> checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/base/mutations.h"
#include "sim/checkers/check.h"
#include "sim/scenario/scenario.h"

namespace sluice::sim {

struct RunOptions {
  uint64_t seed = 1;
  MutationSet mutations;
  LogLevel log_level = LogLevel::kOff;
  bool keep_history = false;      // fill RunResult::history_jsonl
  bool record_events = false;     // fill RunResult::events_trace (for the determinism check)
  Duration sample_every{0};       // sample every partition this often (Simulation::samples); 0: never
};

// One world event as the determinism check compares them.
struct TracedEvent {
  int64_t at_ns = 0;
  uint64_t sequence = 0;
  uint32_t node = 0;
  uint8_t kind = 0;
  uint64_t hash = 0;
  bool operator==(const TracedEvent&) const = default;
};

struct RunResult {
  std::string scenario;
  uint64_t seed = 0;
  std::string replay;    // the command that replays this run
  std::string expanded;  // the seed's configuration, as a scenario file
  CheckReport report;    // the checkers' violations plus the runner's own (setup, liveness, boots)
  uint64_t trace_hash = 0;
  double simulated_seconds = 0;
  double wall_seconds = 0;
  double check_seconds = 0;  // of wall_seconds, the checkers'

  uint64_t events = 0;
  uint64_t fiber_steps = 0;
  uint64_t operations = 0;
  size_t faults_applied = 0;
  size_t faults_skipped = 0;
  std::string history_jsonl;
  std::vector<TracedEvent> events_trace;

  bool passed() const { return report.violations.empty(); }
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

// Seconds on the host's steady clock: the wall time a run reports (RunResult::wall_seconds), never the world's.
double wall_clock_seconds();

// "sluice sim --scenario F --seed S [--mutation M]".
std::string replay_command(const Scenario& scenario, uint64_t seed, const MutationSet& mutations);

}  // namespace sluice::sim
