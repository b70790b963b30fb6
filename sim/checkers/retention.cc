// Retention by time, both ways. (1) It never evicts unexpired data: whenever a client learned a log start L (a
// fetch's answer, ListOffsets earliest, the final read), every acknowledged record below L must have been expired
// by then (its batch's max timestamp older than the broker's clock minus retention.ms), unless DeleteRecords cut
// there, retention.bytes applies, or the topic is compact-only. (2) It leaves no expired record readable past the
// check interval: a read served while the broker had been up for a while must not return a record whose batch
// expired more than log.retention.check.interval.ms (plus a second of slack) before, when everything before it had
// expired too (eviction is a prefix; in a cluster, an offset before it that no acknowledged write holds may be a
// leader's LeaderChange batch, newer than what follows it, and excuses the read). The broker's clock is the judge,
// jumps included: a forward jump may legitimately evict what a calendar would keep.
#include <fmt/format.h>

#include <algorithm>

#include "sim/checkers/analysis.h"
#include "sim/faults/fault.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kSlack = 1s;

struct LogStartSeen {
  int64_t log_start = -1;
  Instant at{};
  const Operation* op = nullptr;
};

// Per partition key, by Analysis::ordinal_of (a vector indexed so, not a map looked up by topic name per operation).
template <typename T>
using ByKey = std::vector<std::vector<T>>;

// Every log start a client learned of the topic's partitions, by partition key, in history order. One pass over
// the operations for all partitions (a pass per partition made the checker quadratic in long runs).
ByKey<LogStartSeen> log_starts(const Analysis& a, const TopicFacts& facts) {
  ByKey<LogStartSeen> seen(a.keys_in_order().size());
  for (const Operation& op : a.ctx().history.ops()) {
    if (!op.completed) continue;
    const bool fetch = (op.kind == OpKind::kFetch || op.kind == OpKind::kFinalRead) && op.log_start_offset >= 0;
    const bool earliest = op.kind == OpKind::kListOffsets && op.outcome == Outcome::kOk &&
                          op.offset == client::kEarliestTimestamp;
    if (!fetch && !earliest) continue;
    if (op.tp.topic != facts.name || op.tp.partition < 0 || op.tp.partition >= facts.partitions) continue;
    const PartitionKey* key = a.key_of(op);
    if (!key) continue;
    seen[a.ordinal_of(key)].push_back({earliest ? op.result_offset : op.log_start_offset, op.completed_at, &op});
  }
  return seen;
}

void check_never_evicts_unexpired(const Analysis& a, const TopicFacts& facts, CheckReport& report) {
  // (offset, write): sorted without a walk from each write to its record per comparison.
  ByKey<std::pair<int64_t, const Write*>> writes_by_key(a.keys_in_order().size());
  for (const Write& w : a.writes()) {
    if (!w.acked()) continue;
    const TopicPartitionId& tp = w.op->tp;
    if (tp.topic != facts.name || tp.partition < 0 || tp.partition >= facts.partitions) continue;
    if (w.offset() < 0) continue;
    if (const PartitionKey* key = a.key_of(*w.op)) writes_by_key[a.ordinal_of(key)].emplace_back(w.offset(), &w);
  }
  const ByKey<LogStartSeen> starts = log_starts(a, facts);
  for (size_t ordinal = 0; ordinal < writes_by_key.size(); ++ordinal) {
    auto& writes = writes_by_key[ordinal];
    if (writes.empty() || starts[ordinal].empty()) continue;
    const PartitionKey& key = *a.keys_in_order()[ordinal];
    sort_by_offset(writes, [](const std::pair<int64_t, const Write*>& w) { return w.first; });
    const int32_t p = key.partition;
    int64_t judged = -1;  // a log start already judged: later sightings of it only find the records older
    for (const LogStartSeen& seen : starts[ordinal]) {
      if (seen.log_start <= judged) continue;
      judged = seen.log_start;
      const int64_t cut = a.delete_records_cut_before(key, seen.at);
      const int64_t retention = a.config_range(facts.name, "retention.ms", facts.retention_ms, seen.at).first;
      const int64_t now_ms = a.max_wall_ms(Instant{}, seen.at);
      for (const auto& [offset, w] : writes) {
        if (offset >= seen.log_start) break;
        if (offset < cut || w->op->completed_at > seen.at) continue;
        if (a.truncated_between(facts.name, p, offset, w->op->completed_at, seen.at)) continue;
        const int64_t batch_max = w->record().batch_max_timestamp_ms;
        if (retention != INT64_MAX && batch_max < now_ms - retention) continue;
        report_violation(report, "retention-unexpired",
                         fmt::format("{} saw log start {} of {}, past offset {} written at {} ms by {}; the broker's "
                                     "clock was at most {} ms and retention.ms {}",
                                     describe(*seen.op), seen.log_start, key.to_string(), offset, batch_max,
                                     describe(*w->op), now_ms, retention == INT64_MAX ? -1 : retention));
        break;
      }
    }
  }
}

// For each partition, sorted by offset: (offset, the greatest batch max timestamp of the acknowledged writes at or
// below it). Vectors sorted once, not a tree node per write.
using PrefixMaxTimestamps = ByKey<std::pair<int64_t, int64_t>>;

