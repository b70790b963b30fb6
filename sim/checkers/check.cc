#include "sim/checkers/check.h"

#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#include "core/base/assert.h"
#include "sim/checkers/analysis.h"

namespace sluice::sim {
namespace {

using Checker = void (*)(const Analysis&, CheckReport&);

const std::vector<std::pair<std::string, Checker>>& checkers() {
  static const std::vector<std::pair<std::string, Checker>> table = {
      {"lost-writes", check_lost_writes},
      {"duplicates", check_duplicates},
      {"offsets", check_offsets},
      {"phantoms", check_phantoms},
      {"compaction", check_compaction},
      {"tombstones", check_tombstones},
      {"retention", check_retention},
      {"committed-offsets", check_committed_offsets},
      {"tables", check_tables},
      {"failover", check_failover},
  };
  return table;
}

// Adds what `one` checker reported to `into`, as if it had reported into `into` itself.
void merge_report(CheckReport& into, CheckReport one) {
  for (Violation& v : one.violations) report_violation(into, v.invariant, std::move(v.evidence));
  for (const auto& [figure, n] : one.figures) into.figures[figure] += n;
  for (std::string& note : one.notes) into.notes.push_back(std::move(note));
}

}  // namespace

std::vector<std::string> checker_names() {
  std::vector<std::string> names;
  for (const auto& [name, checker] : checkers()) names.push_back(name);
  return names;
}

// Each chosen checker fills a report of its own, on this thread or one more: they only read the analysis, which
// no one writes once built, so a run's report cannot depend on which thread ran what or when. The reports are then
// merged in the table's order as if the checkers had run one after the other into one report: the per-invariant
// cap (report_violation) applies again, so the same violations are shown and the same ones counted. The checks were
// about a tenth of a benchmark run's wall time (bench/README.md, thirteenth round).
CheckReport run_checkers(const CheckContext& ctx, const std::set<std::string>& names) {
  const Analysis analysis(ctx);
  std::vector<Checker> chosen;
  for (const auto& [name, checker] : checkers()) {
    if (names.empty() || names.count(name) != 0) chosen.push_back(checker);
  }
  std::vector<CheckReport> reports(chosen.size());
  std::atomic<size_t> next{0};
  const auto run_next_checkers = [&] {
    for (size_t i = next.fetch_add(1); i < chosen.size(); i = next.fetch_add(1)) chosen[i](analysis, reports[i]);
  };
  if (chosen.size() > 1 && std::thread::hardware_concurrency() > 1) {
    std::thread helper(run_next_checkers);
    run_next_checkers();
    helper.join();
  } else {
    run_next_checkers();
  }
  SLUICE_ASSERT(next.load() >= chosen.size());
  CheckReport report;
  for (CheckReport& one : reports) merge_report(report, std::move(one));
  return report;
}

}  // namespace sluice::sim
