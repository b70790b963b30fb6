// Failover: how long acks=all writes stall when a node of a cluster goes down (crash, power loss or graceful stop).
// For each such event, every partition's first acks=all acknowledgement completed after it; the slowest partition's
// wait is the failover time (a node that led nothing costs one round trip). Figures only, bucketed so that they add
// up across the seeds of a fuzz run; the invariants are the other checkers'.
#include <fmt/format.h>

#include <algorithm>

#include "sim/checkers/analysis.h"

namespace sluice::sim {
namespace {

std::string bucket(Duration wait) {
  using std::chrono::milliseconds;
  if (wait < milliseconds(500)) return "under 0.5 s";
  if (wait < milliseconds(2000)) return "0.5-2 s";
  if (wait < milliseconds(5000)) return "2-5 s";
  if (wait < milliseconds(10000)) return "5-10 s";
  return "10 s or more";
}

}  // namespace

void check_failover(const Analysis& a, CheckReport& report) {
  if (!a.cluster()) return;
  // Acknowledged acks=all writes by partition, by completion time.
  std::map<TopicPartitionId, std::vector<Instant>> acked;
  for (const Operation& op : a.ctx().history.ops()) {
    if (op.kind != OpKind::kProduce || op.acks != -1 || op.outcome != Outcome::kOk || !op.completed) continue;
    acked[op.tp].push_back(op.completed_at);
  }
  for (auto& [tp, times] : acked) std::sort(times.begin(), times.end());
  for (const WorldEvent& e : a.ctx().history.events()) {
    if (e.kind != WorldEvent::Kind::kDown) continue;
    std::optional<Duration> slowest;
    for (const auto& [tp, times] : acked) {
      const auto next = std::lower_bound(times.begin(), times.end(), e.at);
      if (next == times.end()) continue;  // nothing acknowledged after it (the run ended or the topic went)
      slowest = std::max(slowest.value_or(Duration(0)), *next - e.at);
    }
    if (!slowest) continue;
    report.count("acks=all on every partition again after a node went down: " + bucket(*slowest));
  }
}

}  // namespace sluice::sim
