// A scenario: the topology, the broker's settings, the topics, the workloads, the faults (a schedule of values
// and/or rates a seed draws a schedule from), the phases' lengths and the checks. Scenario files are TOML
// (scenarios/*.toml; scenarios/README.md documents the format); the leading comment block of a file says which
// invariant it exercises and becomes its summary. A seed expands a scenario into one exact configuration (the
// drawn fault schedule included), which prints as a scenario file of its own: it replays the run without the seed's
// draws, and a shrinker can cut it down.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "sim/faults/fault.h"
#include "sim/workload/workload.h"

namespace sluice::sim {

struct TopicSpec {
  std::string name;
  int32_t partitions = 1;
  // Replicas of each partition on a cluster (brokers > 1); 0: min(brokers, 3). A single broker takes only 1.
  int32_t replication_factor = 0;
  std::map<std::string, std::string> config;  // Kafka topic configs: retention.ms, cleanup.policy, durability, ...
};

struct Expectations {
  // The run corrupts a closed segment: the damage must then be refused loudly, by a boot that will not load it (its
  // message names the file and `sluice log repair`) or by reads answered KAFKA_STORAGE_ERROR instead of the bad
  // bytes; liveness and the final read are skipped (the operator must repair first).
  bool damage_refused = false;
};

// A raft scenario (`[raft]`): the nodes run core/raft alone (a RaftHost and its transport each, their logs and hard
// states in files on the node's disk), no broker: proposers on every node propose to the groups it leads, and the
// raft checkers (sim/raft/raft_checks.h) judge what each node applied.
struct RaftSpec {
  int groups = 1;
  std::string durability = "persisted";  // or "replicated": when an entry counts toward commit on a node
  Duration propose_every = std::chrono::milliseconds(50);  // per node, to a random group it leads
  Duration tick = std::chrono::milliseconds(100);
  int election_ticks = 10;
  // A proposal is one entry covering 1 to max_count indexes, drawn per proposal (a partition's record batch of that
  // many records); 1: every entry covers one index, and nothing is drawn.
  int max_count = 1;
  // A leader still leading a term after another node led a later one, for longer than this, is a violation
  // (check-quorum should depose it within an election timeout). 0: not checked.
  Duration max_stale_leader{0};
  // Where each group's log lives: "raft-log" (core/raft's FileRaftLog, one entry per index) or "partition-log" (a
  // Kafka partition log as the raft log, core/cluster/partition_raft_log.h: a proposal is a record batch of as
  // many records as its entry covers indexes, one raft index per offset).
  std::string storage = "raft-log";
  // Proposer fibers per node, each waiting for its proposal's fate before the next: more than one lets a leader cut
  // off from its followers append several entries of its term that nobody else has (the raft paper's figure 8).
  int proposers = 1;
  // The leader's flow control (raft::Options): entries per append message and appends in flight per follower.
  // Small values make a leader catch a follower up over many round trips, an entry at a time.
  int max_entries_per_append = 64;
  int max_inflight_appends = 4;
};

struct Scenario {
  std::string name;
  std::string summary;  // the file's leading comment block
  std::string path;     // where it was loaded from ("" for one built in code)
  // 1: a single-node broker. More: one cluster (node.id 1..N, every node a controller voter), topics replicated.
  int brokers = 1;
  Duration duration = std::chrono::seconds(30);  // the fault phase
  Duration liveness = std::chrono::seconds(30);  // the bound on convergence after the heal
  Duration warmup = std::chrono::seconds(2);     // no random fault before this
  std::map<std::string, std::string> broker;     // Kafka-named broker settings (BrokerConfig::from_map)
  // Whether a seed draws the knobs (sim/scenario/knobs.h) [broker] leaves unset: `[knobs] randomize`, default true.
  // An expanded scenario has them drawn into `broker` (named in drawn_knobs) and this false.
  bool randomize_knobs = true;
  std::vector<std::string> drawn_knobs;
  // BUGGIFY (core/env/buggify.h) on every node of the run: `buggify = true`, `sluice sim --buggify`, or a share of
  // `sluice fuzz`'s seeds. Broker scenarios only (a [raft] scenario ignores it). An expanded scenario lists the
  // sites its seed switches on (printed as a comment: the seed picks them again on replay).
  bool buggify = false;
  std::vector<std::string> buggify_sites_on;
  std::vector<TopicSpec> topics;
  std::vector<WorkloadSpec> workloads;
  std::vector<Fault> schedule;
  std::vector<FaultRate> rates;
  std::set<std::string> checks;  // checker names to run (empty: all)
  // Mutations this scenario must catch within a bounded number of seeds (`sluice fuzz --prove-mutations`).
  std::vector<std::string> catches;
  // "Sometimes" assertions (`[checks] sometimes = { "probe.name" = 0.2 }`): each SLUICE_PROBE named must be reached
  // in at least that share of a fuzz run's seeds of this scenario, or `sluice fuzz` fails naming it.
  std::map<std::string, double> sometimes;
  Expectations expect;
  std::optional<RaftSpec> raft;
};

// Parses a scenario file's text. Errors name the file, the table and the field, and say what is accepted.
Result<Scenario> parse_scenario(std::string_view text, const std::string& path);
// Reads and parses a scenario file.
Result<Scenario> load_scenario_file(const std::string& path);

// The scenario as a file: every setting explicit, `schedule` as given (rates dropped when `schedule_only`).
std::string to_toml(const Scenario& scenario, bool schedule_only = false);

// The scenario a seed expands into: the knobs drawn (when randomize_knobs) and the fault schedule drawn from its
// rates (added to the fixed one, sorted by time), rates then dropped. Each draw has its own stream of `seed`.
Scenario expand(const Scenario& scenario, uint64_t seed);

// The seed that picks the BUGGIFY sites of a run of `seed` (the same for every node).
uint64_t buggify_run_seed(uint64_t seed);

// The broker node names of the scenario ("n1" ...) and the client node of each workload ("c1" ...).
std::vector<std::string> broker_names(const Scenario& scenario);

}  // namespace sluice::sim
