// The final read: after the liveness phase, a fresh client reads every partition of the scenario's topics whole,
// from the log start to the high watermark, and records each as one kFinalRead operation. The lost-write and
// compaction checkers judge against it.
#pragma once

#include "core/client/client.h"
#include "sim/checkers/check.h"
#include "sim/history/history.h"
#include "sim/scenario/run_world.h"
#include "sim/scenario/scenario.h"

namespace sluice::sim {

// Runs on a client node of its own; a partition that cannot be read whole within the bound is a violation
// ("final-read"), unless its topic no longer exists.
void final_read(RunWorld& world, const Scenario& scenario, const client::ClientConfig& config, History& history,
                CheckReport& report);

}  // namespace sluice::sim
