// Random: a seeded generator (xoshiro256**). The only randomness the core may use: one per node, seeded by the
// world (net/ from the OS, sim/ from the run's seed), so a simulation replays exactly.
#pragma once

#include <cstdint>

namespace sluice {

class Random {
 public:
  explicit Random(uint64_t seed);

  uint64_t next_u64();
  // Uniform in [0, bound). REQUIRES: bound > 0.
  uint64_t uniform(uint64_t bound);
  // Uniform in [low, high]. REQUIRES: low <= high.
  int64_t uniform_range(int64_t low, int64_t high);
  // Uniform in [0, 1).
  double next_double();
  // True with probability p.
  bool chance(double p);
  // An independent stream derived from this generator's seed and `stream`; does not advance this generator.
  Random fork(uint64_t stream) const;

  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t state_[4];
};

// The splitmix64 finaliser: a good 64-bit mixer, also used to fold trace hashes (inline: every simulated event and
// disk write folds through it).
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace sluice
