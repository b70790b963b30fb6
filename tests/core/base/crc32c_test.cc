// CRC32C: published vectors, extension, and ISA-L's implementation against the portable one and a bit-at-a-time
// reference on buffers of many sizes (below and above ISA-L's folding thresholds) and alignments.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/base/crc32c.h"

namespace sluice {
namespace {

uint32_t crc32c_bitwise(ByteView data) {
  uint32_t crc = 0xffffffff;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78 : 0);
  }
  return ~crc;
}

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xe3069283u);
  EXPECT_EQ(crc32c(ByteView()), 0u);
  // RFC 3720 (iSCSI), appendix B.4.
  Bytes zeros(32, 0x00);
  Bytes ones(32, 0xff);
  Bytes up(32);
  Bytes down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones), 0x62a8ab43u);
  EXPECT_EQ(crc32c(up), 0x46dd794eu);
  EXPECT_EQ(crc32c(down), 0x113fdb5cu);
  EXPECT_EQ(crc32c_extend_portable(0, as_bytes("123456789")), 0xe3069283u);
}

TEST(Crc32c, ExtendEqualsOneShot) {
  const std::string text = "The quick brown fox jumps over the lazy dog, again and again and again.";
  for (size_t split = 0; split <= text.size(); ++split) {
    const ByteView all = as_bytes(text);
    EXPECT_EQ(crc32c_extend(crc32c(all.first(split)), all.subspan(split)), crc32c(all)) << split;
  }
}

TEST(Crc32c, LibraryMatchesPortableOnManySizesAndAlignments) {
  std::mt19937 rng(7);
  Bytes buffer(3 * 8192 * 2 + 3 * 256 * 3 + 64);
  for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng());
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 1100; ++n) sizes.push_back(n);
  for (size_t n : {3 * 256 - 1, 3 * 256 + 7, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 3 * 256 + 5, 2 * 3 * 8192 + 999}) {
    sizes.push_back(n);
  }
  for (size_t n : sizes) {
    for (size_t align = 0; align < 8; ++align) {
      const ByteView view = ByteView(buffer).subspan(align, n);
      const uint32_t seed = static_cast<uint32_t>(n * 2654435761u);
      ASSERT_EQ(crc32c_extend(seed, view), crc32c_extend_portable(seed, view)) << n << " at +" << align;
    }
    const ByteView view = ByteView(buffer).first(n);
    ASSERT_EQ(crc32c(view), crc32c_bitwise(view)) << n;
  }
}

}  // namespace
}  // namespace sluice
