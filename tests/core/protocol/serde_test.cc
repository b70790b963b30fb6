// The declarative codec: one field list, every version, classic and flexible; version ranges, nullability, tagged
// fields (unknown ones skipped), and malformed input at every cut and with random damage.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/protocol/serde.h"
#include "core/protocol/small_array.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::decoded;
using testing::encoded;
using testing::hex;

struct Tiny {
  int16_t code = 0;
  std::optional<std::string> name;
  std::vector<int32_t> ids;
  std::optional<std::string> note;  // tag 1
  std::optional<int32_t> hint;      // tag 4

  template <class Io>
  void serde(Io& io) {
    io.field("code", code);
    io.field("name", name);
    io.field("ids", ids);
    io.tagged("note", note, 1);
    io.tagged("hint", hint, 4);
  }
  bool operator==(const Tiny&) const = default;
};

struct Inner {
  int32_t id = 0;
  std::optional<std::string> label;
  std::optional<int32_t> hint;  // tag 7, v2+

  template <class Io>
  void serde(Io& io) {
    io.field("id", id);
    io.field("label", label, {.nullable_from = 1});
    io.tagged("hint", hint, 7, {.since = 2});
  }
  bool operator==(const Inner&) const = default;
};

// Every member type; flexible from version 2 in these tests.
struct Everything {
  bool b = false;
  int8_t i8 = 0;
  int16_t i16 = 0;
  int32_t i32 = 0;
  int64_t i64 = 0;
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  double f = 0;
  Uuid id;
  std::string s;
  std::optional<std::string> ns;
  Bytes by;
  std::optional<Bytes> nby;
  Records records;
  std::vector<int32_t> ints;
  std::optional<std::vector<std::string>> names;
  std::vector<Inner> inners;
  std::optional<Inner> maybe;
  Inner nested;
  int32_t late = -5;  // v2+
  int16_t gone = 0;   // v0-1
  std::optional<std::string> tag_s;  // tag 0
  std::optional<Inner> tag_struct;   // tag 1
  std::optional<int64_t> tag_n;      // tag 2

  template <class Io>
  void serde(Io& io) {
    io.field("b", b);
    io.field("i8", i8);
    io.field("i16", i16);
    io.field("i32", i32);
    io.field("i64", i64);
    io.field("u16", u16);
    io.field("u32", u32);
    io.field("f", f);
    io.field("id", id);
    io.field("s", s);
    io.field("ns", ns);
    io.field("by", by);
    io.field("nby", nby);
    io.field("records", records);
    io.field("ints", ints);
    io.field("names", names);
    io.field("inners", inners);
    io.field("maybe", maybe);
    io.field("nested", nested);
    io.field("late", late, {.since = 2});
    io.field("gone", gone, {.until = 1});
    io.tagged("tag_s", tag_s, 0);
    io.tagged("tag_struct", tag_struct, 1);
    io.tagged("tag_n", tag_n, 2);
  }
  bool operator==(const Everything&) const = default;
};

const Bytes kPayload = {1, 2, 3};

Everything full() {
  Everything e;
  e.b = true;
  e.i8 = -3;
  e.i16 = -300;
  e.i32 = 70000;
  e.i64 = -(int64_t{1} << 40);
  e.u16 = 65000;
  e.u32 = 4000000000u;
  e.f = 2.5;
  e.id.bytes[0] = 9;
  e.s = "string";
  e.ns = "nullable";
  e.by = {0, 255};
  e.nby = Bytes{};
  e.records = Records::view(kPayload);
  e.ints = {1, -1, 3};
  e.names = std::vector<std::string>{"x", ""};
  e.inners = {Inner{1, "one", std::nullopt}, Inner{2, std::nullopt, 22}};
  e.maybe = Inner{3, "three", 33};
  e.nested = Inner{4, "four", std::nullopt};
  e.late = 5;
  e.gone = 6;
  e.tag_s = "tagged";
  e.tag_struct = Inner{5, "five", 55};
  e.tag_n = -7;
  return e;
}

