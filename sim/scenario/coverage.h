// Probe coverage across a fuzz run: which SLUICE_PROBE sites each seed reached, per scenario, judged against the
// "sometimes" assertions scenarios make (`[checks] sometimes`): a probe a scenario exists to reach must be reached in
// at least its share of the seeds, or the seeds are not testing what the scenario claims.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace sluice::sim {

class ProbeCoverage {
 public:
  // The tally of every BUGGIFY run, kept beside the scenarios' (no scenario file has this name).
  static constexpr const char* kBuggifyRuns = "(buggify runs)";

  // A share is judged only over at least this many seeds of its scenario; fewer say too little.
  static constexpr uint64_t kMinSeedsJudged = 10;

  // Around each run: before_run() snapshots every probe's hits, after_run() credits the probes that grew.
  void before_run();
  // `buggify`: the run had BUGGIFY on; its sites' firings are also tallied over every such run (report_buggify).
  void after_run(const std::string& scenario, bool buggify = false);

  uint64_t seeds(const std::string& scenario) const;
  uint64_t seeds_reaching(const std::string& scenario, const std::string& probe) const;

  // Prints each sometimes-assertion with the share of seeds that reached it; false when one fell short (over at
  // least kMinSeedsJudged seeds) or names a probe this binary does not have.
  bool report(const std::vector<Scenario>& scenarios) const;
  // Prints each BUGGIFY site linked in with the share of BUGGIFY seeds (of every scenario) in which it fired.
  void report_buggify() const;

 private:
  std::vector<uint64_t> snapshot_;
  std::map<std::string, uint64_t> seeds_;
  std::map<std::string, std::map<std::string, uint64_t>> reached_;
};

}  // namespace sluice::sim
