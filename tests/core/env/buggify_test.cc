// BUGGIFY's facility: off never fires, on fires per site and per reach as drawn, each site is a probe, and the
// draws are deterministic and apart from every other stream.
#include "core/env/buggify.h"
#include "tests/probe_hits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sluice {
namespace {

bool reach_always(Buggify& b) { return SLUICE_BUGGIFY(b, "test.always"); }

TEST(Buggify, OffNeverFiresNorCounts) {
  Buggify off;
  const uint64_t before = probe_hits("buggify.test.always");
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(reach_always(off));
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.site_on("test.always"));
  EXPECT_EQ(off.fired(), 0u);
  EXPECT_EQ(probe_hits("buggify.test.always"), before);
}

TEST(Buggify, OnFiresAndEachFiringCountsAsTheSitesProbe) {
  Buggify on;
  on.enable(1, Random(2), /*site_share=*/1.0, /*fire_chance=*/1.0);
  const uint64_t before = probe_hits("buggify.test.always");
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(reach_always(on));
  EXPECT_EQ(on.fired(), 10u);
  EXPECT_EQ(probe_hits("buggify.test.always"), before + 10);
  on.disable();
  EXPECT_FALSE(reach_always(on));
}

TEST(Buggify, SitesAreSwitchedOnPerRunByTheRunSeed) {
  std::vector<std::string> names;
  for (int i = 0; i < 400; ++i) names.push_back("site." + std::to_string(i));
  const auto on_sites = [&](uint64_t run_seed) {
    Buggify b;
    b.enable(run_seed, Random(99));
    std::vector<std::string> on;
    for (const std::string& n : names) {
      if (b.site_on(n)) on.push_back(n);
    }
    return on;
  };
  const std::vector<std::string> a = on_sites(7);
  EXPECT_GT(a.size(), 60u);  // kSiteShare of 400 is 100
  EXPECT_LT(a.size(), 140u);
  EXPECT_EQ(on_sites(7), a);  // every node of a run agrees, whatever its own stream
  EXPECT_NE(on_sites(8), a);
}

TEST(Buggify, AnOnSiteFiresWithItsChanceDeterministically) {
  const auto firings = [](uint64_t stream_seed) {
    Buggify b;
    b.enable(1, Random(stream_seed), 1.0, Buggify::kFireChance);
    std::vector<bool> fired;
    for (int i = 0; i < 4000; ++i) fired.push_back(b.fire("x"));
    return fired;
  };
  const std::vector<bool> a = firings(3);
  const auto count = std::count(a.begin(), a.end(), true);
  EXPECT_GT(count, 800);  // 0.25 of 4000
  EXPECT_LT(count, 1200);
  EXPECT_EQ(firings(3), a);
  EXPECT_NE(firings(4), a);
  Buggify rare;
  rare.enable(1, Random(3), 1.0, 1.0);
  int rare_fired = 0;
  for (int i = 0; i < 4000; ++i) rare_fired += rare.fire("x", 0.01) ? 1 : 0;
  EXPECT_GT(rare_fired, 10);  // a site's own chance overrides the run's
  EXPECT_LT(rare_fired, 100);
}

TEST(Buggify, ASiteSwitchedOffDrawsNothing) {
  Buggify b;
  b.enable(1, Random(5), /*site_share=*/0.0, 1.0);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(b.fire("x"));
  Random fresh(5);
  EXPECT_EQ(b.random().next_u64(), fresh.next_u64());
}

TEST(Buggify, SitesLinkedIntoTheProgramAreListed) {
  const std::vector<std::string> sites = buggify_sites();
  EXPECT_NE(std::find(sites.begin(), sites.end(), "test.always"), sites.end());
  // The broker's own, linked in from core/.
  for (const char* site : {"stream.short-read", "stream.split-write", "log.early-roll", "log.late-sync",
                           "cleaner.pass-cut-short", "client.answer-too-late", "fetch.fewer-bytes"}) {
    EXPECT_NE(std::find(sites.begin(), sites.end(), site), sites.end()) << site;
  }
}

}  // namespace
}  // namespace sluice
