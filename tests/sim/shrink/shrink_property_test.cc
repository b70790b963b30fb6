// The shrinker as a RapidCheck property over real runs: RapidCheck generates a small scenario (fault schedule, knob
// values, workloads) and a seed; with a planted bug (skip-persisted-fsync: persisted acks=all writes acknowledged
// before their sync) the run usually fails (a case that passes is discarded); the shrinker cuts it down within a few
// runs, writes the scenario file, and the written file, loaded and run again, must fail the same way and be no
// larger. A few cases only: each is a handful of whole simulated runs, and the default test suite stays fast.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/scenario/knobs.h"
#include "sim/shrink/shrink.h"

namespace sluice::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Fault fault_gen(Duration duration) {
  Fault f;
  f.kind = *rc::gen::weightedElement<FaultKind>(
      {{2, FaultKind::kPowerLoss}, {1, FaultKind::kCrash}, {1, FaultKind::kRestart}});
  f.at = milliseconds(*rc::gen::inRange<int64_t>(500, std::chrono::duration_cast<milliseconds>(duration).count()));
  f.node = "n1";
  f.length = milliseconds(*rc::gen::inRange<int64_t>(100, 1500));
  return f;
}

WorkloadSpec producer_gen(const std::string& name, int16_t acks) {
  WorkloadSpec w;
  w.kind = WorkloadSpec::Kind::kProducer;
  w.name = name;
  w.producer.topic = "events";
  w.producer.acks = acks;
  w.producer.idempotent = acks == -1 && *rc::gen::arbitrary<bool>();
  w.producer.rate = *rc::gen::inRange(5, 60);
  w.producer.batch_records = *rc::gen::inRange(1, 4);
  return w;
}

// One broker, one persisted topic, an acks=all producer and maybe an acks=1 one and a consumer, one to four
// crashes, restarts and power losses (at least one power loss, which the planted bug needs), and a third of the
// knobs drawn from their ranges.
Scenario small_scenario_gen() {
  Scenario s;
  s.name = "shrink-property";
  s.duration = seconds(*rc::gen::inRange(2, 5));
  s.liveness = seconds(20);
  s.warmup = milliseconds(500);
  s.randomize_knobs = false;
  for (const Knob& knob : knobs()) {
    if (*rc::gen::inRange(0, 3) != 0) continue;
    s.broker[std::string(knob.key)] = std::string(*rc::gen::elementOf(knob.choices));
    s.drawn_knobs.emplace_back(knob.key);
  }
  TopicSpec topic;
  topic.name = "events";
  topic.partitions = *rc::gen::inRange(1, 3);
  topic.config["durability"] = "persisted";
  s.topics.push_back(topic);
  s.workloads.push_back(producer_gen("acks-all", -1));
  if (*rc::gen::arbitrary<bool>()) s.workloads.push_back(producer_gen("acks-1", 1));
  if (*rc::gen::arbitrary<bool>()) {
    WorkloadSpec consumer;
    consumer.kind = WorkloadSpec::Kind::kConsumer;
    consumer.name = "reader";
    consumer.consumer.topic = "events";
    s.workloads.push_back(consumer);
  }
  const int faults = *rc::gen::inRange(0, 4);
  for (int i = 0; i < faults; ++i) s.schedule.push_back(fault_gen(s.duration));
  Fault power_loss = fault_gen(s.duration);
  power_loss.kind = FaultKind::kPowerLoss;
  // Late enough that the producer has had writes acknowledged to lose.
  power_loss.at = std::max<Duration>(power_loss.at, seconds(1));
  s.schedule.push_back(power_loss);
  std::stable_sort(s.schedule.begin(), s.schedule.end(), [](const Fault& a, const Fault& b) { return a.at < b.at; });
  return s;
}

std::string scratch_dir() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sluice-shrink-property-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

int cases_shrunk = 0;

void a_shrunk_failure_still_fails_and_is_no_larger() {
  const Scenario scenario = small_scenario_gen();
  RunOptions run;
  run.seed = *rc::gen::inRange<uint64_t>(1, 1000);
  run.mutations.add(Mutation::kSkipPersistedFsync);
  ShrinkOptions options;
  options.max_runs = 5;
  options.path = shrunk_scenario_path(scratch_dir(), scenario, run.seed);
  const ShrinkResult r = shrink_failure(scenario, run, options);
  // A case whose run passed (the power loss struck a node already down, say) has nothing to shrink: discarded,
  // RapidCheck draws another in its place.
  RC_PRE(r.failed);
  ++cases_shrunk;
  RC_ASSERT(r.runs <= options.max_runs);
  RC_ASSERT(r.after.no_larger_than(r.before));
  {
    std::ofstream out(options.path, std::ios::trunc);
    out << shrunk_scenario_file(r, scenario, run);
  }
  const Result<Scenario> written = load_scenario_file(options.path);
  RC_ASSERT(written.ok());
  const RunOutcome replay = run_isolated(*written, run);
  RC_ASSERT(replay.fails_with(r.invariant));
  RC_ASSERT(written->schedule.size() == r.after.faults);
  RC_ASSERT(written->workloads.size() == r.after.workloads);
}

TEST(ShrinkProperty, AShrunkFailureStillFailsTheSameWayAndIsNoLarger) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = 3;  // each case is up to seven whole simulated runs
  const rc::detail::TestResult result =
      rc::detail::checkTestable(&a_shrunk_failure_still_fails_and_is_no_larger,
                                rc::detail::TestMetadata{"ShrinkProperty", "shrunk failures"}, params);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  std::printf("%s\n%d of the cases failed and were shrunk\n", message.str().c_str(), cases_shrunk);
  EXPECT_TRUE(result.template is<rc::detail::SuccessResult>()) << message.str();
  // Every case counted was a failure shrunk (a property that never shrank anything would have checked nothing).
  EXPECT_GE(cases_shrunk, params.maxSuccess) << message.str();
  std::filesystem::remove_all(scratch_dir());
}

}  // namespace
}  // namespace sluice::sim
