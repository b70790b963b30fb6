// One scenario run in a child process. A planted bug may trip one of the core's own assertions (raft's state
// machine asserts the invariants a mutation breaks), which aborts the process: run in a child, that is a failure
// like any violation, and the caller (the fuzz command's mutation proofs, the shrinker) goes on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/runner.h"

namespace sluice::sim {

// The invariant named when the run's process died instead of finishing.
inline constexpr std::string_view kCoreAssertion = "an assertion of the core";

struct RunOutcome {
  std::vector<std::string> violated;  // each violation's invariant, in the report's order; empty: passed
  uint64_t operations = 0;            // client operations (proposals in a raft scenario) the run recorded
  size_t faults_applied = 0;

  bool passed() const { return violated.empty(); }
  bool fails_with(const std::string& invariant) const;
  std::string first() const { return violated.empty() ? "" : violated.front(); }
};

RunOutcome run_isolated(const Scenario& scenario, const RunOptions& options);

}  // namespace sluice::sim
