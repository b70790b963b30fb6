#include "sim/checkers/check.h"

#include <functional>
#include <utility>

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

}  // namespace

std::vector<std::string> checker_names() {
  std::vector<std::string> names;
  for (const auto& [name, checker] : checkers()) names.push_back(name);
  return names;
}

CheckReport run_checkers(const CheckContext& ctx, const std::set<std::string>& names) {
  const Analysis analysis(ctx);
  CheckReport report;
  for (const auto& [name, checker] : checkers()) {
    if (names.empty() || names.count(name) != 0) checker(analysis, report);
  }
  return report;
}

}  // namespace sluice::sim
