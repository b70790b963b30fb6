// FNV-1a, 64 bits: a hash that stays the same across builds and processes, for what outlives a run (the BUGGIFY
// sites a seed picks, history digests compared across builds, the topic a retired directory names). Not for tables
// an adversary fills.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/bytes.h"

namespace sluice {

inline uint64_t fnv1a64(ByteView bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const uint8_t b : bytes) hash = (hash ^ b) * 0x100000001b3ULL;
  return hash;
}

inline uint64_t fnv1a64(std::string_view text) {
  return fnv1a64(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace sluice
