// digest_of is XXH3's 64 bits of a value (history.h), fixed so that traces compare across builds: the values
// below are XXH3's published function, and a digest that changed would fail here before any trace differed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/env/random.h"
#include "sim/history/history.h"

namespace sluice::sim {
namespace {

TEST(DigestOf, IsXxh3OfTheBytes) {
  EXPECT_EQ(digest_of(ByteView()), 0x2d06800538d394c2ULL);
  EXPECT_EQ(digest_of(as_bytes("producer-1#42|")), 0x9c297c10d3b7d832ULL);
  EXPECT_EQ(digest_of(as_bytes(std::string(100, 'x'))), 0xc90984ffdf50ce42ULL);
  // Every size XXH3 treats apart (up to 16, 128 and 240 bytes, then longer), on few symbols: near misses.
  Random random(7);
  for (size_t size : {1, 3, 4, 8, 9, 16, 17, 100, 128, 129, 240, 241, 1000, 100000}) {
    for (int i = 0; i < 20; ++i) {
      Bytes value(size);
      for (uint8_t& b : value) b = static_cast<uint8_t>(random.uniform(4));
      const uint64_t xxh3 = XXH3_64bits(value.data(), value.size());
      EXPECT_EQ(digest_of(value), xxh3 == 0 ? 1 : xxh3) << size << " bytes";
    }
  }
}

TEST(DigestOf, TellsValuesThatDifferInOneByteApart) {
  const Bytes base(100, 'x');
  std::vector<uint64_t> digests{digest_of(base)};
  for (size_t at : {size_t{0}, size_t{50}, size_t{99}}) {
    Bytes changed = base;
    changed[at] = 'y';
    digests.push_back(digest_of(changed));
  }
  digests.push_back(digest_of(ByteView(base).first(99)));
  for (size_t i = 0; i < digests.size(); ++i) {
    EXPECT_NE(digests[i], 0u);  // 0 means a tombstone
    for (size_t j = i + 1; j < digests.size(); ++j) EXPECT_NE(digests[i], digests[j]) << i << " and " << j;
  }
}

}  // namespace
}  // namespace sluice::sim
