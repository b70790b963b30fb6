// The simulator's self-test behind `sluice sim --selftest`: a few nodes, each running a journaled EchoService,
// send each other messages over SimNetwork while a two-way partition and a power loss (with torn writes) strike.
// The checker then verifies that every acknowledged message is in its server's journal after recovery: the
// durability promise in miniature.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/log.h"

namespace sluice {

struct EchoScenarioOptions {
  uint64_t seed = 1;
  int nodes = 3;
  int simulated_seconds = 10;
  LogLevel log_level = LogLevel::kWarn;
  bool list_probes = false;
  bool selftest = false;  // --selftest: what `sluice sim` runs without a scenario
};

struct EchoScenarioResult {
  uint64_t seed = 0;
  double simulated_seconds = 0;
  uint64_t events = 0;
  uint64_t fiber_steps = 0;
  uint64_t trace_hash = 0;
  uint64_t messages_acked = 0;
  uint64_t messages_failed = 0;   // calls that got an error (partition, reset, crash): retried, not lost
  uint64_t journal_records = 0;   // records found in the journals after the run
  uint64_t torn_bytes_truncated = 0;
  uint64_t power_losses = 0;
  uint64_t lost_writes = 0;  // un-synced writes the disks dropped at power losses
  uint64_t torn_writes = 0;  // un-synced writes the disks tore at sector granularity
  std::vector<std::string> violations;  // acknowledged messages missing from a journal, and the like
};

EchoScenarioResult run_echo_scenario(const EchoScenarioOptions& options);

// Runs the scenario, prints the report (seed, simulated time, events, trace hash, speed) and returns the exit
// code: 0 when the checker found no violation.
int run_echo_scenario_cli(const EchoScenarioOptions& options);

}  // namespace sluice
