// The shrinker's search on a model of a run (no simulation: each "run" is a function of the scenario), so its cuts,
// its budget and its determinism are checked in microseconds. shrink_test.cc shrinks real runs.
#include <gtest/gtest.h>

#include "sim/shrink/shrink.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Scenario expanded_crash_loop(uint64_t seed) {
  Result<Scenario> s = load_scenario_file(sluice::testing::source_path("scenarios/crash_loop_persisted.toml"));
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return expand(*s, seed);
}

bool has_workload(const Scenario& s, const std::string& name) {
  for (const WorkloadSpec& w : s.workloads) {
    if (w.name == name) return true;
  }
  return false;
}

bool has_consumer(const Scenario& s) {
  for (const WorkloadSpec& w : s.workloads) {
    if (w.kind == WorkloadSpec::Kind::kConsumer) return true;
  }
  return false;
}

// Fails "lost-writes" while the acks-all producer runs and a power loss strikes at 20 s or later within the fault
// phase. Operations: the batches the producers send.
RunOutcome model_run(const Scenario& s, const RunOptions&) {
  RunOutcome outcome;
  for (const WorkloadSpec& w : s.workloads) {
    if (w.kind == WorkloadSpec::Kind::kProducer) {
      outcome.operations += static_cast<uint64_t>(w.producer.rate * std::chrono::duration<double>(s.duration).count());
    }
  }
  bool power_loss = false;
  for (const Fault& f : s.schedule) power_loss = power_loss || (f.kind == FaultKind::kPowerLoss && f.at >= seconds(20));
  if (has_workload(s, "acks-all") && power_loss) outcome.violated.emplace_back("lost-writes");
  return outcome;
}

Scenario with_late_power_loss(Scenario s) {
  Fault power_loss;
  power_loss.at = seconds(25);
  power_loss.kind = FaultKind::kPowerLoss;
  power_loss.node = "n1";
  power_loss.length = seconds(2);
  s.schedule.push_back(power_loss);
  return s;
}

TEST(ShrinkModel, CutsToTheOneFaultAndWorkloadTheFailureNeeds) {
  const Scenario original = with_late_power_loss(expanded_crash_loop(3));
  ShrinkOptions options;
  options.path = "shrunk.toml";
  const ShrinkResult r = shrink_failure(original, RunOptions{}, options, model_run);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.invariant, "lost-writes");
  EXPECT_GT(r.before.faults, 3u);
  EXPECT_EQ(r.before.workloads, 4u);
  ASSERT_EQ(r.after.faults, 1u);
  EXPECT_EQ(r.shrunk.schedule.front().kind, FaultKind::kPowerLoss);
  EXPECT_EQ(r.shrunk.schedule.front().length, milliseconds(100));  // halved while the model does not care
  ASSERT_EQ(r.after.workloads, 1u);
  EXPECT_EQ(r.shrunk.workloads.front().name, "acks-all");
  EXPECT_EQ(r.shrunk.workloads.front().producer.rate, 1);
  EXPECT_EQ(r.shrunk.workloads.front().producer.batch_records, 1);
  EXPECT_EQ(r.shrunk.topics.front().partitions, 1);
  EXPECT_EQ(r.after.drawn_knobs, 0u);
  EXPECT_GT(r.before.drawn_knobs, 0u);
  EXPECT_EQ(r.shrunk.broker.at("log.segment.bytes"), "65536");  // the scenario's own setting, not a drawn knob
  EXPECT_LT(r.after.duration, r.before.duration);
  EXPECT_GT(r.shrunk.duration, r.shrunk.schedule.front().at);
  EXPECT_LT(r.after.operations, r.before.operations / 10);
  EXPECT_TRUE(r.after.no_larger_than(r.before));
  EXPECT_LE(r.runs, options.max_runs);
}

TEST(ShrinkModel, TheWrittenFileParsesToTheShrunkScenarioAndStillFails) {
  const Scenario original = with_late_power_loss(expanded_crash_loop(3));
  ShrinkOptions options;
  options.path = "out/crash-loop-persisted-seed3-shrunk.toml";
  RunOptions run;
  run.seed = 3;
  run.mutations.add(Mutation::kSkipPersistedFsync);
  const ShrinkResult r = shrink_failure(original, run, options, model_run);
  const std::string text = shrunk_scenario_file(r, original, run);
  EXPECT_NE(text.find("# Shrunk from crash-loop-persisted"), std::string::npos) << text;
  EXPECT_NE(text.find("sluice sim --scenario out/crash-loop-persisted-seed3-shrunk.toml --seed 3 --mutation "
                      "skip-persisted-fsync"),
            std::string::npos)
      << text;
  Result<Scenario> parsed = parse_scenario(text, options.path);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->schedule, r.shrunk.schedule);
  EXPECT_EQ(parsed->workloads.size(), 1u);
  EXPECT_FALSE(parsed->randomize_knobs);  // a replay draws no knobs
  EXPECT_TRUE(parsed->rates.empty());
  EXPECT_TRUE(model_run(*parsed, run).fails_with("lost-writes"));
}

TEST(ShrinkModel, NeverKeepsACutThatFailsAnotherWay) {
  // Without the consumer this model fails "offsets" instead: the consumer must stay.
  const CandidateRunner offsets_without_consumer = [](const Scenario& s, const RunOptions& o) {
    RunOutcome outcome = model_run(s, o);
    if (!has_consumer(s)) outcome.violated = {"offsets"};
    return outcome;
  };
  const Scenario original = with_late_power_loss(expanded_crash_loop(3));
  const ShrinkResult r = shrink_failure(original, RunOptions{}, ShrinkOptions{}, offsets_without_consumer);
  EXPECT_EQ(r.invariant, "lost-writes");
  ASSERT_EQ(r.shrunk.workloads.size(), 2u);
  EXPECT_TRUE(has_workload(r.shrunk, "acks-all"));
  EXPECT_TRUE(has_consumer(r.shrunk));
}

TEST(ShrinkModel, ARunThatPassesIsNotShrunk) {
  Scenario passes = expanded_crash_loop(3);
  std::erase_if(passes.schedule, [](const Fault& f) { return f.kind == FaultKind::kPowerLoss; });
  const ShrinkResult nothing = shrink_failure(passes, RunOptions{}, ShrinkOptions{}, model_run);
  EXPECT_FALSE(nothing.failed);
  EXPECT_EQ(nothing.runs, 1);
  EXPECT_EQ(nothing.shrunk.schedule, passes.schedule);
  EXPECT_EQ(nothing.after.workloads, nothing.before.workloads);
}

TEST(ShrinkModel, IsDeterministicAndKeepsToItsBudget) {
  const Scenario original = with_late_power_loss(expanded_crash_loop(5));
  ShrinkOptions options;
  const ShrinkResult a = shrink_failure(original, RunOptions{}, options, model_run);
  const ShrinkResult b = shrink_failure(original, RunOptions{}, options, model_run);
  EXPECT_EQ(to_toml(a.shrunk, true), to_toml(b.shrunk, true));
  options.max_runs = 4;
  int runs = 0;
  const CandidateRunner counting = [&](const Scenario& s, const RunOptions& o) {
    ++runs;
    return model_run(s, o);
  };
  const ShrinkResult bounded = shrink_failure(original, RunOptions{}, options, counting);
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(bounded.runs, 4);
  EXPECT_TRUE(bounded.after.no_larger_than(bounded.before));
}

}  // namespace
}  // namespace sluice::sim
