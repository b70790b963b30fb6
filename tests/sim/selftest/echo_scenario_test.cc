// The echo self-test scenario as a test: determinism (same seed, same trace hash) and the durability checker over seeds.
#include "sim/selftest/echo_scenario.h"

#include <gtest/gtest.h>

#include <set>

namespace sluice {
namespace {

EchoScenarioOptions options_for(uint64_t seed) {
  EchoScenarioOptions options;
  options.seed = seed;
  options.log_level = LogLevel::kOff;
  return options;
}

TEST(EchoScenario, SameSeedGivesSameTraceHash) {
  const EchoScenarioResult first = run_echo_scenario(options_for(42));
  const EchoScenarioResult second = run_echo_scenario(options_for(42));
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  EXPECT_EQ(first.events, second.events);
  EXPECT_EQ(first.fiber_steps, second.fiber_steps);
  EXPECT_EQ(first.messages_acked, second.messages_acked);
  EXPECT_GT(first.events, 1000u) << "the scenario must actually do something";
}

TEST(EchoScenario, DifferentSeedsGiveDifferentTraceHashes) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 1; seed <= 8; ++seed) hashes.insert(run_echo_scenario(options_for(seed)).trace_hash);
  EXPECT_EQ(hashes.size(), 8u);
}

TEST(EchoScenario, NoAcknowledgedMessageIsLostAcrossSeeds) {
  uint64_t acked = 0;
  uint64_t failed = 0;
  uint64_t power_losses = 0;
  for (uint64_t seed = 100; seed < 130; ++seed) {
    const EchoScenarioResult result = run_echo_scenario(options_for(seed));
    for (const std::string& violation : result.violations) ADD_FAILURE() << "seed " << seed << ": " << violation;
    EXPECT_GT(result.messages_acked, 0u) << "seed " << seed;
    EXPECT_GE(result.journal_records, result.messages_acked) << "seed " << seed;
    acked += result.messages_acked;
    failed += result.messages_failed;
    power_losses += result.power_losses;
  }
  // The faults must really strike: calls fail during the partition and the power loss.
  EXPECT_GT(failed, 0u);
  EXPECT_GE(power_losses, 30u * 2) << "one mid-run power loss per seed plus the final one on every node";
  EXPECT_GT(acked, 10000u);
}

}  // namespace
}  // namespace sluice
