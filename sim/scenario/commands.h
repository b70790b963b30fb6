// `sluice sim` and `sluice fuzz`: the scenario runner behind the command line. Each prints its report and returns
// the process exit code (0: every check passed; 1: a violation, with the replay command; 2: a usage error such as
// a scenario file that does not parse).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/log.h"

namespace sluice::sim {

struct Scenario;

struct SimCommandOptions {
  std::string scenario;                // a scenario file
  uint64_t seed = 1;
  std::vector<std::string> mutations;  // names (core/base/mutations.h)
  std::string trace_path;              // write the history as JSON lines here ("" = don't)
  bool check_determinism = false;      // run twice in this process and compare event by event
  bool quiet = false;                  // the report only, no expanded configuration
  bool buggify = false;                // BUGGIFY on, whatever the scenario says (core/env/buggify.h)
  LogLevel log_level = LogLevel::kOff;
};
int run_sim_command(const SimCommandOptions& options);

inline constexpr double kDefaultFuzzBuggifyShare = 0.5;

struct FuzzCommandOptions {
  std::vector<std::string> scenarios;  // files; round robin over them
  uint64_t seeds = 100;
  uint64_t first_seed = 1;
  double time_budget_seconds = 0;      // stop starting seeds after this much wall time (0: no budget)
  std::vector<std::string> mutations;
  std::string trace_dir = ".";         // a failing seed's history goes to <dir>/<scenario>-<seed>.jsonl
  // The share of seeds run with BUGGIFY on (core/env/buggify.h), each seed's lot drawn from the seed alone (a
  // scenario saying `buggify = true` has it on in every seed). Not for --prove-mutations, whose seeds run as the
  // scenarios say.
  double buggify_share = kDefaultFuzzBuggifyShare;
  bool expect_failure = false;         // exit 0 only if some seed failed (proving a mutation is caught)
  // For each scenario and each mutation its [checks] catches names: run seeds with the mutation until one fails
  // (at most `seeds`), then the same seeds without it, which must all pass.
  bool prove_mutations = false;
  // Stop at the first failing seed and shrink it (sim/shrink/shrink.h) into a scenario file in shrink_out,
  // <scenario>-seed<S>-shrunk.toml, that `sluice sim --scenario F --seed S` replays, failing the same way. Seeds
  // then run in child processes (a planted bug's core assertion is a failure to shrink); coverage is not judged.
  bool shrink = false;
  std::string shrink_out = ".";
  int shrink_runs = 150;               // the shrinker's budget of runs
  LogLevel log_level = LogLevel::kOff;
};
int run_fuzz_command(const FuzzCommandOptions& options);

// The scenario a fuzz seed runs: with BUGGIFY on when the seed's lot (of `share`) says so. A [raft] scenario as is.
Scenario fuzz_seed_scenario(const Scenario& scenario, uint64_t seed, double share);

// `sluice sim --list-mutations`.
int list_mutations_command();

}  // namespace sluice::sim
