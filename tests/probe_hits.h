// How often probes fired in this process so far (core/base/assert.h: every SLUICE_PROBE site is linked in).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/assert.h"

namespace sluice {

// Hits of every probe site named `name` (one name may mark several sites).
inline uint64_t probe_hits(std::string_view name) {
  uint64_t hits = 0;
  for (const ProbeSite& site : probe_sites()) {
    if (name == site.name) hits += site.hits;
  }
  return hits;
}

}  // namespace sluice
