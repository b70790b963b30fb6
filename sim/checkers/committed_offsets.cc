// Committed group offsets never go backwards, and are never made up. Each OffsetFetch answer for a partition must
// be a value some member committed for that partition (or -1 when none was acknowledged yet), and must not be
// below the last commit acknowledged before it was asked, unless a commit of that lower value may have been applied
// after it, or a power loss may have taken the commit (counted) where the topic's consumer.offset.durability is
// `replicated`.
#include <fmt/format.h>

#include "sim/checkers/analysis.h"

namespace sluice::sim {

void check_committed_offsets(const Analysis& a, CheckReport& report) {
  using Slot = std::pair<std::string, TopicPartitionId>;  // (group, partition)
  std::map<Slot, std::vector<const Operation*>> commits;
  for (const Operation& op : a.ctx().history.ops()) {
    if (op.kind != OpKind::kCommit) continue;
    for (const auto& [tp, offset] : op.details().offsets) commits[{op.details().group, tp}].push_back(&op);
  }
  for (const Operation& fetched : a.ctx().history.ops()) {
    if (fetched.kind != OpKind::kCommitted || fetched.outcome != Outcome::kOk) continue;
    for (const auto& [tp, value] : fetched.details().offsets) {
      const std::vector<const Operation*>& sent = commits[{fetched.details().group, tp}];
      int64_t last_acked = -1;
      const Operation* last_acked_op = nullptr;
      bool value_was_sent = value == -1;
      for (const Operation* c : sent) {
        const int64_t offset = c->details().offsets.at(tp);
        if (c->invoked_at <= fetched.completed_at && c->outcome != Outcome::kFailed && offset == value) {
          value_was_sent = true;
        }
        const bool acked_before = c->completed && c->outcome == Outcome::kOk && c->completed_at <= fetched.invoked_at;
        if (acked_before && (last_acked_op == nullptr || c->completed_at >= last_acked_op->completed_at)) {
          last_acked = offset;
          last_acked_op = c;
        }
      }
      // A commit of this very value that the coordinator may have applied after the last acknowledged one.
      bool applied_later = false;
      for (const Operation* c : sent) {
        if (c == last_acked_op || c->outcome == Outcome::kFailed || c->details().offsets.at(tp) != value) continue;
        if (c->invoked_at > fetched.completed_at || last_acked_op == nullptr) continue;
        if (!c->completed || c->completed_at >= last_acked_op->invoked_at) applied_later = true;
      }
      if (!value_was_sent) {
        report_violation(report, "committed-offsets",
                         fmt::format("{} answered offset {} for {} of group {}, which no member committed there",
                                     describe(fetched), value, tp.to_string(), fetched.details().group));
        continue;
      }
      if (value >= last_acked || applied_later) continue;
      const TopicFacts* facts = a.topic(tp.topic);
      const bool offsets_persisted = facts != nullptr && facts->offsets_persisted;
      if (!offsets_persisted && a.power_loss_after(last_acked_op->completed_at)) {
        report.count("committed offsets lost to power loss");
        continue;
      }
      report_violation(report, "committed-offsets",
                       fmt::format("{} answered offset {} for {} of group {}, below {} acknowledged by {}",
                                   describe(fetched), value, tp.to_string(), fetched.details().group, last_acked,
                                   describe(*last_acked_op)));
    }
  }
}

}  // namespace sluice::sim
