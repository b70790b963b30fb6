// The injected fault drop-acks0-forwards (sim/faults/fault.h): KubeMQ's follower behaviour as a value in a schedule.
// While it holds, the node drops the acks=0 produces it should forward, and the lost-writes checker counts those
// writes as a figure (acks=0 promises nothing) while every acks=1 and acks=all write sent through the same node
// survives; without the fault, the same run loses nothing. It is refused where nothing is forwarded.
#include <gtest/gtest.h>

#include "sim/scenario/runner.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

Scenario drop_fault_scenario() {
  Result<Scenario> s = load_scenario_file(sluice::testing::source_path("scenarios/cluster_follower_drop_fault.toml"));
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return *s;
}

int64_t figure(const RunResult& r, const std::string& name) {
  auto it = r.report.figures.find(name);
  return it == r.report.figures.end() ? 0 : it->second;
}

std::string summary(const RunResult& r) {
  std::string text;
  for (const Violation& v : r.report.violations) text += v.invariant + ": " + v.evidence + "\n";
  for (const auto& [name, count] : r.report.figures) text += name + " = " + std::to_string(count) + "\n";
  return text + "replay: " + r.replay;
}

TEST(DropAcks0Fault, LosesOnlyTheAcks0WritesTheNodeShouldHaveForwarded) {
  RunOptions options;
  options.seed = 1;
  const RunResult r = run_scenario(drop_fault_scenario(), options);
  EXPECT_TRUE(r.passed()) << summary(r);
  EXPECT_EQ(r.faults_applied, 1u);
  // 30 acks=0 records/s through n2 for 8 s, of which n2 leads about a third: about 160 dropped.
  EXPECT_GT(figure(r, "acks=0 lost without power loss"), 40) << summary(r);
  EXPECT_GT(figure(r, "acks=0 acknowledged and present"), 200) << summary(r);
  EXPECT_EQ(figure(r, "acks=1 lost without power loss"), 0) << summary(r);
  EXPECT_GT(figure(r, "acks=1 acknowledged and present"), 200) << summary(r);
  EXPECT_EQ(figure(r, "acks=all lost (violations)"), 0) << summary(r);
}

TEST(DropAcks0Fault, WithoutItTheSameRunLosesNothing) {
  Scenario scenario = drop_fault_scenario();
  scenario.schedule.clear();
  RunOptions options;
  options.seed = 1;
  const RunResult r = run_scenario(scenario, options);
  EXPECT_TRUE(r.passed()) << summary(r);  // a run without faults: the checker fails on any write lost
  EXPECT_EQ(figure(r, "acks=0 lost without power loss"), 0) << summary(r);
  EXPECT_GT(figure(r, "acks=0 acknowledged and present"), 300) << summary(r);
}

TEST(DropAcks0Fault, IsRefusedWhereNothingIsForwarded) {
  const std::string single = R"(
name = "x"
[[topics]]
name = "t"
[faults]
schedule = [ { at = "1s", kind = "drop-acks0-forwards", node = "n1" } ]
)";
  Result<Scenario> s = parse_scenario(single, "single.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("needs a cluster of brokers"), std::string::npos) << s.status().to_string();
  const std::string rated = R"(
name = "x"
[[topics]]
name = "t"
[faults]
rates = [ { kind = "drop-acks0-forwards", per_minute = 2 } ]
)";
  s = parse_scenario(rated, "rated.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("needs a cluster of brokers"), std::string::npos) << s.status().to_string();
}

}  // namespace
}  // namespace sluice::sim