// What decoding at `version` must give for `e`: absent fields keep their defaults, tagged ones exist only when
// flexible.
Everything expected_at(Everything e, int16_t version) {
  const bool flexible = version >= 2;
  if (version < 2) e.late = -5;
  if (version > 1) e.gone = 0;
  for (Inner* inner : {&e.inners[0], &e.inners[1], &*e.maybe, &e.nested, &*e.tag_struct}) {
    if (!flexible) inner->hint.reset();
  }
  if (!flexible) {
    e.tag_s.reset();
    e.tag_struct.reset();
    e.tag_n.reset();
  }
  return e;
}

TEST(WireSerde, RoundTripsEveryTypeAtEveryVersion) {
  const Everything e = full();
  for (int16_t version = 1; version <= 3; ++version) {
    const bool flexible = version >= 2;
    const Bytes bytes = encoded(e, version, flexible);
    const Everything back = decoded<Everything>(bytes, version, flexible);
    EXPECT_EQ(back, expected_at(e, version)) << "version " << version;
    EXPECT_EQ(encoded(back, version, flexible), bytes) << "version " << version;
  }
}

// The same field as a SmallArray: the first element inline, the rest on the heap.
struct SmallInners {
  SmallArray<Inner> inners;

  template <class Io>
  void serde(Io& io) {
    io.field("inners", inners);
  }
  bool operator==(const SmallInners&) const = default;
};

struct VectorInners {
  std::vector<Inner> inners;

  template <class Io>
  void serde(Io& io) {
    io.field("inners", inners);
  }
};

TEST(WireSerde, SmallArraysEncodeAsVectorsDoAndMoveWhole) {
  for (const int32_t count : {0, 1, 3}) {
    SmallInners small;
    VectorInners vector;
    for (int32_t i = 0; i < count; ++i) {
      const Inner inner{.id = i + 1, .label = "inner-" + std::to_string(i)};
      small.inners.push_back(inner);
      vector.inners.push_back(inner);
    }
    for (int16_t version = 0; version <= 2; ++version) {
      const bool flexible = version == 2;
      const Bytes bytes = encoded(small, version, flexible);
      EXPECT_EQ(bytes, encoded(vector, version, flexible)) << count << " elements, v" << version;
      EXPECT_EQ(decoded<SmallInners>(bytes, version, flexible), small) << count << " elements, v" << version;
    }
    const SmallInners copy = small;
    SmallInners moved = std::move(small);  // inline or on the heap, the elements arrive whole
    EXPECT_EQ(moved, copy);
    std::vector<SmallInners> grown;
    for (int i = 0; i < 5; ++i) grown.push_back(copy);  // regrowth moves them (noexcept), never loses one
    for (const SmallInners& each : grown) EXPECT_EQ(each, copy);
  }
  static_assert(std::is_nothrow_move_constructible_v<SmallArray<Inner>>, "a vector of them moves when it grows");
}

TEST(WireSerde, KnownClassicAndFlexibleBytes) {
  const Tiny tiny{1, "ab", {7}, std::nullopt, 9};
  EXPECT_EQ(encoded(tiny, 0, false), hex("0001 | 0002 6162 | 00000001 00000007"));
  EXPECT_EQ(encoded(tiny, 0, true), hex("0001 | 03 6162 | 02 00000007 | 01 | 04 04 00000009"));
  Tiny both = tiny;
  both.note = "n";
  both.name.reset();
  EXPECT_EQ(encoded(both, 0, true), hex("0001 | 00 | 02 00000007 | 02 | 01 02 02 6e | 04 04 00000009"));
  EXPECT_EQ(decoded<Tiny>(encoded(both, 0, true), 0, true), both);
}

TEST(WireSerde, UnknownTagsAreSkipped) {
  const Bytes in = hex("0001 | 03 6162 | 02 00000007 | 03 | 02 03 aabbcc | 04 04 00000009 | 09 00");
  const Tiny tiny = decoded<Tiny>(in, 0, true);
  EXPECT_EQ(tiny, (Tiny{1, "ab", {7}, std::nullopt, 9}));
}

