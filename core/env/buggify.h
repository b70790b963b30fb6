// BUGGIFY (FoundationDB's): fault points in the core that exercise behaviour which is legal but rare in the real
// world: a short read, a write that reaches the peer in two pieces, a request answered after its client gave up on
// it, a cleaner pass cut short, a segment rolled before its limit, a sync round started late. They never fire in the
// real world (RealEnv never enables them) and fire only in simulation runs that enable them (a scenario's
// `buggify = true`, `sluice sim --buggify`, a share of `sluice fuzz`'s seeds).
//
// In an enabled run each site (by name) is switched on or off once, for the whole run and on every node alike, with
// probability kSiteShare; a site switched on then fires with probability kFireChance each time it is reached. The
// draws come from a stream of the node's own Random forked for BUGGIFY alone, so enabling it shifts no other draw
// and a run stays replayable: same scenario and seed, same trace hash.
//
//   if (SLUICE_BUGGIFY(env.buggify, "log.early-roll")) return true;
//
// Every site is a probe too ("buggify.<name>", counted when it fires), so `sluice fuzz` lists the sites its seeds
// never fired. A site must only produce behaviour the real system may show: never a broken contract.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/assert.h"
#include "core/env/random.h"

namespace sluice {

class Buggify {
 public:
  static constexpr double kSiteShare = 0.25;   // of the sites, switched on in an enabled run
  static constexpr double kFireChance = 0.25;  // each time a switched-on site is reached

  Buggify() = default;  // off: no site ever fires

  // Switches BUGGIFY on. `run_seed` decides which sites are on (give every node of a run the same one); `rng` draws
  // each firing and the sites' own choices (a node's Random forked for BUGGIFY).
  void enable(uint64_t run_seed, Random rng, double site_share = kSiteShare, double fire_chance = kFireChance);
  void disable() { enabled_ = false; }
  bool enabled() const { return enabled_; }

  // Whether the site is switched on for this run (false when BUGGIFY is off).
  bool site_on(std::string_view site) const;
  // Called at a site (SLUICE_BUGGIFY): true when it fires now, with the run's fire chance (or `chance`, for a site
  // reached so often that the usual one would drown the run). Draws nothing unless the site is on.
  bool fire(std::string_view site, double chance = -1) {
    if (!enabled_) [[likely]] return false;
    return fire_slow(site, chance < 0 ? fire_chance_ : chance);
  }
  // The fired site's own choices (how short a read, how late a sync). REQUIRES: enabled.
  Random& random() {
    SLUICE_ASSERT(enabled_);
    return rng_;
  }
  uint64_t fired() const { return fired_; }

 private:
  bool fire_slow(std::string_view site, double chance);

  bool enabled_ = false;
  uint64_t run_seed_ = 0;
  double site_share_ = 0;
  double fire_chance_ = 0;
  Random rng_{0};
  uint64_t fired_ = 0;
};

// The names of the sites linked into this program (each SLUICE_BUGGIFY's, without the "buggify." probe prefix).
std::vector<std::string> buggify_sites();

}  // namespace sluice

// True when the site fires now. `buggify` is a Buggify& (env.buggify); `site` a string literal naming the site.
#define SLUICE_BUGGIFY(buggify, site) SLUICE_BUGGIFY_P(buggify, site, -1.0)

// As SLUICE_BUGGIFY, firing with probability `chance` instead of the run's (a site reached on every append, say).
#define SLUICE_BUGGIFY_P(buggify, site, chance)                                             \
  __extension__({                                                                           \
    __attribute__((section("sluice_probes"), used)) static ::sluice::ProbeSite              \
        sluice_buggify_probe_ = {"buggify." site, __FILE__, __LINE__, 0};                   \
    const bool sluice_buggify_fired_ = (buggify).fire(site, (chance));                      \
    if (sluice_buggify_fired_) ++sluice_buggify_probe_.hits;                                \
    sluice_buggify_fired_;                                                                  \
  })
