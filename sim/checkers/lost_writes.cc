// Lost writes: every acknowledged write must be in the final read of its partition, unless something declared and
// legitimate removed it: the topic was deleted, retention or DeleteRecords moved the log start past it (the
// retention checker judges whether that was allowed), or it sits in a compacted topic (the compaction checker
// judges those: only the latest value per key is promised). Under `replicated` durability a single node may lose
// acknowledged writes to a power loss (they were in its page cache only): counted, per acks level. Under
// `persisted` an acks=all write lost is a violation whatever happened; so is any acks=all write lost without a
// power loss (on an even cluster: of two nodes). acks=1 and acks=0 losses are figures, not failures (Kafka's
// own contract), except in a run without any fault, where nothing acknowledged or sent may be lost (a follower that
// drops an acks=0 produce instead of forwarding it is caught so).
#include <fmt/format.h>

#include "sim/checkers/analysis.h"

namespace sluice::sim {
namespace {

std::string acks_label(int16_t acks) { return acks == -1 ? "acks=all" : fmt::format("acks={}", acks); }

// The figures of one pass, by acks and outcome, added to the report once at the end: a run has tens of thousands
// of writes, and a figure's name built and looked up per write cost more than the check itself.
class Tally {
 public:
  void count(int16_t acks, std::string_view outcome) { ++counts_[{acks, outcome}]; }
  void report_to(CheckReport& report) const {
    for (const auto& [what, n] : counts_) report.count(acks_label(what.first) + std::string(what.second), n);
  }

 private:
  std::map<std::pair<int16_t, std::string_view>, int64_t> counts_;  // outcome: a literal
};

// Per partition key (interned by the analysis: looked up by address), its topic's facts, its final read and the
// digests that read holds (hashed: only looked up, never walked in order). Built at a key's first write.
class FinalReads {
 public:
  struct Partition {
    const TopicFacts* facts = nullptr;
    const FinalRead* read = nullptr;  // null: the partition was never read at the end (topic gone)
    DigestMap<bool> present;  // the digests the final read holds
  };

  explicit FinalReads(const Analysis& a) : a_(a) {}

  const Partition& of(const PartitionKey* key) {
    auto [it, inserted] = partitions_.try_emplace(key);
    if (!inserted) return it->second;
    Partition& p = it->second;
    p.facts = a_.topic(key->topic);
    const auto read = a_.final_reads().find(*key);
    if (read != a_.final_reads().end()) {
      p.read = &read->second;
      p.present = DigestMap<bool>(p.read->records.size());
      for (const auto& [offset, record] : p.read->records) p.present.try_emplace(record->value_digest, true);
    }
    return p;
  }

 private:
  const Analysis& a_;
  std::map<const PartitionKey*, Partition> partitions_;
};

}  // namespace

void check_lost_writes(const Analysis& a, CheckReport& report) {
  FinalReads final_reads(a);
  Tally tally;
  for (const Write& w : a.writes()) {
    const Operation& op = *w.op;
    const RecordView& record = w.record();
    if (!w.acked() || record.tombstone) continue;
    const PartitionKey* key = a.key_of(op);
    if (key == nullptr) continue;
    const FinalReads::Partition& partition = final_reads.of(key);
    if (partition.facts == nullptr || partition.facts->compacted || partition.read == nullptr) continue;
    if (a.deleted_after(op.tp.topic, op.tp.partition, op.invoked_at)) continue;
    const TopicFacts* facts = partition.facts;
    const FinalRead& read = *partition.read;
    if (partition.present.contains(record.value_digest)) {
      tally.count(op.acks, " acknowledged and present");
      continue;
    }
    const int64_t offset = record.offset;
    if (offset >= 0 && offset < read.log_start) {
      tally.count(op.acks, " removed by retention or DeleteRecords");
      continue;
    }
    if (offset < 0 && read.log_start > 0) {
      tally.count(op.acks, " not found (no offset known, log start moved)");
      continue;
    }
    if (a.faultless()) {
      tally.count(op.acks, " lost in a run without faults (violations)");
      report_violation(report, "lost-write",
                       fmt::format("{} acknowledged value {:016x} of {} is missing from the final read, in a run "
                                   "without any fault (log start {}, high watermark {})",
                                   describe(op), record.value_digest, key->to_string(), read.log_start,
                                   read.high_watermark));
      continue;
    }
    const bool power_lost = a.power_loss_after(op.invoked_at);
    // An acks=all write was on a quorum: it takes power losses after it (analysis.h says how many) to lose it.
    const bool excused = op.acks == -1 ? a.quorum_power_loss_after(op.invoked_at) : power_lost;
    if (excused && !facts->persisted) {
      tally.count(op.acks, " lost to power loss (replicated)");
      continue;
    }
    if (op.acks != -1) {
      tally.count(op.acks, power_lost ? " lost to power loss (persisted)" : " lost without power loss");
      continue;
    }
    tally.count(op.acks, " lost (violations)");
    report_violation(report, "lost-write",
                     fmt::format("{} acknowledged value {:016x} at offset {} of {} ({}), missing from the final read "
                                 "(log start {}, high watermark {}){}",
                                 describe(op), record.value_digest, offset, key->to_string(),
                                 facts->persisted ? "persisted" : "replicated", read.log_start,
                                 read.high_watermark, power_lost ? "; a power loss followed" : ""));
  }
  tally.report_to(report);
}

// Duplicates: one value at two offsets. An idempotent producer promises exactly once per send; a plain producer's
// retry after a lost answer may append twice (counted).
void check_duplicates(const Analysis& a, CheckReport& report) {
  for (const auto& [key, read] : a.final_reads()) {
    DigestMap<int64_t> first_offset(read.records.size());
    for (const auto& [offset, record] : read.records) {
      if (record->tombstone) continue;
      auto [first, inserted] = first_offset.try_emplace(record->value_digest, offset);
      if (inserted) continue;
      const Write* w = a.write_of(record->value_digest);
      if (w != nullptr && !w->op->idempotent) {
        report.count("duplicates from a non-idempotent producer's retries");
        continue;
      }
      report_violation(report, "duplicate",
                       fmt::format("value {:016x} at offsets {} and {} of {}{}", record->value_digest, *first,
                                   offset, key.to_string(), w ? "; written by " + describe(*w->op) : ""));
    }
  }
}

}  // namespace sluice::sim
