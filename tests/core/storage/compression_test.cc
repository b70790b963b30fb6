// The four codecs: round trips, the forms clients send (xerial snappy, concatenated gzip members, zstd frames
// without a content size, lz4 frames with content size and linked blocks), clean failure on corrupt or truncated
// input, and the decompression bound.
#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/storage/compression.h"

namespace sluice::storage {
namespace {

constexpr Compression kCodecs[] = {Compression::kGzip, Compression::kSnappy, Compression::kLz4, Compression::kZstd};

Bytes repetitive(size_t n) {
  Bytes out;
  const std::string line = "sluice record payload, compressible and repetitive. ";
  while (out.size() < n) out.insert(out.end(), line.begin(), line.end());
  out.resize(n);
  return out;
}

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

Bytes must(Result<Bytes> r) {
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r).value() : Bytes();
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

void put_be32(Bytes* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<uint8_t>(v >> shift));
}

TEST(Compression, RoundTripsEveryCodec) {
  const std::vector<Bytes> inputs = {Bytes(), to_bytes("x"), repetitive(100), repetitive(1 << 20),
                                     random_bytes(70000, 1)};
  for (Compression codec : kCodecs) {
    for (const Bytes& input : inputs) {
      const Bytes compressed = must(compress(codec, input));
      EXPECT_EQ(must(decompress(codec, compressed)), input) << int(codec) << " size " << input.size();
    }
  }
  EXPECT_EQ(must(decompress(Compression::kNone, must(compress(Compression::kNone, repetitive(10))))),
            repetitive(10));
}

TEST(Compression, WritesTheStandardMagic) {
  const Bytes input = repetitive(5000);
  auto starts_with = [](const Bytes& b, Bytes prefix) {
    return b.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), b.begin());
  };
  EXPECT_TRUE(starts_with(must(compress(Compression::kGzip, input)), {0x1f, 0x8b}));
  EXPECT_TRUE(starts_with(must(compress(Compression::kLz4, input)), {0x04, 0x22, 0x4d, 0x18}));
  EXPECT_TRUE(starts_with(must(compress(Compression::kZstd, input)), {0x28, 0xb5, 0x2f, 0xfd}));
  EXPECT_LT(must(compress(Compression::kSnappy, input)).size(), input.size());
}

Bytes xerial_header() { return Bytes{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}; }

Bytes raw_snappy(const Bytes& input) {
  size_t length = snappy_max_compressed_length(input.size());
  Bytes out(length);
  EXPECT_EQ(snappy_compress(reinterpret_cast<const char*>(input.data()), input.size(),
                            reinterpret_cast<char*>(out.data()), &length),
            SNAPPY_OK);
  out.resize(length);
  return out;
}

TEST(Compression, DecodesXerialSnappyFraming) {
  const Bytes a = repetitive(32 * 1024);
  const Bytes b = random_bytes(1000, 2);
  Bytes framed = xerial_header();
  for (const Bytes* part : {&a, &b}) {
    const Bytes block = raw_snappy(*part);
    put_be32(&framed, static_cast<uint32_t>(block.size()));
    framed.insert(framed.end(), block.begin(), block.end());
  }
  EXPECT_EQ(must(decompress(Compression::kSnappy, framed)), concat(a, b));
  EXPECT_EQ(must(decompress(Compression::kSnappy, xerial_header())), Bytes());  // no chunks: nothing

  for (size_t cut : {size_t{10}, size_t{17}, size_t{20}, framed.size() - 1}) {
    Result<Bytes> r = decompress(Compression::kSnappy, ByteView(framed).first(cut));
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_EQ(r.status().code(), Code::kCorruption);
  }
  Bytes overlong = xerial_header();
  put_be32(&overlong, 0xffffffff);
  EXPECT_FALSE(decompress(Compression::kSnappy, overlong).ok());
  Bytes empty_chunk = xerial_header();
  put_be32(&empty_chunk, 0);
  EXPECT_FALSE(decompress(Compression::kSnappy, empty_chunk).ok());
}

TEST(Compression, DecodesConcatenatedGzipMembersAndZstdFrames) {
  const Bytes a = repetitive(3000);
  const Bytes b = random_bytes(500, 3);
  for (Compression codec : {Compression::kGzip, Compression::kZstd, Compression::kLz4}) {
    const Bytes joined = concat(must(compress(codec, a)), must(compress(codec, b)));
    EXPECT_EQ(must(decompress(codec, joined)), concat(a, b)) << int(codec);
  }
}

TEST(Compression, DecodesZstdFramesWithoutContentSize) {
  // What streaming writers (the Java client's ZstdOutputStream) produce: the decoder cannot size its output upfront.
  const Bytes input = repetitive(300000);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0)));
  Bytes frame(ZSTD_compressBound(input.size()));
  const size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), input.data(), input.size());
  ZSTD_freeCCtx(cctx);
  ASSERT_FALSE(ZSTD_isError(n));
  frame.resize(n);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  EXPECT_EQ(must(decompress(Compression::kZstd, frame)), input);
  EXPECT_EQ(decompress(Compression::kZstd, frame, input.size() - 1).status().code(), Code::kCorruption);
}

