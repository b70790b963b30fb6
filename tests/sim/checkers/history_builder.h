// Builds small histories by hand for the checkers' tests: a producer's acknowledged writes, reads, final reads,
// commits, world events and declared effects, at chosen virtual times.
#pragma once

#include <string>
#include <vector>

#include "sim/checkers/check.h"
#include "sim/history/history.h"

namespace sluice::sim::testing {

using namespace std::chrono_literals;

inline Instant at(Duration d) { return Instant(d); }

class HistoryBuilder {
 public:
  // One produce of one record; acknowledged at `offset` when offset >= 0, else with `outcome`.
  uint64_t produce(const std::string& topic, int32_t partition, int64_t offset, uint64_t digest, Duration when,
                   std::optional<std::string> key = std::nullopt, int16_t acks = -1, bool idempotent = true,
                   Outcome outcome = Outcome::kOk, int64_t timestamp_ms = -1, Duration took = 1ms) {
    Operation op;
    op.process = "producer";
    op.kind = OpKind::kProduce;
    op.tp = {topic, partition};
    op.acks = acks;
    op.idempotent = idempotent;
    RecordView r;
    r.offset = outcome == Outcome::kOk ? offset : -1;
    r.key = std::move(key);
    r.tombstone = digest == 0;
    r.value_digest = digest;
    r.timestamp_ms = timestamp_ms;
    r.batch_max_timestamp_ms = timestamp_ms;
    op.records.push_back(r);
    op.outcome = outcome;
    const uint64_t id = history.invoke(std::move(op), at(when));
    history.complete(id, at(when + took));
    return id;
  }

  // A read of `records` (offset, key, digest) asked from `from`.
  uint64_t read(OpKind kind, const std::string& topic, int32_t partition, int64_t from,
                const std::vector<std::tuple<int64_t, std::optional<std::string>, uint64_t>>& records, Duration when,
                int64_t log_start = 0, int64_t high_watermark = -1, int64_t batch_ts = -1) {
    Operation op;
    op.process = kind == OpKind::kFinalRead ? "final-reader" : "consumer";
    op.kind = kind;
    op.tp = {topic, partition};
    op.offset = from;
    op.log_start_offset = log_start;
    for (const auto& [offset, key, digest] : records) {
      RecordView r;
      r.offset = offset;
      r.key = key;
      r.tombstone = digest == 0;
      r.value_digest = digest;
      r.batch_max_timestamp_ms = batch_ts;
      op.records.push_back(r);
    }
    op.high_watermark = high_watermark >= 0 ? high_watermark
                                            : (records.empty() ? from : std::get<0>(records.back()) + 1);
    op.outcome = Outcome::kOk;
    const uint64_t id = history.invoke(std::move(op), at(when));
    history.complete(id, at(when + 1ms));
    return id;
  }

  void commit(const std::string& group, const TopicPartitionId& tp, int64_t offset, Duration when,
              Outcome outcome = Outcome::kOk) {
    Operation op;
    op.process = "member";
    op.kind = OpKind::kCommit;
    op.edit_details().group = group;
    op.edit_details().offsets[tp] = offset;
    op.outcome = outcome;
    const uint64_t id = history.invoke(std::move(op), at(when));
    history.complete(id, at(when + 1ms));
  }

  void committed(const std::string& group, const TopicPartitionId& tp, int64_t offset, Duration when) {
    Operation op;
    op.process = "member";
    op.kind = OpKind::kCommitted;
    op.edit_details().group = group;
    op.edit_details().offsets[tp] = offset;
    op.outcome = Outcome::kOk;
    const uint64_t id = history.invoke(std::move(op), at(when));
    history.complete(id, at(when + 1ms));
  }

  void world(WorldEvent::Kind kind, Duration when, int64_t amount_ms = 0, const std::string& node = "n1") {
    history.world(WorldEvent{kind, at(when), node, "", amount_ms});
  }

  void effect(storage::LogEffect::Kind kind, const std::string& topic, int32_t partition, int64_t from, int64_t to,
              Duration when) {
    storage::LogEffect e;
    e.kind = kind;
    e.tp = {topic, partition};
    e.from = from;
    e.to = to;
    history.effect(TimedEffect{at(when), "n1", e});
  }

  // `brokers` > 1: the history is a cluster's.
  CheckReport check(std::map<std::string, TopicFacts> topics, const std::string& only, int brokers = 1) const {
    CheckContext ctx{history, std::move(topics), 1000, 0, brokers};
    return run_checkers(ctx, {only});
  }

  History history;
};

inline TopicFacts topic_facts(const std::string& name, bool compacted = false, bool persisted = false) {
  TopicFacts f;
  f.name = name;
  f.compacted = compacted;
  f.deletes = !compacted;
  f.persisted = persisted;
  return f;
}

inline bool has_violation(const CheckReport& report, const std::string& invariant) {
  for (const Violation& v : report.violations) {
    if (v.invariant == invariant) return true;
  }
  return false;
}

}  // namespace sluice::sim::testing
