#include "core/env/buggify.h"

#include <set>

#include "core/base/fnv1a.h"

namespace sluice {
namespace {

constexpr std::string_view kProbePrefix = "buggify.";

double unit(uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }  // [0, 1)

}  // namespace

void Buggify::enable(uint64_t run_seed, Random rng, double site_share, double fire_chance) {
  SLUICE_ASSERT(site_share >= 0 && site_share <= 1 && fire_chance >= 0 && fire_chance <= 1);
  enabled_ = true;
  run_seed_ = run_seed;
  site_share_ = site_share;
  fire_chance_ = fire_chance;
  rng_ = rng;
}

bool Buggify::site_on(std::string_view site) const {
  if (!enabled_) return false;
  return unit(mix64(run_seed_ ^ fnv1a64(site))) < site_share_;  // stable across builds: a seed keeps its sites
}

bool Buggify::fire_slow(std::string_view site, double chance) {
  if (!site_on(site) || !rng_.chance(chance)) return false;
  ++fired_;
  return true;
}

std::vector<std::string> buggify_sites() {
  std::set<std::string> names;
  for (const ProbeSite& probe : probe_sites()) {
    const std::string_view name(probe.name);
    if (name.starts_with(kProbePrefix)) names.emplace(name.substr(kProbePrefix.size()));
  }
  return {names.begin(), names.end()};
}

}  // namespace sluice