TEST(Compression, DecodesLz4FramesWithContentSizeChecksumsAndLinkedBlocks) {
  const Bytes input = repetitive(200000);
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.contentSize = input.size();
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  Bytes frame(LZ4F_compressFrameBound(input.size(), &prefs));
  const size_t n = LZ4F_compressFrame(frame.data(), frame.size(), input.data(), input.size(), &prefs);
  ASSERT_FALSE(LZ4F_isError(n));
  frame.resize(n);
  EXPECT_EQ(must(decompress(Compression::kLz4, frame)), input);
  frame[frame.size() - 1] ^= 0x01;  // the content checksum
  EXPECT_EQ(decompress(Compression::kLz4, frame).status().code(), Code::kCorruption);
}

TEST(Compression, EmptyTruncatedOrTrailingInputFailsCleanly) {
  const Bytes input = repetitive(20000);
  for (Compression codec : kCodecs) {
    EXPECT_EQ(decompress(codec, Bytes()).status().code(), Code::kCorruption) << int(codec);
    const Bytes compressed = must(compress(codec, input));
    for (size_t cut = 0; cut < compressed.size(); cut += 1 + cut / 4) {
      Result<Bytes> r = decompress(codec, ByteView(compressed).first(cut));
      EXPECT_FALSE(r.ok()) << int(codec) << " cut at " << cut;
    }
    Bytes trailing = compressed;
    trailing.push_back(0x00);
    trailing.push_back(0x42);
    EXPECT_FALSE(decompress(codec, trailing).ok()) << int(codec);
  }
}

TEST(Compression, RandomCorruptionNeverCrashes) {
  // Every result is either an error or some output within the bound; ASan watches the rest.
  std::mt19937 rng(11);
  const Bytes input = repetitive(50000);
  for (Compression codec : kCodecs) {
    const Bytes compressed = must(compress(codec, input));
    for (int trial = 0; trial < 300; ++trial) {
      Bytes mutated = compressed;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) mutated[rng() % mutated.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      Result<Bytes> r = decompress(codec, mutated, 100000);
      if (r.ok()) {
        EXPECT_LE(r->size(), 100000u);
      } else {
        EXPECT_EQ(r.status().code(), Code::kCorruption);
      }
    }
    for (int trial = 0; trial < 100; ++trial) {
      Result<Bytes> r = decompress(codec, random_bytes(1 + rng() % 300, rng()), 100000);
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), Code::kCorruption);
      }
    }
  }
}

TEST(Compression, OutputIsBounded) {
  const Bytes bomb = Bytes(8 << 20, 0);  // 8 MiB of zeros: a few KiB compressed
  for (Compression codec : kCodecs) {
    const Bytes compressed = must(compress(codec, bomb));
    EXPECT_LT(compressed.size(), bomb.size() / 10) << int(codec);
    Result<Bytes> r = decompress(codec, compressed, 1 << 20);
    ASSERT_FALSE(r.ok()) << int(codec);
    EXPECT_EQ(r.status().code(), Code::kCorruption);
    EXPECT_NE(r.status().message().find("exceeds"), std::string::npos) << r.status().message();
    EXPECT_FALSE(decompress(codec, compressed, bomb.size() - 1).ok()) << int(codec);
    EXPECT_EQ(must(decompress(codec, compressed, bomb.size())).size(), bomb.size()) << int(codec);
  }
  EXPECT_FALSE(decompress(Compression::kNone, Bytes(11), 10).ok());
}

// A raw snappy block starts with the length of its output, and the output is allocated at that length: a block of
// a few bytes that claims 60 MiB (more than any block of its size can expand to) is refused before that
// allocation, not after it (found by fuzz/batch_fuzzer.cc's small-input, bounded-allocation rule).
TEST(Compression, ASnappyBlockClaimingMoreThanItCanHoldIsRefusedBeforeItsOutputIsAllocated) {
  Bytes block;
  for (uint32_t length = 60u << 20; length >= 0x80; length >>= 7) block.push_back(static_cast<uint8_t>(length | 0x80));
  block.push_back(static_cast<uint8_t>((60u << 20) >> 21));
  block.insert(block.end(), {0x00, 'x', 0x00, 'y'});  // two one-byte literals
  Result<Bytes> r = decompress(Compression::kSnappy, block);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorruption);
  EXPECT_NE(r.status().message().find("claims 62914560 bytes"), std::string::npos) << r.status().message();
  // The densest snappy still decodes: 8 MiB of zeros is ~21 times smaller as a block, under the 22 allowed.
  const Bytes zeros(8 << 20, 0);
  EXPECT_EQ(must(decompress(Compression::kSnappy, must(compress(Compression::kSnappy, zeros)), 8 << 20)), zeros);
}

TEST(Compression, UnknownCodecNumbersFail) {
  const auto codec = static_cast<Compression>(5);
  EXPECT_EQ(decompress(codec, to_bytes("abc")).status().code(), Code::kCorruption);
  EXPECT_EQ(compress(codec, to_bytes("abc")).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::storage
