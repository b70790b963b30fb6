// Simulation: one seeded world of a scenario, driven phase by phase. run_scenario (runner.h) drives it through the
// whole run in one call; the Python module drives it step by step (run for a while, inject a fault now, look at the
// history and the partitions' time series, heal, converge, check). Both give the same trace hash for the same
// steps: a Simulation runs nothing on its own.
//
// Order: setup() once, then start_workloads(); then any of schedule / inject / run_for / run_until; then heal(),
// converge(), stop_workloads(), final_read() (each once, in that order, any may be skipped) and finish().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/assert.h"
#include "sim/checkers/check.h"
#include "sim/history/history.h"
#include "sim/scenario/runner.h"
#include "sim/scenario/scenario.h"

namespace sluice {
class SimWorld;
}

namespace sluice::sim {

class RunWorld;
class Injector;
class Workload;
struct WorkloadContext;

// One partition of one broker at one instant (sampled every RunOptions::sample_every).
struct PartitionSample {
  double at_seconds = 0;  // virtual time
  std::string node;
  std::string topic;
  int32_t partition = 0;
  int64_t log_start = 0;
  int64_t log_end = 0;
  int64_t high_watermark = 0;
  uint64_t size_bytes = 0;
  double dirty_ratio = 0;  // bytes at or after the cleaner's checkpoint, over all (closed segments; 0 if none)
  size_t segments = 0;
};

class Simulation {
 public:
  // Expands `scenario` with options.seed (the drawn fault schedule is not yet scheduled: see schedule_drawn).
  Simulation(const Scenario& scenario, const RunOptions& options);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Boots the brokers and creates the scenario's topics. A failure is a "setup" violation in the report.
  Status setup();
  void start_workloads();
  // Schedules the scenario's faults (its fixed schedule plus what the seed drew), times relative to now.
  void schedule_drawn();
  // One fault at `fault.at` from now (0: at once). Errors: the node is not a broker of this world.
  Status inject(const Fault& fault);
  void run_for(Duration d);
  // Runs until `done` holds (checked between steps) or `limit` passes; true when it held.
  bool run_until(const std::function<bool()>& done, Duration limit);
  // Undoes every fault in effect; the liveness phase begins.
  void heal();
  // Runs until every workload converged, at most the scenario's liveness bound; else a "liveness" violation.
  bool converge();
  void stop_workloads();
  void final_read();
  // Expectations, checkers, trace hash and speed: the result. Call once, last.
  RunResult finish();

  const Scenario& scenario() const { return scenario_; }
  const History& history() const { return history_; }
  const std::vector<PartitionSample>& samples() const { return samples_; }
  double now_seconds() const;
  uint64_t trace_hash() const;
  // Whether every broker is serving.
  bool serving() const;

 private:
  // Runs the world to `deadline` or until `done` holds, stopping at each sampling instant on the way: samples are
  // taken between steps, outside the world, so sampling never changes a run (its trace hash included).
  bool advance(const std::function<bool()>& done, Instant deadline);
  SimWorld& running_world() const;
  void sample();
  void expectations();

  Scenario scenario_;
  RunOptions options_;
  History history_;  // first: the world's fibers write to it until they die
  RunResult result_;
  std::map<std::string, TopicFacts> facts_;
  int64_t retention_check_interval_ms_ = 5000;
  std::unique_ptr<RunWorld> world_;
  // What the calls after finish() answer: finish() frees the world before the checkers run.
  struct Finished {
    Instant now;
    bool serving = false;
    uint64_t trace_hash = 0;
  };
  std::optional<Finished> finished_;
  std::unique_ptr<WorkloadContext> ctx_;
  std::vector<std::unique_ptr<Workload>> workloads_;
  size_t running_ = 0;
  std::unique_ptr<Injector> injector_;
  std::vector<PartitionSample> samples_;
  Instant next_sample_{};
  AssertFailureHook previous_hook_;
  bool hooked_ = false;
  double wall_start_ = 0;
  uint64_t injected_timeouts_before_ = 0;  // BUGGIFY's client.answer-too-late firings before this run
};

}  // namespace sluice::sim