TEST(WireSerde, MalformedTaggedFieldsFail) {
  Tiny out;
  const Status trailing = decode(hex("0001 | 00 | 01 | 01 | 04 05 00000009 ff"), 0, true, &out);
  EXPECT_EQ(trailing.protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));
  EXPECT_NE(trailing.message().find("hint"), std::string::npos) << trailing.message();
  const Status short_value = decode(hex("0001 | 00 | 01 | 01 | 04 02 0000"), 0, true, &out);
  EXPECT_EQ(short_value.code(), Code::kCorruption);
  EXPECT_NE(short_value.message().find("hint"), std::string::npos) << short_value.message();
  const Status past_end = decode(hex("0001 | 00 | 01 | 01 | 04 09 00000009"), 0, true, &out);
  EXPECT_EQ(past_end.code(), Code::kCorruption);
}

TEST(WireSerde, AbsentFieldsKeepDefaultsAndAreNotWritten) {
  Everything e = full();
  const Bytes v1 = encoded(e, 1, false);
  e.late = 12345;  // v2+: not on the wire at v1
  EXPECT_EQ(encoded(e, 1, false), v1);
  EXPECT_EQ(decoded<Everything>(v1, 1, false).late, -5);
}

TEST(WireSerde, NullBeforeNullableFromFails) {
  Inner inner{1, std::nullopt, std::nullopt};
  Bytes out;
  const Status status = encode(inner, 0, false, &out);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("label"), std::string::npos) << status.message();
  EXPECT_TRUE(encode(inner, 1, false, &out).ok());
  Inner back;
  const Status read = decode(hex("00000001 | ffff"), 0, false, &back);
  EXPECT_EQ(read.protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));
  EXPECT_NE(read.message().find("label"), std::string::npos) << read.message();
  EXPECT_TRUE(decode(hex("00000001 | ffff"), 1, false, &back).ok());
}

TEST(WireSerde, NonNullableArrayRejectsNull) {
  Tiny out;
  const Status status = decode(hex("0001 | ffff | ffffffff"), 0, false, &out);
  EXPECT_EQ(status.code(), Code::kCorruption);
  EXPECT_NE(status.message().find("ids"), std::string::npos) << status.message();
}

TEST(WireSerde, TrailingBytesFail) {
  Tiny out;
  const Status status = decode(hex("0001 | ffff | 00000000 | 00"), 0, false, &out);
  EXPECT_EQ(status.protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));
  EXPECT_NE(status.message().find("trailing"), std::string::npos) << status.message();
}

TEST(WireSerde, HugeCountsFailWithoutAllocating) {
  Tiny out;
  // 1000 int32s announced, 8 bytes present: fails on the count, not after reading.
  const Status ints = decode(hex("0001 | ffff | 000003e8 | 0000000000000000"), 0, false, &out);
  EXPECT_EQ(ints.code(), Code::kCorruption);
  Everything e;
  const Bytes prefix = encoded(full(), 1, false);
  // Every proper prefix of a valid message fails cleanly.
  for (size_t cut = 0; cut < prefix.size(); ++cut) {
    const Status status = decode(ByteView(prefix).first(cut), 1, false, &e);
    EXPECT_EQ(status.code(), Code::kCorruption) << "cut at " << cut;
  }
}

TEST(WireSerde, RandomDamageNeverCrashes) {
  std::mt19937 rng(42);
  for (int16_t version = 1; version <= 3; ++version) {
    const bool flexible = version >= 2;
    const Bytes good = encoded(full(), version, flexible);
    for (int round = 0; round < 2000; ++round) {
      Bytes bad = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
      Everything e;
      const Status status = decode(bad, version, flexible, &e);
      if (!status.ok()) {
        EXPECT_EQ(status.protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));
      }
    }
  }
}

}  // namespace
}  // namespace sluice::protocol
