// BUGGIFY in a scenario run: a scenario's `buggify = true` (or a fuzz seed's lot) switches it on on every node, the
// run stays deterministic, the expanded configuration says so and replays the same run, and a run without it fires
// no site.
#include <gtest/gtest.h>

#include "core/env/buggify.h"
#include "sim/scenario/commands.h"
#include "sim/scenario/runner.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

Scenario load(const std::string& name) {
  Result<Scenario> s = load_scenario_file(sluice::testing::source_path("scenarios/" + name));
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return *s;
}

// Firings of every BUGGIFY site linked in, so far.
uint64_t buggify_firings() {
  uint64_t hits = 0;
  for (const ProbeSite& site : probe_sites()) {
    if (std::string_view(site.name).starts_with("buggify.")) hits += site.hits;
  }
  return hits;
}

std::string violations(const RunResult& r) {
  std::string text;
  for (const Violation& v : r.report.violations) text += v.invariant + ": " + v.evidence + "\n";
  return text + "replay: " + r.replay;
}

TEST(BuggifyRun, OnFiresSitesStaysDeterministicAndReplaysFromItsExpandedFile) {
  Scenario scenario = load("crash_loop_persisted.toml");
  scenario.buggify = true;
  RunOptions options;
  options.seed = 3;
  const uint64_t before = buggify_firings();
  const RunResult first = run_scenario(scenario, options);
  EXPECT_TRUE(first.passed()) << violations(first);
  EXPECT_GT(buggify_firings(), before);
  EXPECT_NE(first.expanded.find("buggify = true"), std::string::npos);
  EXPECT_NE(first.expanded.find("# BUGGIFY sites this seed switches on: "), std::string::npos);
  EXPECT_NE(first.replay.find(" --buggify"), std::string::npos);
  const RunResult second = run_scenario(scenario, options);
  EXPECT_EQ(second.trace_hash, first.trace_hash);
  Result<Scenario> written = parse_scenario(first.expanded, scenario.path);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  EXPECT_TRUE(written->buggify);
  EXPECT_EQ(run_scenario(*written, options).trace_hash, first.trace_hash);
}

TEST(BuggifyRun, OffFiresNoSiteAndDiffersFromOn) {
  Scenario scenario = load("crash_loop_persisted.toml");
  RunOptions options;
  options.seed = 3;
  const uint64_t before = buggify_firings();
  const RunResult off = run_scenario(scenario, options);
  EXPECT_TRUE(off.passed()) << violations(off);
  EXPECT_EQ(buggify_firings(), before);
  EXPECT_EQ(off.expanded.find("buggify"), std::string::npos);
  scenario.buggify = true;
  EXPECT_NE(run_scenario(scenario, options).trace_hash, off.trace_hash);
}

TEST(BuggifyRun, AFuzzSeedsLotDependsOnTheSeedAlone) {
  const Scenario scenario = load("crash_loop_persisted.toml");
  int on = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const bool lot = fuzz_seed_scenario(scenario, seed, 0.5).buggify;
    EXPECT_EQ(fuzz_seed_scenario(scenario, seed, 0.5).buggify, lot);
    on += lot ? 1 : 0;
    EXPECT_FALSE(fuzz_seed_scenario(scenario, seed, 0.0).buggify);
    EXPECT_TRUE(fuzz_seed_scenario(scenario, seed, 1.0).buggify);
  }
  EXPECT_GT(on, 70);
  EXPECT_LT(on, 130);
}

}  // namespace
}  // namespace sluice::sim
