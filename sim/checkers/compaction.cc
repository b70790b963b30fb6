// Compaction and tombstones, judged from every read of a compacted topic. A read covers the offsets from where it
// asked to the end of the last whole batch it returned (a replica's cleaner leaves empty batches, which the client
// steps over: the fetch's result_offset), or to the high watermark when no batch came back (all of that was
// compacted away). Inside that range, an acknowledged write the read did not return must have been superseded: a
// later record of its key is known (acknowledged or seen). Otherwise the latest value of a key was removed
// (violation), unless the write is a tombstone whose delete horizon may have passed (delete.retention.ms after it
// was written, by the broker's clock), the log start passed it (compact,delete), or recovery cut it under
// `replicated` durability. The table reader's rebuilt tables are then only counted: a reader that passes a
// tombstone after its horizon keeps the deleted key (Kafka's documented outcome for consumers lagging more than
// delete.retention.ms).
#include <fmt/format.h>

#include <algorithm>

#include "sim/checkers/analysis.h"

namespace sluice::sim {
namespace {

struct KeyIndex {
  // Every offset known to have held a record of the key (acknowledged writes and observations).
  std::map<std::string, std::set<int64_t>> offsets_by_key;
  // Acknowledged keyed writes by offset.
  std::map<int64_t, const Write*> acked;
};

std::map<PartitionKey, KeyIndex> index_compacted(const Analysis& a) {
  std::map<PartitionKey, KeyIndex> index;
  const auto& topics = a.ctx().topics;
  if (std::none_of(topics.begin(), topics.end(), [](const auto& t) { return t.second.compacted; })) return index;
  for (const Write& w : a.writes()) {
    const TopicFacts* facts = a.topic(w.op->tp.topic);
    if (facts == nullptr || !facts->compacted || !w.acked() || w.offset() < 0 || !w.record().key) continue;
    const PartitionKey* key = a.key_of(*w.op);
    if (!key) continue;
    KeyIndex& k = index[*key];
    k.acked[w.offset()] = &w;
    k.offsets_by_key[*w.record().key].insert(w.offset());
  }
  for (const auto& [key, offsets] : a.observations()) {
    const TopicFacts* facts = a.topic(key.topic);
    if (facts == nullptr || !facts->compacted) continue;
    for (const auto& [offset, seen] : offsets) {
      for (const Observation& o : seen) {
        if (o.key()) index[key].offsets_by_key[*o.key()].insert(offset);
      }
    }
  }
  return index;
}

// The offsets [from, to) a read vouches for.
std::pair<int64_t, int64_t> coverage(const Operation& read) {
  // result_offset: past the last whole batch returned (empty and control batches included), -1 when none came back.
  if (!read.records.empty()) return {read.offset, std::max(read.records.back().offset + 1, read.result_offset)};
  if (read.result_offset >= 0) return {read.offset, std::max(read.offset, read.result_offset)};
  // An answer without a batch vouches for nothing, even below the high watermark: past the first partition with
  // data, a fetch leaves out a partition whose first batch would overflow the response's max bytes, as Kafka does.
  return {read.offset, read.offset};
}

// Whether a later record of the key was in the log when the read was served (below its high watermark), so that
// the cleaner may have removed the earlier one.
bool superseded(const KeyIndex& index, const std::string& key, int64_t offset, int64_t high_watermark) {
  auto found = index.offsets_by_key.find(key);
  if (found == index.offsets_by_key.end()) return false;
  auto later = found->second.upper_bound(offset);
  return later != found->second.end() && *later < high_watermark;
}

struct Missing {
  const Operation* read;
  const Write* write;
};

// The latest acknowledged records of their keys that a covering read did not return.
std::vector<Missing> missing_latest(const Analysis& a, const std::map<PartitionKey, KeyIndex>& index) {
  std::vector<Missing> missing;
  if (index.empty()) return missing;  // no compacted topic was written: nothing to walk the history for
  for (const Operation& read : a.ctx().history.ops()) {
    if (!(read.kind == OpKind::kFetch || read.kind == OpKind::kFinalRead) || read.outcome != Outcome::kOk) continue;
    const PartitionKey* read_key = a.key_of(read);
    if (!read_key) continue;
    const PartitionKey& key = *read_key;
    auto found = index.find(key);
    if (found == index.end()) continue;
    const auto [from, to] = coverage(read);
    std::set<int64_t> returned;
    for (const RecordView& r : read.records) returned.insert(r.offset);
    for (auto it = found->second.acked.lower_bound(from); it != found->second.acked.end() && it->first < to; ++it) {
      const Write& w = *it->second;
      // Acknowledged before the read was sent, so surely in the log when it was served.
      if (returned.count(it->first) != 0 || w.op->completed_at > read.invoked_at) continue;
      if (it->first < read.log_start_offset) continue;
      if (superseded(found->second, *w.record().key, it->first, read.high_watermark)) continue;
      if (a.truncated_between(key.topic, key.partition, it->first, w.op->completed_at, read.completed_at)) continue;
      missing.push_back({&read, &w});
    }
  }
  return missing;
}

// Whether the tombstone's delete horizon may have passed by the read: the cleaner gives it a horizon of its own
// clock + delete.retention.ms on the first pass after the write.
bool horizon_may_have_passed(const Analysis& a, const Write& tombstone, const Operation& read) {
  const TopicFacts& facts = *a.topic(tombstone.op->tp.topic);
  const int64_t drm = a.config_range(facts.name, "delete.retention.ms", facts.delete_retention_ms, read.invoked_at)
                          .first;
  const Instant written = tombstone.op->invoked_at;
  return a.max_wall_ms(written, read.completed_at) >= a.min_wall_ms(written, read.completed_at) + drm;
}

}  // namespace

void check_compaction(const Analysis& a, CheckReport& report) {
  const std::map<PartitionKey, KeyIndex> index = index_compacted(a);
  for (const Missing& m : missing_latest(a, index)) {
    if (m.write->record().tombstone) continue;  // check_tombstones judges those
    report_violation(report, "compaction-keeps-latest",
                     fmt::format("{} did not return offset {} (key {}, value {:016x}, the latest known of its key) "
                                 "though it read past it; written by {}",
                                 describe(*m.read), m.write->offset(), *m.write->record().key,
                                 m.write->record().value_digest, describe(*m.write->op)));
  }
}

void check_tombstones(const Analysis& a, CheckReport& report) {
  const std::map<PartitionKey, KeyIndex> index = index_compacted(a);
  for (const Missing& m : missing_latest(a, index)) {
    if (!m.write->record().tombstone) continue;
    if (horizon_may_have_passed(a, *m.write, *m.read)) {
      report.count("tombstones removed after their horizon");
      continue;
    }
    report_violation(report, "tombstone-horizon",
                     fmt::format("{} did not return the tombstone of key {} at offset {}, written by {}: its delete "
                                 "horizon (delete.retention.ms after it) cannot have passed",
                                 describe(*m.read), *m.write->record().key, m.write->offset(),
                                 describe(*m.write->op)));
  }
}

void check_tables(const Analysis& a, CheckReport& report) {
  const std::map<PartitionKey, KeyIndex> index = index_compacted(a);
  for (const Operation& table : a.ctx().history.ops()) {
    if (table.kind != OpKind::kTable || table.outcome != Outcome::kOk) continue;
    report.count("tables rebuilt by cold-start readers");
    for (const auto& entry : table.details().table) {
      const std::string& key_name = entry.first;
      // The key's latest acknowledged write anywhere: a tombstone means the reader kept a deleted key.
      const Write* latest = nullptr;
      for (const auto& [pkey, k] : index) {
        if (pkey.topic != table.tp.topic) continue;
        for (const auto& [offset, w] : k.acked) {
          if (*w->record().key == key_name && w->op->completed_at <= table.invoked_at) latest = w;
        }
      }
      if (latest != nullptr && latest->record().tombstone) {
        report.count("keys a reader lagging past delete.retention.ms kept after their tombstone (documented)");
      }
    }
  }
}

}  // namespace sluice::sim
