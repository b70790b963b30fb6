// Raft scenarios end to end: parsing the [raft] table, a run that passes and replays, and planted bugs caught.
#include "sim/raft/raft_run.h"

#include <gtest/gtest.h>

#include "core/base/mutations.h"
#include "sim/raft/raft_checks.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

constexpr const char* kIsolatedLeader = R"(
name = "raft-isolated"
brokers = 3
duration = "20s"
liveness = "30s"
[raft]
groups = 3
max_stale_leader = "3s"
[faults]
schedule = [
  { at = "5s", kind = "partition", node = "n1", length = "10s" },
]
)";

Scenario parsed(const char* text) {
  Result<Scenario> s = parse_scenario(text, "test.toml");
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? *s : Scenario{};
}

TEST(RaftScenario, TheRaftTableParsesAndPrintsBack) {
  const Scenario s = parsed(kIsolatedLeader);
  ASSERT_TRUE(s.raft.has_value());
  EXPECT_EQ(s.brokers, 3);
  EXPECT_EQ(s.raft->groups, 3);
  EXPECT_EQ(s.raft->max_stale_leader, std::chrono::seconds(3));
  const Scenario again = parsed(to_toml(s).c_str());
  ASSERT_TRUE(again.raft.has_value());
  EXPECT_EQ(again.raft->groups, 3);
  EXPECT_EQ(again.schedule, s.schedule);
}

TEST(RaftScenario, BadRaftSettingsAreRefusedByName) {
  EXPECT_FALSE(parse_scenario("name = \"x\"\nbrokers = 3\n[raft]\ndurability = \"maybe\"\n", "x.toml").ok());
  EXPECT_FALSE(parse_scenario("name = \"x\"\nbrokers = 3\n[raft]\ngroups = 0\n", "x.toml").ok());
  EXPECT_FALSE(parse_scenario("name = \"x\"\nbrokers = 10\n[raft]\n", "x.toml").ok());  // 1..9 nodes
  const auto topics = parse_scenario("name = \"x\"\nbrokers = 3\n[raft]\n[[topics]]\nname = \"t\"\n", "x.toml");
  ASSERT_FALSE(topics.ok());
  EXPECT_NE(topics.status().message().find("no topics"), std::string::npos);
}

TEST(RaftScenario, AnIsolatedLeaderRunPassesAndReplaysWithTheSameTraceHash) {
  const Scenario s = parsed(kIsolatedLeader);
  RunOptions options;
  options.seed = 4;
  const RunResult first = run_raft_scenario(s, options);
  EXPECT_TRUE(first.passed()) << (first.passed() ? "" : first.report.violations[0].evidence);
  EXPECT_GT(first.report.figures.at("raft proposals committed"), 100);
  const RunResult second = run_raft_scenario(s, options);
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  options.seed = 5;
  EXPECT_NE(run_raft_scenario(s, options).trace_hash, first.trace_hash);
}

TEST(RaftScenario, ALeaderIgnoringCheckQuorumIsCaughtAsStale) {
  const Scenario s = parsed(kIsolatedLeader);
  RunOptions options;
  options.seed = 4;
  options.mutations.add(Mutation::kRaftIgnoreCheckQuorum);
  const RunResult r = run_raft_scenario(s, options);
  ASSERT_FALSE(r.passed());
  EXPECT_EQ(r.report.violations.front().invariant, "raft-stale-leader");
}

}  // namespace
}  // namespace sluice::sim

namespace sluice::sim {
namespace {

// Entries covering spans (a partition's record batches) under the crash and partition mix: the checkers compare
// whole entries (span included) by their first index, and the scenario prints back with its max_count.
TEST(RaftScenario, EntriesCoveringSpansPassUnderCrashesAndPartitions) {
  Result<Scenario> s = load_scenario_file(sluice::testing::source_path("scenarios/raft_spans.toml"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE(s->raft.has_value());
  EXPECT_EQ(s->raft->max_count, 500);
  const Scenario again = parsed(to_toml(*s).c_str());
  ASSERT_TRUE(again.raft.has_value());
  EXPECT_EQ(again.raft->max_count, 500);
  for (uint64_t seed : {2, 3}) {
    RunOptions options;
    options.seed = seed;
    const RunResult r = run_raft_scenario(*s, options);
    EXPECT_TRUE(r.passed()) << "seed " << seed << ": " << (r.passed() ? "" : r.report.violations[0].evidence);
    EXPECT_GT(r.report.figures.at("raft proposals committed"), 50) << "seed " << seed;
  }
  EXPECT_FALSE(parse_scenario("name = \"x\"\nbrokers = 3\n[raft]\nmax_count = 0\n", "x.toml").ok());
}

// Seed 1233 crashes a node while its graceful stop waits for the transport's fibers: the join in a destructor met
// FiberKilled and terminated the process, until the host's and the transport's destructors caught it.
TEST(RaftScenario, ACrashDuringAGracefulStopUnwindsCleanly) {
  Result<Scenario> s = load_scenario_file(sluice::testing::source_path("scenarios/raft_crashes_partitions.toml"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  RunOptions options;
  options.seed = 1233;
  const RunResult r = run_raft_scenario(*s, options);
  EXPECT_TRUE(r.passed()) << (r.passed() ? "" : r.report.violations[0].evidence);
}

}  // namespace
}  // namespace sluice::sim
