// The shrinker on a planted bug and real runs: crash_loop_persisted with skip-persisted-fsync (persisted acks=all
// writes acknowledged before their sync) loses acknowledged writes at a power loss. The shrunk scenario must have
// strictly fewer faults, workloads and operations, and the file written, loaded and run again, must still fail the
// same way with the bug and pass without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/shrink/shrink.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

TEST(Shrink, APlantedBugShrinksToASmallerScenarioThatStillFails) {
  Result<Scenario> scenario = load_scenario_file(sluice::testing::source_path("scenarios/crash_loop_persisted.toml"));
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  RunOptions run;
  run.seed = 1;  // the first seed that catches the bug (ci/test-sim.sh proves it within 24)
  run.mutations.add(Mutation::kSkipPersistedFsync);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sluice-shrink-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  ShrinkOptions options;
  options.max_runs = 12;
  options.path = shrunk_scenario_path(dir.string(), *scenario, run.seed);

  const ShrinkResult r = shrink_failure(expand(*scenario, run.seed), run, options);
  std::printf("shrunk in %d runs: faults %zu -> %zu, workloads %zu -> %zu, operations %" PRIu64 " -> %" PRIu64
              ", fault phase %s -> %s\n",
              r.runs, r.before.faults, r.after.faults, r.before.workloads, r.after.workloads, r.before.operations,
              r.after.operations, format_duration(r.before.duration).c_str(), format_duration(r.after.duration).c_str());
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.invariant, "lost-write");
  EXPECT_LE(r.runs, options.max_runs);
  EXPECT_LT(r.after.faults, r.before.faults);
  EXPECT_LT(r.after.workloads, r.before.workloads);
  EXPECT_LT(r.after.operations, r.before.operations);
  EXPECT_LT(r.after.duration, r.before.duration);
  EXPECT_TRUE(r.after.no_larger_than(r.before));

  {
    std::ofstream out(options.path, std::ios::trunc);
    out << shrunk_scenario_file(r, *scenario, run);
  }
  const Result<Scenario> written = load_scenario_file(options.path);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  EXPECT_EQ(written->schedule.size(), r.after.faults);
  const RunOutcome replay = run_isolated(*written, run);
  EXPECT_TRUE(replay.fails_with("lost-write"));
  EXPECT_EQ(replay.operations, r.after.operations);
  RunOptions without_bug = run;
  without_bug.mutations = MutationSet();
  EXPECT_TRUE(run_isolated(*written, without_bug).passed());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::sim