PrefixMaxTimestamps prefix_max_timestamps(const Analysis& a, const TopicFacts& facts) {
  PrefixMaxTimestamps by_offset(a.keys_in_order().size());
  for (const Write& w : a.writes()) {
    if (!w.acked() || w.op->tp.topic != facts.name || w.offset() < 0) continue;
    const PartitionKey* key = a.key_of(*w.op);
    if (!key) continue;
    by_offset[a.ordinal_of(key)].emplace_back(w.offset(), w.record().batch_max_timestamp_ms);
  }
  for (auto& offsets : by_offset) {
    sort_by_offset(offsets, [](const std::pair<int64_t, int64_t>& o) { return o.first; });
    int64_t running = INT64_MIN;
    for (auto& [offset, ts] : offsets) {
      running = std::max(running, ts);
      ts = running;
    }
  }
  return by_offset;
}

// In a cluster a partition without a leader keeps its high watermark where it was, and replicas evict only what
// they know is committed: a produce to the partition that did not succeed within [from, to] says it may have had no
// leader then, and its next leader evicts at its next retention pass. That is one that failed in the window, or one
// still waiting for its answer through all of it (acknowledged later: cluster_retention_offline_replica seed 3428,
// where a follower had evicted all it knew committed and the offset after it was readable from the new leader).
bool maybe_leaderless(const Analysis& a, const Operation& fetch, Instant from, Instant to) {
  for (const Operation& op : a.ctx().history.ops()) {
    if (op.invoked_at > to) break;
    if (op.kind != OpKind::kProduce || op.tp != fetch.tp) continue;
    if (op.outcome == Outcome::kOk) {
      if (op.invoked_at <= from && op.completed && op.completed_at >= to) return true;
      continue;
    }
    if (!op.completed || op.completed_at >= from) return true;
  }
  return false;
}

void check_no_expired_readable(const Analysis& a, const TopicFacts& facts, CheckReport& report) {
  const Duration interval = std::chrono::milliseconds(a.ctx().retention_check_interval_ms);
  const auto prefix = prefix_max_timestamps(a, facts);
  for (const Operation& op : a.ctx().history.ops()) {
    if (op.kind != OpKind::kFetch || op.outcome != Outcome::kOk || op.tp.topic != facts.name) continue;
    if (op.records.empty() || op.invoked_at.time_since_epoch() < 2 * interval + kSlack) continue;
    const Instant due = op.invoked_at - interval - kSlack;
    if (!a.serving_throughout(due - interval, op.completed_at)) continue;
    const int64_t retention = a.config_range(facts.name, "retention.ms", facts.retention_ms, op.invoked_at).second;
    if (retention == INT64_MAX) continue;
    const int64_t expired_before = a.min_wall_ms(due, op.completed_at) - retention;
    const RecordView& first = op.records.front();
    if (first.batch_max_timestamp_ms < 0 || first.batch_max_timestamp_ms >= expired_before) continue;
    // It must have been in the log for a whole check interval and more: a batch appended already expired by the
    // broker's clock (after a forward jump) is readable until the next check.
    const Write* written = first.tombstone ? nullptr : a.write_of(first.value_digest);
    if (written == nullptr || !written->op->completed || written->op->completed_at > due) continue;
    // Eviction is a prefix: every acknowledged record before it must have expired too.
    const PartitionKey* read_key = a.key_of(op);
    if (!read_key) continue;
    if (const auto& offsets = prefix[a.ordinal_of(read_key)]; !offsets.empty()) {
      const std::pair<int64_t, int64_t> at(first.offset, INT64_MIN);
      auto before = std::lower_bound(offsets.begin(), offsets.end(), at);
      if (before != offsets.begin() && std::prev(before)->second >= expired_before) continue;
      // In a cluster, an offset below it that no acknowledged write holds may be a batch clients never see: a
      // partition leader's LeaderChange batch, stamped with its clock at its election, which holds eviction back
      // behind it (retention evicts a prefix) while older records that reached the log later sit after it.
      const int64_t from = std::max<int64_t>(op.log_start_offset, 0);
      const std::pair<int64_t, int64_t> lowest(from, INT64_MIN);
      const auto known = before - std::lower_bound(offsets.begin(), before, lowest);
      if (a.cluster() && first.offset > from && known < first.offset - from) {
        report.count("expired records readable behind a batch no client wrote (cluster)");
        continue;
      }
    }
    if (a.cluster() && maybe_leaderless(a, op, due - interval, op.completed_at)) {
      report.count("expired records readable soon after the partition had no leader (cluster)");
      continue;
    }
    report_violation(report, "retention-expired-readable",
                     fmt::format("{} returned offset {} whose batch's max timestamp {} ms was past retention.ms {} "
                                 "more than {} before (the broker's clock was {} ms at least)",
                                 describe(op), first.offset, first.batch_max_timestamp_ms, retention,
                                 format_duration(interval + kSlack), a.min_wall_ms(due, op.completed_at)));
  }
}

}  // namespace

void check_retention(const Analysis& a, CheckReport& report) {
  for (const auto& [name, facts] : a.ctx().topics) {
    if (!facts.deletes || facts.retention_bytes >= 0) continue;  // size retention is not judged by time
    check_never_evicts_unexpired(a, facts, report);
    check_no_expired_readable(a, facts, report);
  }
}

}  // namespace sluice::sim
