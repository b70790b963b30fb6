#include "sim/scenario/commands.h"
#include "sim/scenario/coverage.h"

#include <fmt/format.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <set>

#include "core/base/assert.h"
#include "core/base/mutations.h"
#include "sim/scenario/runner.h"
#include "sim/shrink/isolated_run.h"
#include "sim/shrink/shrink.h"

namespace sluice::sim {
namespace {

Result<MutationSet> parse_mutations(const std::vector<std::string>& names) {
  MutationSet set;
  for (const std::string& list : names) {
    size_t begin = 0;
    while (begin <= list.size()) {
      const size_t comma = list.find(',', begin);
      const std::string name = list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
      if (!name.empty()) {
        const std::optional<Mutation> m = parse_mutation(name);
        if (!m) return invalid_argument("unknown mutation '" + name + "' (sluice sim --list-mutations lists them)");
        set.add(*m);
      }
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
  }
  return set;
}

// Random::fork stream of a fuzz seed's BUGGIFY lot; fixed forever, or old seeds draw another lot.
constexpr uint64_t kFuzzBuggifyLotStream = 0xb0661f76;

void print_report(const RunResult& r) {
  std::printf("checks:\n");
  for (const auto& [figure, n] : r.report.figures) std::printf("  %-72s %8" PRId64 "\n", figure.c_str(), n);
  for (const Violation& v : r.report.violations) {
    std::printf("  VIOLATION %s: %s\n", v.invariant.c_str(), v.evidence.c_str());
  }
  std::printf("trace hash: %016" PRIx64 "\n", r.trace_hash);
  std::printf("simulated: %.3f s in %.3f s of wall time: %.1f simulated s per wall s; %" PRIu64
              " events (%.0f per wall s), %" PRIu64 " fiber steps, %" PRIu64 " operations, %zu faults (%zu skipped); "
              "checks %.3f s\n",
              r.simulated_seconds, r.wall_seconds, r.simulated_seconds / std::max(r.wall_seconds, 1e-9), r.events,
              static_cast<double>(r.events) / std::max(r.wall_seconds, 1e-9), r.fiber_steps, r.operations,
              r.faults_applied, r.faults_skipped, r.check_seconds);
  if (r.passed()) {
    std::printf("PASSED: %s, seed %" PRIu64 "\n", r.scenario.c_str(), r.seed);
  } else {
    std::printf("FAILED: %s, seed %" PRIu64 "; replay with:\n  %s\n", r.scenario.c_str(), r.seed, r.replay.c_str());
  }
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// Two runs of one seed, compared event by event; prints the first difference. True when they agree.
bool check_determinism(const Scenario& scenario, RunOptions options) {
  options.record_events = true;
  const RunResult first = run_scenario(scenario, options);
  const RunResult second = run_scenario(scenario, options);
  const size_t n = std::min(first.events_trace.size(), second.events_trace.size());
  for (size_t i = 0; i < n; ++i) {
    const TracedEvent& a = first.events_trace[i];
    const TracedEvent& b = second.events_trace[i];
    if (a == b) continue;
    std::printf("determinism: runs diverge at event %zu:\n  first:  t=%.9f s seq %" PRIu64 " node %u kind %u hash "
                "%016" PRIx64 "\n  second: t=%.9f s seq %" PRIu64 " node %u kind %u hash %016" PRIx64 "\n",
                i, static_cast<double>(a.at_ns) / 1e9, a.sequence, a.node, a.kind, a.hash,
                static_cast<double>(b.at_ns) / 1e9, b.sequence, b.node, b.kind, b.hash);
    return false;
  }
  if (first.events_trace.size() != second.events_trace.size() || first.trace_hash != second.trace_hash) {
    std::printf("determinism: same %zu first events, but %zu and %zu events, trace hashes %016" PRIx64
                " and %016" PRIx64 "\n",
                n, first.events_trace.size(), second.events_trace.size(), first.trace_hash, second.trace_hash);
    return false;
  }
  std::printf("determinism: two runs in this process agree on all %zu events (trace hash %016" PRIx64 ")\n", n,
              first.trace_hash);
  return true;
}

void print_probes_never_reached() {
  size_t never = 0;
  std::string names;
  for (const ProbeSite& site : probe_sites()) {
    if (site.hits != 0) continue;
    ++never;
    names += fmt::format("\n  {} ({}:{})", site.name, site.file, site.line);
  }
  std::printf("probes never reached: %zu of %zu%s\n", never, probe_sites().size(), names.c_str());
}

// One mutation against one scenario: the first seed (of `seeds`) that catches it, then those seeds without it.
bool prove_mutation(const Scenario& scenario, Mutation mutation, const FuzzCommandOptions& options) {
  RunOptions run;
  run.log_level = options.log_level;
  run.mutations.add(mutation);
  const std::string name(mutation_name(mutation));
  std::optional<uint64_t> caught;
  std::string how;
  for (uint64_t i = 0; i < options.seeds && !caught; ++i) {
    run.seed = options.first_seed + i;
    how = run_isolated(scenario, run).first();
    if (!how.empty()) caught = run.seed;
  }
  if (!caught) {
    std::printf("  %-32s NOT CAUGHT by %s in %" PRIu64 " seeds\n", name.c_str(), scenario.name.c_str(), options.seeds);
    return false;
  }
  RunOptions clean = run;
  clean.mutations = MutationSet();
  for (uint64_t seed = options.first_seed; seed <= *caught; ++seed) {
    clean.seed = seed;
    const RunResult r = run_scenario(scenario, clean);
    if (!r.passed()) {
      std::printf("  %-32s caught by %s seed %" PRIu64 ", but seed %" PRIu64 " fails without it too: %s: %s\n",
                  name.c_str(), scenario.name.c_str(), *caught, seed, r.report.violations.front().invariant.c_str(),
                  r.report.violations.front().evidence.c_str());
      return false;
    }
  }
  std::printf("  %-32s caught by %s seed %" PRIu64 " (%s); seeds %" PRIu64 "..%" PRIu64 " pass without it\n",
              name.c_str(), scenario.name.c_str(), *caught, how.c_str(), options.first_seed, *caught);
  return true;
}

int prove_mutations(const std::vector<Scenario>& scenarios, const FuzzCommandOptions& options) {
  std::printf("mutations (each must be caught within %" PRIu64 " seeds; the same seeds must pass without it):\n",
              options.seeds);
  bool all = true;
  std::set<std::string> proven;
  for (const Scenario& scenario : scenarios) {
    for (const std::string& name : scenario.catches) {
      const std::optional<Mutation> m = parse_mutation(name);
      if (!m) {
        std::printf("  %-32s unknown (named by %s)\n", name.c_str(), scenario.name.c_str());
        all = false;
        continue;
      }
      const bool ok = prove_mutation(scenario, *m, options);
      all = all && ok;
      if (ok) proven.insert(name);
    }
  }
  for (const MutationInfo& m : all_mutations()) {
    if (proven.count(std::string(m.name)) == 0) {
      std::printf("  %-32s proven by no scenario given\n", std::string(m.name).c_str());
    }
  }
  return all ? 0 : 1;
}

// `sluice fuzz --shrink`: the failing seed cut down to a small scenario file. False when it could not be written.
bool shrink_and_report(const Scenario& scenario, RunOptions run, const FuzzCommandOptions& options) {
  run.keep_history = false;
  ShrinkOptions shrink;
  shrink.max_runs = options.shrink_runs;
  shrink.path = shrunk_scenario_path(options.shrink_out, scenario, run.seed);
  std::printf("shrink: %s seed %" PRIu64 ", at most %d runs...\n", scenario.name.c_str(), run.seed, shrink.max_runs);
  std::fflush(stdout);
  int tried = 0;
  double last_progress = wall_clock_seconds();
  const CandidateRunner run_with_progress = [&](const Scenario& candidate, const RunOptions& o) {
    if (++tried > 1 && wall_clock_seconds() - last_progress >= 5.0) {
      last_progress = wall_clock_seconds();
      std::fprintf(stderr, "shrink: %d runs; trying %zu faults, %zu workloads, a %s fault phase\n", tried,
                   candidate.schedule.size(), candidate.workloads.size(), format_duration(candidate.duration).c_str());
    }
    return run_isolated(candidate, o);
  };
  const ShrinkResult result = shrink_failure(expand(scenario, run.seed), run, shrink, run_with_progress);
  if (!result.failed) {
    std::printf("shrink: the seed's configuration, written out, did not fail again: nothing to shrink\n");
    return false;
  }
  if (!write_file(shrink.path, shrunk_scenario_file(result, scenario, run))) {
    std::fprintf(stderr, "sluice fuzz: cannot write %s\n", shrink.path.c_str());
    return false;
  }
  const ScenarioSize& a = result.before;
  const ScenarioSize& b = result.after;
  std::printf("shrink: still violates %s after %d runs (%d cuts kept):\n", result.invariant.c_str(), result.runs,
              result.steps_kept);
  std::printf("  faults      %6zu -> %zu\n  workloads   %6zu -> %zu\n  operations  %6" PRIu64 " -> %" PRIu64
              "\n  fault phase %6s -> %s\n  drawn knobs %6zu -> %zu\n",
              a.faults, b.faults, a.workloads, b.workloads, a.operations, b.operations,
              format_duration(a.duration).c_str(), format_duration(b.duration).c_str(), a.drawn_knobs, b.drawn_knobs);
  std::printf("wrote %s; replay with:\n  %s\n", shrink.path.c_str(),
              replay_command(result.shrunk, run.seed, run.mutations).c_str());
  return true;
}

// `sluice fuzz --shrink`: seeds run in child processes (a planted bug may trip a core assertion: a failure to shrink,
// not the end of the fuzz) until the first failure, which is shrunk. Probes reached in a child are not counted, so
// coverage is not judged here.
int fuzz_and_shrink(const std::vector<Scenario>& scenarios, const MutationSet& mutations,
                    const FuzzCommandOptions& options) {
  const double start = wall_clock_seconds();
  double last_progress = start;
  uint64_t ran = 0;
  for (uint64_t i = 0; i < options.seeds; ++i) {
    if (options.time_budget_seconds > 0 && wall_clock_seconds() - start >= options.time_budget_seconds) break;
    RunOptions run;
    run.seed = options.first_seed + i;
    const Scenario scenario = fuzz_seed_scenario(scenarios[i % scenarios.size()], run.seed, options.buggify_share);
    run.mutations = mutations;
    run.log_level = options.log_level;
    const RunOutcome outcome = run_isolated(scenario, run);
    ++ran;
    if (!outcome.passed()) {
      std::printf("fuzz: %s seed %" PRIu64 " violates %s; replay with:\n  %s\n", scenario.name.c_str(), run.seed,
                  outcome.first().c_str(), replay_command(scenario, run.seed, run.mutations).c_str());
      if (!shrink_and_report(scenario, run, options)) return 2;
      return options.expect_failure ? 0 : 1;
    }
    if (wall_clock_seconds() - last_progress >= 2.0) {
      last_progress = wall_clock_seconds();
      std::fprintf(stderr, "fuzz: %" PRIu64 " seeds passed\n", ran);
    }
  }
  std::printf("fuzz: %" PRIu64 " seeds over %zu scenarios passed: nothing to shrink\n", ran, scenarios.size());
  return options.expect_failure ? 1 : 0;
}

}  // namespace

Scenario fuzz_seed_scenario(const Scenario& scenario, uint64_t seed, double share) {
  Scenario chosen = scenario;
  if (!scenario.raft && Random(seed).fork(kFuzzBuggifyLotStream).chance(share)) chosen.buggify = true;
  return chosen;
}

int list_mutations_command() {
  for (const MutationInfo& m : all_mutations()) std::printf("%-32s %s\n", std::string(m.name).c_str(),
                                                            std::string(m.what).c_str());
  return 0;
}

int run_sim_command(const SimCommandOptions& options) {
  Result<Scenario> scenario = load_scenario_file(options.scenario);
  if (!scenario.ok()) {
    std::fprintf(stderr, "sluice sim: %s\n", scenario.status().message().c_str());
    return 2;
  }
  Result<MutationSet> mutations = parse_mutations(options.mutations);
  if (!mutations.ok()) {
    std::fprintf(stderr, "sluice sim: %s\n", mutations.status().message().c_str());
    return 2;
  }
  set_verify_enabled(true);
  if (options.buggify) scenario->buggify = true;
  RunOptions run;
  run.seed = options.seed;
  run.mutations = *mutations;
  run.log_level = options.log_level;
  run.keep_history = !options.trace_path.empty();
  std::printf("scenario: %s (%s)\nseed: %" PRIu64 "\n", scenario->name.c_str(), options.scenario.c_str(),
              options.seed);
  if (!mutations->empty()) std::printf("mutations: %s\n", mutations->to_string().c_str());
  if (scenario->buggify && !scenario->raft) std::printf("buggify: on\n");
  if (options.check_determinism) return check_determinism(*scenario, run) ? 0 : 1;
  const RunResult result = run_scenario(*scenario, run);
  if (!options.quiet) std::printf("--- the seed's configuration ---\n%s--- end ---\n", result.expanded.c_str());
  print_report(result);
  if (!options.trace_path.empty() && !write_file(options.trace_path, result.history_jsonl)) {
    std::fprintf(stderr, "sluice sim: cannot write %s\n", options.trace_path.c_str());
    return 2;
  }
  return result.passed() ? 0 : 1;
}

int run_fuzz_command(const FuzzCommandOptions& options) {
  std::vector<Scenario> scenarios;
  for (const std::string& path : options.scenarios) {
    Result<Scenario> s = load_scenario_file(path);
    if (!s.ok()) {
      std::fprintf(stderr, "sluice fuzz: %s\n", s.status().message().c_str());
      return 2;
    }
    scenarios.push_back(std::move(*s));
  }
  Result<MutationSet> mutations = parse_mutations(options.mutations);
  if (!mutations.ok() || scenarios.empty()) {
    std::fprintf(stderr, "sluice fuzz: %s\n", mutations.ok() ? "give at least one --scenario" :
                                                               mutations.status().message().c_str());
    return 2;
  }
  set_verify_enabled(true);
  if (options.prove_mutations) return prove_mutations(scenarios, options);
  if (options.shrink) return fuzz_and_shrink(scenarios, *mutations, options);
  reset_probe_hits();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  uint64_t ran = 0;
  double simulated = 0;
  std::vector<std::string> failures;
  double last_progress = 0;
  ProbeCoverage coverage;
  for (uint64_t i = 0; i < options.seeds; ++i) {
    if (options.time_budget_seconds > 0 && elapsed() >= options.time_budget_seconds) break;
    RunOptions run;
    run.seed = options.first_seed + i;
    const Scenario scenario = fuzz_seed_scenario(scenarios[i % scenarios.size()], run.seed, options.buggify_share);
    run.mutations = *mutations;
    run.log_level = options.log_level;
    run.keep_history = true;
    coverage.before_run();
    RunResult result = run_scenario(scenario, run);
    coverage.after_run(scenario.name, scenario.buggify && !scenario.raft);
    ++ran;
    simulated += result.simulated_seconds;
    if (!result.passed()) {
      const std::string trace = fmt::format("{}/{}-{}.jsonl", options.trace_dir, scenario.name, run.seed);
      write_file(trace, result.history_jsonl);
      std::string first = result.report.violations.front().invariant + ": " + result.report.violations.front().evidence;
      if (first.size() > 300) first = first.substr(0, 300) + "...";
      failures.push_back(fmt::format("{} seed {}: {}\n    {}\n    trace: {}", scenario.name, run.seed, first,
                                     result.replay, trace));
    }
    if (elapsed() - last_progress >= 2.0) {
      last_progress = elapsed();
      std::fprintf(stderr, "fuzz: %" PRIu64 " seeds, %.1f seeds/s, %.0f simulated s per wall s, %zu failed\n", ran,
                   static_cast<double>(ran) / elapsed(), simulated / elapsed(), failures.size());
    }
  }
  const double wall = std::max(elapsed(), 1e-9);
  std::printf("fuzz: %" PRIu64 " seeds over %zu scenarios in %.1f s: %.2f seeds/s (%.0f per minute), %.1f simulated "
              "s per wall s; %zu failed\n",
              ran, scenarios.size(), wall, static_cast<double>(ran) / wall, 60.0 * static_cast<double>(ran) / wall,
              simulated / wall, failures.size());
  for (const std::string& f : failures) std::printf("  FAILED %s\n", f.c_str());
  print_probes_never_reached();
  coverage.report_buggify();
  const bool covered = coverage.report(scenarios);
  if (options.expect_failure) return failures.empty() ? 1 : 0;
  return failures.empty() && covered ? 0 : 1;
}

}  // namespace sluice::sim
