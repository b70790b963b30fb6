// The index every checker reads: the history digested once into writes, observations, log starts, topic
// incarnations and broker clocks. Nothing here judges; the checkers do.
#pragma once

#include <map>
#include <unordered_map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/checkers/check.h"

namespace sluice::sim {

// A partition in one incarnation of its topic (a deleted and recreated topic starts a new one).
struct PartitionKey {
  std::string topic;
  int32_t partition = 0;
  int incarnation = 0;
  auto operator<=>(const PartitionKey&) const = default;
  std::string to_string() const;
};

// One record a produce operation wrote.
struct Write {
  const Operation* op = nullptr;
  size_t index = 0;  // in op->records
  const RecordView& record() const { return op->records[index]; }
  bool acked() const { return op->completed && op->outcome == Outcome::kOk; }
  int64_t offset() const { return record().offset; }  // -1 unless acknowledged with acks != 0
};

// A record some client saw at an offset: a fetch or final read returned it, or a produce was acknowledged with it.
// Points into the history, which outlives the analysis.
struct Observation {
  uint64_t digest = 0;  // 0: tombstone (then key tells it apart)
  const RecordView* record = nullptr;
  Instant at{};
  const Operation* op = nullptr;
  const std::optional<std::string>& key() const { return record->key; }
};

// Every observation of one partition, grouped by offset in increasing order; at one offset, in history order.
// Sorted once into one vector (a tree node and a vector per offset cost more than the checks that read them).
// Iterates as (offset, span of observations).
class ObservationsByOffset {
 public:
  using Group = std::pair<int64_t, std::span<const Observation>>;
  ObservationsByOffset() = default;
  ObservationsByOffset(const ObservationsByOffset&) = delete;
  ObservationsByOffset& operator=(const ObservationsByOffset&) = delete;
  ObservationsByOffset(ObservationsByOffset&&) = default;  // the groups' spans point into the moved buffer
  ObservationsByOffset& operator=(ObservationsByOffset&&) = default;

  void add(int64_t offset, Observation observation) { pending_.emplace_back(offset, std::move(observation)); }
  // Sorts and groups what add() gathered; before it the groups are empty.
  void seal();
  std::vector<Group>::const_iterator begin() const { return groups_.begin(); }
  std::vector<Group>::const_iterator end() const { return groups_.end(); }
  size_t size() const { return groups_.size(); }

 private:
  std::vector<std::pair<int64_t, Observation>> pending_;
  std::vector<Observation> sorted_;
  std::vector<Group> groups_;
};

struct FinalRead {
  const Operation* op = nullptr;
  std::map<int64_t, const RecordView*> records;  // by offset
  int64_t log_start = -1;
  int64_t high_watermark = -1;
};

class Analysis {
 public:
  explicit Analysis(const CheckContext& ctx);

  const CheckContext& ctx() const { return ctx_; }
  const TopicFacts* topic(const std::string& name) const;

  // Which incarnation of the partition an operation at time `t` addressed (deletions the broker declared before).
  int incarnation(const std::string& topic, int32_t partition, Instant t) const;
  PartitionKey key_at(const TopicPartitionId& tp, Instant t) const {
    return PartitionKey{tp.topic, tp.partition, incarnation(tp.topic, tp.partition, t)};
  }
  // The incarnation an operation addressed; nullopt when a declared deletion of its partition fell between its
  // invocation and completion (it may have reached either incarnation: nothing is judged by it).
  std::optional<PartitionKey> key_of(const Operation& op) const;
  // Whether the partition was deleted (declared by the broker) after `t`.
  bool deleted_after(const std::string& topic, int32_t partition, Instant t) const;

  const std::vector<Write>& writes() const { return writes_; }
  // The write that produced `digest` (values are unique), or null.
  const Write* write_of(uint64_t digest) const;
  // Every observation, by partition and offset.
  const std::map<PartitionKey, ObservationsByOffset>& observations() const {
    return observations_;
  }
  // The final read of each partition of the last incarnation (by partition key).
  const std::map<PartitionKey, FinalRead>& final_reads() const { return final_reads_; }

