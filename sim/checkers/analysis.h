// The index every checker reads: the history digested once into writes, observations, log starts, topic
// incarnations and broker clocks. Nothing here judges; the checkers do.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/assert.h"
#include "sim/checkers/check.h"
#include "sim/checkers/digest_map.h"

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
// Points into the history, which outlives the analysis. 32 bytes: a run holds hundreds of thousands.
struct Observation {
  int64_t offset = -1;
  uint64_t digest = 0;  // 0: tombstone (then key tells it apart)
  const RecordView* record = nullptr;
  const Operation* op = nullptr;  // the fetch, final read or produce that saw it
  Instant at() const { return op->completed_at; }
  const std::optional<std::string>& key() const { return record->key; }
};

// Sorts `items` by offset_of(item), keeping their order among equal offsets. A partition's offsets are dense: a
// counting sort places each item once, without comparisons; a sparse (or huge) range falls back to a stable sort.
template <typename T, typename OffsetOf>
void sort_by_offset(std::vector<T>& items, OffsetOf offset_of) {
  if (items.size() < 2) return;
  const auto [lowest, highest] = std::minmax_element(
      items.begin(), items.end(), [&](const T& x, const T& y) { return offset_of(x) < offset_of(y); });
  const int64_t base = offset_of(*lowest);
  // highest - lowest, computed without overflow whatever the offsets (a broker bug may return any).
  const uint64_t span = static_cast<uint64_t>(offset_of(*highest)) - static_cast<uint64_t>(base);
  if (span >= 4 * items.size() + 1024) {
    std::stable_sort(items.begin(), items.end(), [&](const T& x, const T& y) { return offset_of(x) < offset_of(y); });
    return;
  }
  SLUICE_ASSERT(items.size() < UINT32_MAX);
  std::vector<uint32_t> starts(span + 2, 0);
  for (const T& item : items) ++starts[static_cast<size_t>(offset_of(item) - base) + 1];
  for (size_t i = 1; i < starts.size(); ++i) starts[i] += starts[i - 1];
  std::vector<T> sorted(items.size());
  for (T& item : items) sorted[starts[static_cast<size_t>(offset_of(item) - base)]++] = std::move(item);
  items = std::move(sorted);
}

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

  // REQUIRES: in history order (the order of op ids), before seal().
  void add(const Observation& observation) { observations_.push_back(observation); }
  // Sorts and groups what add() gathered; before it the groups are empty.
  void seal();
  std::vector<Group>::const_iterator begin() const { return groups_.begin(); }
  std::vector<Group>::const_iterator end() const { return groups_.end(); }
  size_t size() const { return groups_.size(); }

 private:
  std::vector<Observation> observations_;
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
  // The incarnation an operation of the history addressed; null when a declared deletion of its partition fell
  // between its invocation and completion (it may have reached either incarnation: nothing is judged by it).
  // Worked out once per operation: checkers ask for every write and read, several times over.
  const PartitionKey* key_of(const Operation& op) const {
    SLUICE_ASSERT(op.id < key_by_op_.size());
    return key_by_op_[op.id];
  }
  // Every key an operation addressed, in PartitionKey order, and an interned key's place in it: a checker that
  // groups by partition indexes a vector by ordinal_of(key_of(op)) rather than look each key up in a map, and walks
  // it in the order such a map has.
  const std::vector<const PartitionKey*>& keys_in_order() const { return keys_in_order_; }
  size_t ordinal_of(const PartitionKey* key) const;  // REQUIRES: key_of's (interned)
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
  const PartitionKey* find_key_of(const Operation& op);
  // Adds the records `op` saw (or, for a produce, those acknowledged with an offset) to the partition's observations.
  void observe(const PartitionKey& key, const Operation& op, bool acknowledged_only);
  // REQUIRES: `key` is one of keys_ (interned).
  ObservationsByOffset& observations_of(const PartitionKey& key);

  const CheckContext& ctx_;
  std::set<PartitionKey> keys_;                   // every key an operation addressed; nodes stay put
  std::vector<const PartitionKey*> key_by_op_;    // by operation id
  static constexpr size_t kFirstKeys = 32;
  std::vector<const PartitionKey*> first_keys_;  // the first kFirstKeys of keys_, scanned before it
  std::vector<const PartitionKey*> keys_in_order_;               // keys_, in its order
  std::unordered_map<const PartitionKey*, size_t> ordinal_by_key_;  // of keys_in_order_
  std::vector<Write> writes_;
  DigestMap<uint32_t> write_by_digest_;  // index into writes_
  std::map<PartitionKey, ObservationsByOffset> observations_;
  std::vector<std::pair<const PartitionKey*, ObservationsByOffset*>> observations_by_address_;  // by interned key
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
