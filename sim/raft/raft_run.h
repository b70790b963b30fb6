// One seeded run of a raft scenario (`[raft]`): boot the nodes, wait until every group elected a leader, propose
// through the fault phase, heal, wait for liveness (every group leads, commits a fresh proposal, and every node
// applies it) within the scenario's bound, let the last proposals settle, then run the raft checkers.
#pragma once

#include "sim/scenario/runner.h"
#include "sim/scenario/scenario.h"

namespace sluice::sim {

// REQUIRES: scenario.raft. The scenario is expanded with the seed here.
RunResult run_raft_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace sluice::sim
