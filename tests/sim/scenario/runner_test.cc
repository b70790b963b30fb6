// The scenario runner under the sanitizers: every scenario in scenarios/ passes one seed (the real broker, the
// real client, the faults and the checkers, with ASan and UBSan watching); a seed replays to the same trace hash
// in one process; a planted mutation is caught where the same seeds pass without it. (ci/test-sim.sh runs many
// more seeds on the release build.)
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/scenario/runner.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

Scenario load(const std::string& name) {
  Result<Scenario> s = load_scenario_file(sluice::testing::source_path("scenarios/" + name));
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return *s;
}

std::string violations(const RunResult& r) {
  std::string text;
  for (const Violation& v : r.report.violations) text += v.invariant + ": " + v.evidence + "\n";
  return text + "replay: " + r.replay;
}

class EveryScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScenario, PassesSeedOne) {
  RunOptions options;
  options.seed = 1;
  const RunResult r = run_scenario(load(GetParam()), options);
  EXPECT_TRUE(r.passed()) << violations(r);
  EXPECT_GT(r.operations, 100u);
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(sluice::testing::source_path("scenarios"))) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, EveryScenario, ::testing::ValuesIn(scenario_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Seeds that once failed, with what they found: each must keep passing.
TEST(Runner, SeedsThatFoundBugsStillPass) {
  struct Found {
    std::string scenario;
    uint64_t seed;
    std::string bug;
    bool buggify = false;
  };
  const std::vector<Found> found = {
      {"read_corruption.toml", 4, "a damaged base offset (outside the batch CRC) served, then a wrong position hint"},
      {"read_corruption.toml", 5, "the same, in another batch"},
      {"read_corruption.toml", 8, "a damaged header read at load took the partition offline for good"},
      {"cluster_read_corruption.toml", 1, "a poisoned partition raft log broke raft's assertions in the same step"},
      {"cluster_read_corruption.toml", 2, "a damaged read of the metadata raft log took the cluster offline"},
      {"cluster_read_corruption.toml", 7, "a header walk stepped over a damaged header into the next segment"},
      {"cluster_five_nodes.toml", 934, "a follower back from a pre-vote campaign never learnt an idle leader's commit"},
      {"cluster_crashes_partitions.toml", 1829, "two retries of one window, duplicates both, tripped the producer", true},
      {"read_corruption.toml", 6030, "a first batch's base offset read lower was served: 906 held 908's record"},
      {"interior_corruption.toml", 6659, "a base offset damaged past the log end was answered empty, not refused", true},
      {"disk_full_roll.toml", 8801, "a load refused by a full disk at boot kept the partition offline for good", true},
      {"disk_full_roll.toml", 5127, "KAFKA_STORAGE_ERROR for a batch the .log held was recorded failed", true},
      {"cluster_follower_produce.toml", 23272, "an acks=0 forward BUGGIFY timed out counted as lost without faults", true},
      {"read_corruption.toml", 53727, "a swap's scan read a bad base offset: a cleaned segment ended at 268436255", true},
  };
  for (const Found& f : found) {
    RunOptions options;
    options.seed = f.seed;
    Scenario scenario = load(f.scenario);
    scenario.buggify = scenario.buggify || f.buggify;
    const RunResult r = run_scenario(scenario, options);
    EXPECT_TRUE(r.passed()) << f.scenario << " seed " << f.seed << " (" << f.bug << "):\n" << violations(r);
  }
}

TEST(Runner, ASeedReplaysToTheSameTraceHash) {
  const Scenario scenario = load("network_faults.toml");
  RunOptions options;
  options.seed = 5;
  options.record_events = true;
  const RunResult first = run_scenario(scenario, options);
  const RunResult second = run_scenario(scenario, options);
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  EXPECT_EQ(first.events_trace, second.events_trace);
  options.seed = 6;
  EXPECT_NE(run_scenario(scenario, options).trace_hash, first.trace_hash);
}

TEST(Runner, APlantedMutationIsCaughtAndTheSameSeedsPassWithoutIt) {
  const Scenario scenario = load("crash_loop_persisted.toml");
  RunOptions options;
  options.mutations.add(Mutation::kAckBeforeAppend);
  std::optional<uint64_t> caught;
  for (uint64_t seed = 1; seed <= 4 && !caught; ++seed) {
    options.seed = seed;
    if (!run_scenario(scenario, options).passed()) caught = seed;
  }
  ASSERT_TRUE(caught.has_value()) << "ack-before-append survived seeds 1..4";
  options.mutations = MutationSet();
  for (uint64_t seed = 1; seed <= *caught; ++seed) {
    options.seed = seed;
    const RunResult r = run_scenario(scenario, options);
    EXPECT_TRUE(r.passed()) << violations(r);
  }
}

TEST(Runner, TheExpandedConfigurationReplaysTheSameRun) {
  const Scenario scenario = load("crash_loop_replicated.toml");
  RunOptions options;
  options.seed = 9;
  const RunResult drawn = run_scenario(scenario, options);
  Result<Scenario> written = parse_scenario(drawn.expanded, scenario.path);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  const RunResult replayed = run_scenario(*written, options);
  EXPECT_EQ(replayed.trace_hash, drawn.trace_hash);
}

}  // namespace
}  // namespace sluice::sim
