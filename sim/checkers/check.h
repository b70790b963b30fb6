// Checkers: the invariants a run's history must satisfy, each in its own file, each proven able to fail by a
// mutation (core/base/mutations.h) that some scenario catches. They read the history (what clients did and saw,
// what the world did to the brokers, what the brokers declared they removed) and the scenario's topic facts, never
// the brokers' memory: a checker sees what a Kafka user could see, plus the declared effects that explain
// legitimate removals. A violation names the invariant and the minimal evidence; figures are counts reported
// beside (acks=1 and acks=0 losses, duplicates a non-idempotent producer may make, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/history/history.h"

namespace sluice::sim {

// What the scenario declared of a topic (its config overrides over the broker's defaults).
struct TopicFacts {
  std::string name;
  int32_t partitions = 1;
  bool compacted = false;          // cleanup.policy contains compact
  bool deletes = true;             // cleanup.policy contains delete
  bool persisted = false;          // durability=persisted
  int64_t retention_ms = 604800000;
  int64_t retention_bytes = -1;
  int64_t delete_retention_ms = 86400000;
  bool offsets_persisted = false;  // consumer.offset.durability=persisted (for __consumer_offsets' commits)
};

struct CheckContext {
  const History& history;
  std::map<std::string, TopicFacts> topics;
  int64_t retention_check_interval_ms = 5000;
  int64_t wall_epoch_ms = 0;  // a broker's wall clock at virtual time 0 (SimClock::kWallEpochMs)
  int brokers = 1;            // more than 1: one cluster, whose partitions are replicated
};

struct Violation {
  std::string invariant;  // "lost-write", "duplicate", ...
  std::string evidence;   // offsets, keys, operations
};

struct CheckReport {
  std::vector<Violation> violations;
  std::map<std::string, int64_t> figures;  // "acks=1 lost to power loss" -> 3
  std::vector<std::string> notes;
  void fail(std::string invariant, std::string evidence) {
    violations.push_back({std::move(invariant), std::move(evidence)});
  }
  void count(const std::string& figure, int64_t n = 1) { figures[figure] += n; }
};

// Runs the checkers named in `names` (every checker when empty) and returns the report.
CheckReport run_checkers(const CheckContext& ctx, const std::set<std::string>& names = {});
// The checker names, in the order they run.
std::vector<std::string> checker_names();
// At most this many violations of one invariant are reported (the rest are counted).
inline constexpr size_t kViolationsPerInvariantMax = 5;

}  // namespace sluice::sim
