#include "core/env/random.h"

#include "core/base/assert.h"

namespace sluice {
namespace {

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Random::Random(uint64_t seed) : seed_(seed) {
  uint64_t s = seed;
  for (uint64_t& word : state_) {
    s = mix64(s);
    word = s;
  }
  // xoshiro must not start from the all-zero state; mix64 never yields four zeros, but say so.
  SLUICE_ASSERT((state_[0] | state_[1] | state_[2] | state_[3]) != 0);
}

uint64_t Random::next_u64() {
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

uint64_t Random::uniform(uint64_t bound) {
  SLUICE_ASSERT(bound > 0);
  // Lemire's multiply-shift; the tiny bias is irrelevant for scheduling and fault draws.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * bound) >> 64);
}

int64_t Random::uniform_range(int64_t low, int64_t high) {
  SLUICE_ASSERT(low <= high);
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  if (span == UINT64_MAX) return static_cast<int64_t>(next_u64());
  return static_cast<int64_t>(static_cast<uint64_t>(low) + uniform(span + 1));
}

double Random::next_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

bool Random::chance(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return next_double() < p;
}

Random Random::fork(uint64_t stream) const { return Random(mix64(seed_ ^ mix64(stream + 0x51u))); }

}  // namespace sluice
