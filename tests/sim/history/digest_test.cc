// digest_of keeps values it digested lately (history.cc): whatever it finds there, a value's digest is FNV-1a's,
// mixed, which traces and replays compare across builds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/fnv1a.h"
#include "core/env/random.h"
#include "sim/history/history.h"

namespace sluice::sim {
namespace {

uint64_t expected(const Bytes& bytes) {
  const uint64_t digest = mix64(fnv1a64(ByteView(bytes)));
  return digest == 0 ? 1 : digest;
}

TEST(DigestOf, IsTheStableDigestWhetherOrNotTheValueWasSeenBefore) {
  Random random(7);
  std::vector<Bytes> values;
  for (size_t size : {0, 1, 7, 8, 9, 100, 127, 128, 129, 1000}) {
    for (int i = 0; i < 20; ++i) {
      Bytes value(size);
      for (uint8_t& b : value) b = static_cast<uint8_t>(random.uniform(4));  // few symbols: near misses
      values.push_back(value);
    }
  }
  // Values that differ in one byte only, at each end and in the middle.
  Bytes base(100, 'x');
  for (size_t at : {size_t{0}, size_t{50}, size_t{99}}) {
    Bytes changed = base;
    changed[at] = 'y';
    values.push_back(changed);
  }
  values.push_back(base);
  for (int round = 0; round < 3; ++round) {
    for (const Bytes& value : values) EXPECT_EQ(digest_of(value), expected(value)) << value.size() << " bytes";
  }
}

TEST(DigestOf, ManyMoreValuesThanItKeepsStillDigestTheSame) {
  Random random(11);
  std::vector<Bytes> values;
  for (int i = 0; i < 40000; ++i) {
    Bytes value(16);
    for (uint8_t& b : value) b = static_cast<uint8_t>(random.next_u64());
    values.push_back(value);
  }
  for (const Bytes& value : values) ASSERT_EQ(digest_of(value), expected(value));
  for (auto it = values.rbegin(); it != values.rend(); ++it) ASSERT_EQ(digest_of(*it), expected(*it));
}

}  // namespace
}  // namespace sluice::sim
