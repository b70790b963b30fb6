// Zigzag and unsigned varints: known encodings, round trips at every boundary, truncation and overlong input.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/base/varint.h"

namespace sluice {
namespace {

template <typename T>
Bytes encode_with(void (*put)(Bytes*, T), T v) {
  Bytes out;
  put(&out, v);
  return out;
}

TEST(Varint, ZigzagMapsSmallMagnitudesToSmallNumbers) {
  EXPECT_EQ(zigzag_encode32(0), 0u);
  EXPECT_EQ(zigzag_encode32(-1), 1u);
  EXPECT_EQ(zigzag_encode32(1), 2u);
  EXPECT_EQ(zigzag_encode32(-2), 3u);
  EXPECT_EQ(zigzag_encode32(INT32_MAX), 0xfffffffeu);
  EXPECT_EQ(zigzag_encode32(INT32_MIN), 0xffffffffu);
  EXPECT_EQ(zigzag_encode64(INT64_MIN), UINT64_MAX);
  EXPECT_EQ(zigzag_decode32(0xffffffffu), INT32_MIN);
  EXPECT_EQ(zigzag_decode64(UINT64_MAX - 1), INT64_MAX);
}

TEST(Varint, KnownEncodings) {
  EXPECT_EQ(encode_with(put_varint, 0), (Bytes{0x00}));
  EXPECT_EQ(encode_with(put_varint, -1), (Bytes{0x01}));   // a null key or value
  EXPECT_EQ(encode_with(put_varint, 63), (Bytes{0x7e}));
  EXPECT_EQ(encode_with(put_varint, 64), (Bytes{0x80, 0x01}));
  EXPECT_EQ(encode_with(put_varint, 300), (Bytes{0xd8, 0x04}));
  EXPECT_EQ(encode_with(put_varint, INT32_MIN), (Bytes{0xff, 0xff, 0xff, 0xff, 0x0f}));
  EXPECT_EQ(encode_with(put_unsigned_varint, 127u), (Bytes{0x7f}));
  EXPECT_EQ(encode_with(put_unsigned_varint, 128u), (Bytes{0x80, 0x01}));
  EXPECT_EQ(encode_with(put_unsigned_varint, UINT32_MAX), (Bytes{0xff, 0xff, 0xff, 0xff, 0x0f}));
  EXPECT_EQ(encode_with(put_varlong, int64_t{INT64_MIN}).size(), kMaxVarlongBytes);
  EXPECT_EQ(encode_with(put_unsigned_varlong, UINT64_MAX),
            (Bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

template <typename T, typename Read>
void expect_round_trip(void (*put)(Bytes*, T), size_t (*size)(T), Read read, T v) {
  Bytes encoded;
  encoded.push_back(0xaa);  // a neighbour that must stay unread
  put(&encoded, v);
  encoded.push_back(0x55);
  ByteView in = ByteView(encoded).subspan(1);
  auto decoded = read(&in);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string() << " for " << v;
  EXPECT_EQ(*decoded, v);
  EXPECT_EQ(encoded.size() - 2, size(v)) << v;
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0], 0x55);
}

template <typename T>
std::vector<T> boundaries() {
  std::vector<T> values = {0, 1, std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  for (int bits = 6; bits < static_cast<int>(8 * sizeof(T)); bits += 7) {
    const T p = static_cast<T>(uint64_t{1} << bits);
    for (T v : {static_cast<T>(p - 1), p, static_cast<T>(p + 1)}) {
      values.push_back(v);
      if (std::numeric_limits<T>::is_signed) values.push_back(static_cast<T>(0 - v));
    }
  }
  return values;
}

TEST(Varint, RoundTripsAtEveryBoundary) {
  for (int32_t v : boundaries<int32_t>()) expect_round_trip(put_varint, varint_size, read_varint, v);
  for (int64_t v : boundaries<int64_t>()) expect_round_trip(put_varlong, varlong_size, read_varlong, v);
  for (uint32_t v : boundaries<uint32_t>()) {
    expect_round_trip(put_unsigned_varint, unsigned_varint_size, read_unsigned_varint, v);
  }
  for (uint64_t v : boundaries<uint64_t>()) {
    expect_round_trip(put_unsigned_varlong, unsigned_varlong_size, read_unsigned_varlong, v);
  }
}

TEST(Varint, RoundTripsRandomValues) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t raw = rng() >> (rng() % 64);  // every magnitude, not just huge ones
    expect_round_trip(put_varint, varint_size, read_varint, static_cast<int32_t>(raw));
    expect_round_trip(put_varlong, varlong_size, read_varlong, static_cast<int64_t>(raw));
    expect_round_trip(put_unsigned_varint, unsigned_varint_size, read_unsigned_varint, static_cast<uint32_t>(raw));
    expect_round_trip(put_unsigned_varlong, unsigned_varlong_size, read_unsigned_varlong, raw);
  }
}

TEST(Varint, EveryTruncationFailsAndLeavesTheInput) {
  Bytes full;
  put_varlong(&full, INT64_MIN);
  for (size_t n = 0; n < full.size(); ++n) {
    ByteView in = ByteView(full).first(n);
    Result<int64_t> r = read_varlong(&in);
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), Code::kCorruption);
    EXPECT_EQ(in.size(), n);
  }
  Bytes four = {0x80, 0x80, 0x80, 0x80};
  ByteView in(four);
  EXPECT_FALSE(read_varint(&in).ok());
  EXPECT_EQ(in.size(), 4u);
}

