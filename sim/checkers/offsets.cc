// Offsets: one offset, one record (every client that saw an offset of a partition saw the same key and value there,
// acknowledgements included), offsets strictly increasing within a read, an idempotent producer's batches in the
// order it sent them, and no phantom records (everything read was written, by a write not reported failed, to that
// topic). An offset may change its record only when records were legitimately lost in between: recovery declared a
// cut covering it, or a power loss took un-synced records (the lost-write checker judges whether those losses were
// allowed). A crash alone never allows it: the page cache survives a process. On a cluster, a leader change may cut
// a record only acks=0/1 promised, and a committed one only after power losses (Analysis::quorum_power_loss_between)
// from the earlier observation's request on.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "sim/checkers/analysis.h"

namespace sluice::sim {
namespace {

bool same_record(const Observation& x, const Observation& y) { return x.digest == y.digest && x.key() == y.key(); }

// An acknowledgement of acks=1 or 0: the leader had the record, maybe no other replica.
bool only_leader_had(const Observation& o) {
  return o.op != nullptr && o.op->kind == OpKind::kProduce && o.op->acks != -1;
}

std::string what(const Observation& o) {
  return o.digest == 0 ? fmt::format("tombstone of key {}", o.key().value_or("?")) : fmt::format("{:016x}", o.digest);
}

void check_one_record_per_offset(const Analysis& a, CheckReport& report) {
  for (const auto& [key, offsets] : a.observations()) {
    for (const auto& [offset, seen] : offsets) {
      for (size_t i = 1; i < seen.size(); ++i) {
        const Observation& first = seen.front();
        const Observation& other = seen[i];
        if (same_record(first, other)) continue;
        // The earlier of the two saw its record somewhere between its request and its answer: a loss may come
        // after the broker served it and before the answer arrived (cluster-five-nodes seed 100696: a power loss
        // 1 ms before a consumer's answer, which a committed record's replica had served).
        const Observation& earlier = first.at() <= other.at() ? first : other;
        const Instant from = earlier.op->invoked_at;
        const Instant to = std::max(first.at(), other.at());
        if (a.truncated_between(key.topic, key.partition, offset, from, to)) {
          report.count("offsets reused after a declared recovery cut");
          continue;
        }
        if (a.quorum_power_loss_between(from, to)) {
          report.count("offsets reused after a power loss took un-synced records");
          continue;
        }
        // On a cluster, a leader's acks=1 (or acks=0) record that no quorum had yet is cut when leadership moves;
        // records a consumer read or an acks=all acknowledgement named were committed and must stay.
        if (a.cluster() && (only_leader_had(first) || only_leader_had(other)) && a.fault_before(to)) {
          report.count("offsets reused: an acks=0/1 record cut by a leader change (cluster)");
          continue;
        }
        report_violation(report, "one-offset-one-record",
                         fmt::format("offset {} of {} held {} ({}) and {} ({})", offset, key.to_string(), what(first),
                                     describe(*first.op), what(other), describe(*other.op)));
        break;
      }
    }
  }
}

void check_reads_increase(const Analysis& a, CheckReport& report) {
  for (const Operation& op : a.ctx().history.ops()) {
    if (!(op.kind == OpKind::kFetch || op.kind == OpKind::kFinalRead) || op.outcome != Outcome::kOk) continue;
    int64_t last = -1;
    for (const RecordView& r : op.records) {
      if (r.offset <= last || r.offset < op.offset) {
        report_violation(report, "offsets-monotonic",
                         fmt::format("{} returned offset {} after {} (asked from {})", describe(op), r.offset, last,
                                     op.offset));
        break;
      }
      last = r.offset;
    }
    if (op.log_start_offset >= 0 && op.high_watermark >= 0 && op.log_start_offset > op.high_watermark) {
      report_violation(report, "offsets-monotonic",
                       fmt::format("{} reported log start {} above high watermark {}", describe(op),
                                   op.log_start_offset, op.high_watermark));
    }
  }
}

// An idempotent producer's acknowledged batches to one partition carry increasing offsets in the order it sent
// them (its sequence numbers keep them in order across retries), as long as none of its batches there failed
// meanwhile. A batch that fails outright breaks the sequence, in Kafka as here: a new producer's first batch may
// start at any sequence (KIP-360), so when the first batches are refused before the append (NOT_ENOUGH_REPLICAS) and
// a later one in flight is accepted, the refused ones end OUT_OF_ORDER_SEQUENCE_NUMBER and the client sends the rest
// again with new sequences, after it (the Java producer's epoch bump and sequence reset do the same).
void check_idempotent_order(const Analysis& a, CheckReport& report) {
  // A producer and a partition: the process's name as the history holds it, the key as the analysis interned it
  // (one address per key), so no name or key is copied per operation.
  using Slot = std::pair<std::string_view, const PartitionKey*>;
  std::map<Slot, std::vector<const Operation*>> failed;
  for (const Operation& op : a.ctx().history.ops()) {
    if (op.kind != OpKind::kProduce || !op.idempotent || op.outcome != Outcome::kFailed) continue;
    if (const PartitionKey* key = a.key_of(op)) failed[{op.process, key}].push_back(&op);
  }
  // A failure in flight together with either batch (sent before the later one, answered after the earlier was sent).
  const auto failure_between = [&](const Slot& slot, const Operation& earlier, const Operation& later) {
    const auto found = failed.find(slot);
    if (found == failed.end()) return false;
    return std::any_of(found->second.begin(), found->second.end(), [&](const Operation* f) {
      return f->invoked_at <= later.invoked_at && f->completed_at >= earlier.invoked_at;
    });
  };
  std::map<Slot, std::pair<int64_t, const Operation*>> last;
  for (const Operation& op : a.ctx().history.ops()) {
    if (op.kind != OpKind::kProduce || !op.idempotent || op.outcome != Outcome::kOk || op.records.empty()) continue;
    if (op.records.front().offset < 0) continue;
    const PartitionKey* key = a.key_of(op);
    if (!key) continue;
    const Slot slot{op.process, key};
    auto found = last.find(slot);
    if (found != last.end() && op.records.front().offset <= found->second.first) {
      const Instant earlier = found->second.second->completed_at;
      if (!a.truncated_between(op.tp.topic, op.tp.partition, op.records.front().offset, earlier, op.completed_at) &&
          !a.quorum_power_loss_between(earlier, op.completed_at) &&
          !failure_between(slot, *found->second.second, op)) {
        report_violation(report, "offsets-monotonic",
                         fmt::format("idempotent {} got offset {} after its earlier batch got {} ({})", describe(op),
                                     op.records.front().offset, found->second.first,
                                     describe(*found->second.second)));
      }
    }
    if (found != last.end()) {
      found->second = {op.records.back().offset, &op};
    } else {
      last.emplace(slot, std::make_pair(op.records.back().offset, &op));
    }
  }
}

}  // namespace

void check_offsets(const Analysis& a, CheckReport& report) {
  check_one_record_per_offset(a, report);
  check_reads_increase(a, report);
  check_idempotent_order(a, report);
}

void check_phantoms(const Analysis& a, CheckReport& report) {
  for (const auto& [key, offsets] : a.observations()) {
    for (const auto& [offset, seen] : offsets) {
      for (const Observation& o : seen) {
        if (o.op->kind == OpKind::kProduce || o.digest == 0) continue;
        // The common case without a lookup: the acknowledged produce of this very record at this offset (values are
        // unique, so it is the write of that digest, to this partition, with this key, and it did not fail).
        const bool acknowledged_here = std::any_of(seen.begin(), seen.end(), [&](const Observation& p) {
          return p.op->kind == OpKind::kProduce && p.digest == o.digest && p.key() == o.key();
        });
        if (acknowledged_here) continue;
        const Write* w = a.write_of(o.digest);
        std::string why;
        if (w == nullptr) {
          why = "no client ever wrote it";
        } else if (w->op->tp.topic != key.topic || w->op->tp.partition != key.partition) {
          why = "it was written to " + w->op->tp.to_string();
        } else if (w->record().key != o.key()) {
          why = fmt::format("it was written with key {}", w->record().key.value_or("(none)"));
        } else if (w->op->completed && w->op->outcome == Outcome::kFailed) {
          why = "its write was reported failed: " + describe(*w->op);
        }
        if (why.empty()) continue;
        report_violation(report, "phantom",
                         fmt::format("{} read {} at offset {} of {}, but {}", describe(*o.op), what(o), offset,
                                     key.to_string(), why));
      }
    }
  }
}

}  // namespace sluice::sim