  // Whether any broker lost power at or after `t`.
  bool power_loss_after(Instant t) const;
  // Whether power losses from `t` (or within [a, b]) struck enough brokers, each node counted once, to take a record
  // a quorum had in its page cache only (`replicated`): 2 * majority - n of them, so 1 on one broker or an odd
  // cluster (the quorum's other members may merely be down while the rest elect a leader without it: the trade-off
  // core/raft/README.md states), 2 on an even one.
  bool quorum_power_loss_after(Instant t) const;
  bool quorum_power_loss_between(Instant a, Instant b) const;
  // Whether a fault began, or a node went down, at or before `t` (a partition begun earlier may still hold); whether
  // the run had none at all (then nothing may be lost, whatever the acks).
  bool fault_before(Instant t) const { return !faults_.empty() && faults_.front() <= t; }
  bool faultless() const { return faults_.empty(); }
  bool cluster() const { return ctx_.brokers > 1; }
  // The broker's wall clock (ms) at virtual time t, and its least and greatest value over [a, b]. One broker's:
  // the first's (clusters come with replication, and each broker's clock with them).
  int64_t wall_ms(Instant t) const;
  int64_t min_wall_ms(Instant a, Instant b) const;
  int64_t max_wall_ms(Instant a, Instant b) const;
  // Whether some broker was serving without interruption through [a, b].
  bool serving_throughout(Instant a, Instant b) const;
  // Whether recovery declared a cut of `tp` covering `offset` between a and b.
  bool truncated_between(const std::string& topic, int32_t partition, int64_t offset, Instant a, Instant b) const;
  // The largest DeleteRecords cut of the partition invoked before `t` (-1 when none).
  int64_t delete_records_cut_before(const PartitionKey& key, Instant t) const;
  // Of a topic config key, the least and greatest values in effect at any time before `t` (alter-config ops).
  // A negative value (retention.ms=-1: forever) counts as INT64_MAX.
  std::pair<int64_t, int64_t> config_range(const std::string& topic, const std::string& key, int64_t initial,
                                           Instant t) const;

 private:
  void index_ops();
  void index_world();
  void observe(const PartitionKey& key, int64_t offset, const RecordView& r, Instant at, const Operation* op);

  const CheckContext& ctx_;
  std::vector<Write> writes_;
  std::unordered_map<uint64_t, size_t> write_by_digest_;  // looked up only, never walked in order
  std::map<PartitionKey, ObservationsByOffset> observations_;
  std::map<PartitionKey, FinalRead> final_reads_;
  std::map<std::pair<std::string, int32_t>, std::vector<Instant>> deletions_;  // declared, by partition
  std::vector<std::pair<Instant, std::string>> power_losses_;  // (time, node)
  std::vector<Instant> faults_;                                // faults begun and nodes down, in time order
  std::vector<std::pair<Instant, int64_t>> clock_jumps_;  // (time, ms); one broker's
  std::vector<std::pair<Instant, Instant>> serving_;      // intervals a broker was serving
  std::vector<const Operation*> alter_configs_;           // not failed, in invocation order
  std::vector<const Operation*> delete_records_;          // not failed, in invocation order
};

// Adds a violation unless `invariant` already has kViolationsPerInvariantMax (then it is only counted).
void report_violation(CheckReport& report, const std::string& invariant, std::string evidence);

// The checkers, one per file.
void check_lost_writes(const Analysis& a, CheckReport& report);
void check_duplicates(const Analysis& a, CheckReport& report);
void check_offsets(const Analysis& a, CheckReport& report);
void check_phantoms(const Analysis& a, CheckReport& report);
void check_compaction(const Analysis& a, CheckReport& report);
void check_tombstones(const Analysis& a, CheckReport& report);
void check_retention(const Analysis& a, CheckReport& report);
void check_committed_offsets(const Analysis& a, CheckReport& report);
void check_tables(const Analysis& a, CheckReport& report);
void check_failover(const Analysis& a, CheckReport& report);

}  // namespace sluice::sim