TEST(Varint, OverlongOrOverflowingEncodingsFail) {
  auto varint_ok = [](Bytes b) {
    ByteView in(b);
    return read_varint(&in).ok();
  };
  auto varlong_ok = [](Bytes b) {
    ByteView in(b);
    return read_varlong(&in).ok();
  };
  EXPECT_TRUE(varint_ok({0xff, 0xff, 0xff, 0xff, 0x0f}));
  EXPECT_FALSE(varint_ok({0xff, 0xff, 0xff, 0xff, 0x10}));        // a 33rd bit
  EXPECT_FALSE(varint_ok({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}));  // a sixth byte
  EXPECT_TRUE(varlong_ok({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  EXPECT_FALSE(varlong_ok({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}));
  EXPECT_FALSE(varlong_ok({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}));
  ByteView in;
  EXPECT_FALSE(read_unsigned_varint(&in).ok());
}

TEST(Varint, NonMinimalEncodingsAreAcceptedAsKafkaDoes) {
  Bytes padded = {0x80, 0x80, 0x00, 0x07};
  ByteView in(padded);
  Result<uint32_t> v = read_unsigned_varint(&in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 0u);
  EXPECT_EQ(in.size(), 1u);
}

template <typename T>
void expect_same_read(const Bytes& bytes, Result<T> (*read)(ByteView*), bool (*try_read)(ByteView*, T*)) {
  ByteView slow(bytes);
  ByteView fast(bytes);
  const Result<T> expected = read(&slow);
  T value = 0;
  ASSERT_EQ(try_read(&fast, &value), expected.ok()) << testing::PrintToString(bytes);
  EXPECT_EQ(fast.size(), slow.size());
  if (expected.ok()) {
    EXPECT_EQ(value, *expected);
  }
}

// The fast signed reads accept exactly what the Result reads accept, with the same value and the same bytes
// consumed: every one- and two-byte input, and random ones biased to the bytes that matter (continuation bits,
// all-ones, zero) at every length up to past the longest encoding.
TEST(Varint, TheFastReadsAgreeWithTheResultReads) {
  std::vector<Bytes> inputs;
  inputs.push_back({});
  for (int a = 0; a < 256; ++a) {
    inputs.push_back({static_cast<uint8_t>(a)});
    for (int b = 0; b < 256; ++b) inputs.push_back({static_cast<uint8_t>(a), static_cast<uint8_t>(b)});
  }
  std::mt19937_64 rng(7);
  const uint8_t interesting[] = {0x00, 0x01, 0x0f, 0x10, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x02, 0x03};
  for (int i = 0; i < 200000; ++i) {
    Bytes in(rng() % 13);
    for (uint8_t& byte : in) {
      byte = rng() % 4 == 0 ? static_cast<uint8_t>(rng()) : interesting[rng() % sizeof(interesting)];
    }
    inputs.push_back(std::move(in));
  }
  for (const Bytes& bytes : inputs) {
    expect_same_read(bytes, read_varint, try_read_varint);
    expect_same_read(bytes, read_varlong, try_read_varlong);
  }
}

}  // namespace
}  // namespace sluice
