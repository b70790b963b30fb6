#include "sim/scenario/coverage.h"

#include <cstdio>
#include <set>

#include "core/base/assert.h"
#include "core/env/buggify.h"

namespace sluice::sim {

void ProbeCoverage::before_run() {
  snapshot_.clear();
  for (const ProbeSite& site : probe_sites()) snapshot_.push_back(site.hits);
}

void ProbeCoverage::after_run(const std::string& scenario, bool buggify) {
  const std::span<ProbeSite> sites = probe_sites();
  SLUICE_ASSERT_MSG(snapshot_.size() == sites.size(), "after_run follows before_run");
  ++seeds_[scenario];
  // Several sites may share a name: a seed reaches the name once however many of its sites fired.
  std::set<std::string> reached;
  for (size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].hits > snapshot_[i]) reached.insert(sites[i].name);
  }
  for (const std::string& name : reached) ++reached_[scenario][name];
  if (buggify) {
    ++seeds_[kBuggifyRuns];
    for (const std::string& name : reached) ++reached_[kBuggifyRuns][name];
  }
  snapshot_.clear();
}

uint64_t ProbeCoverage::seeds(const std::string& scenario) const {
  auto found = seeds_.find(scenario);
  return found == seeds_.end() ? 0 : found->second;
}

uint64_t ProbeCoverage::seeds_reaching(const std::string& scenario, const std::string& probe) const {
  auto found = reached_.find(scenario);
  if (found == reached_.end()) return 0;
  auto hits = found->second.find(probe);
  return hits == found->second.end() ? 0 : hits->second;
}

bool ProbeCoverage::report(const std::vector<Scenario>& scenarios) const {
  std::set<std::string> known;
  for (const ProbeSite& site : probe_sites()) known.insert(site.name);
  bool all = true;
  bool header = false;
  for (const Scenario& s : scenarios) {
    for (const auto& [probe, share] : s.sometimes) {
      if (!header) {
        std::printf("sometimes (each probe reached in at least its share of the scenario's seeds):\n");
        header = true;
      }
      const uint64_t ran = seeds(s.name);
      const uint64_t reached = seeds_reaching(s.name, probe);
      const double got = ran == 0 ? 0 : static_cast<double>(reached) / static_cast<double>(ran);
      const char* verdict = "ok";
      if (known.count(probe) == 0) {
        verdict = "FAILED: no such probe in this binary";
        all = false;
      } else if (ran < kMinSeedsJudged) {
        verdict = "not judged: too few seeds";
      } else if (got < share) {
        verdict = "FAILED: reached too rarely";
        all = false;
      }
      std::printf("  %-28s %-40s %4.0f%% of %llu seeds (wants %.0f%%): %s\n", s.name.c_str(), probe.c_str(),
                  100 * got, static_cast<unsigned long long>(ran), 100 * share, verdict);
    }
  }
  return all;
}

void ProbeCoverage::report_buggify() const {
  const uint64_t runs = seeds(kBuggifyRuns);
  std::printf("buggify: %llu seeds ran with BUGGIFY on; each site fired in (share of them):\n",
              static_cast<unsigned long long>(runs));
  for (const std::string& site : buggify_sites()) {
    const uint64_t fired = seeds_reaching(kBuggifyRuns, "buggify." + site);
    std::printf("  %-32s %5.1f%% (%llu seeds)\n", site.c_str(),
                runs == 0 ? 0.0 : 100.0 * static_cast<double>(fired) / static_cast<double>(runs),
                static_cast<unsigned long long>(fired));
  }
}

}  // namespace sluice::sim
