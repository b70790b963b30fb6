// The shrinker: a failing run cut down to a small scenario file that still fails the same way.
//
// It starts from the seed's expanded scenario (the fault schedule and the knobs drawn, sim/scenario/scenario.h) and
// greedily tries smaller ones: fewer workloads, a shorter fault phase, fewer faults (delta debugging: halves, then
// quarters, ... then one at a time), shorter faults, lower rates and fewer records, partitions and group members,
// drawn knobs back to the broker's defaults. A candidate is kept only when its run, with the same seed and
// mutations, still violates the invariant the original run violated first. Each candidate is written as a scenario
// file and parsed back before it runs, so what is kept is exactly what `sluice sim --scenario F --seed S` replays.
// Deterministic: the same failing run shrinks to the same file. Bounded by a number of runs.
#pragma once

#include <functional>
#include <string>

#include "sim/scenario/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/shrink/isolated_run.h"

namespace sluice::sim {

// How big a scenario is, as the shrinker and its report count.
struct ScenarioSize {
  size_t faults = 0;          // the schedule's fault values
  size_t workloads = 0;
  uint64_t operations = 0;    // client operations its run recorded
  Duration duration{};        // the fault phase
  size_t drawn_knobs = 0;     // broker settings still set to the seed's draw instead of their defaults

  // Faults, workloads, duration and knobs each no larger than `other`'s (operations are the run's, not the file's).
  bool no_larger_than(const ScenarioSize& other) const;
};

struct ShrinkOptions {
  int max_runs = 150;      // runs of candidates at most, the original's included
  std::string path;        // the file the result will be written to (each candidate parses as that file)
};

// Runs one candidate; run_isolated in practice (a planted bug may abort the process).
using CandidateRunner = std::function<RunOutcome(const Scenario&, const RunOptions&)>;

struct ShrinkResult {
  bool failed = false;     // the original run failed: without a failure there is nothing to shrink
  std::string invariant;   // what the original violated first; every kept step violates it too
  Scenario shrunk;         // an expanded scenario: no rates, knobs not drawn again
  ScenarioSize before;
  ScenarioSize after;
  int runs = 0;
  int steps_kept = 0;
};

// `expanded` is expand(scenario, options.seed) (or a scenario without rates and drawn knobs).
ShrinkResult shrink_failure(const Scenario& expanded, const RunOptions& options, const ShrinkOptions& shrink_options,
                            const CandidateRunner& run = run_isolated);

// The shrunk scenario's file: a leading comment that says what it reproduces, from what, and how to replay it.
std::string shrunk_scenario_file(const ShrinkResult& result, const Scenario& original, const RunOptions& options);

// The shrunk file's name in `dir`: "<dir>/<scenario>-seed<S>-shrunk.toml".
std::string shrunk_scenario_path(const std::string& dir, const Scenario& original, uint64_t seed);

}  // namespace sluice::sim
