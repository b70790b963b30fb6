// The wire primitives: known encodings, round trips, and every way input can be malformed (truncated, negative or
// huge lengths and counts, overlong varints), which must fail with INVALID_REQUEST naming the field.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/protocol/error_codes.h"
#include "core/protocol/wire.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::hex;

template <typename F>
Bytes written(F&& f) {
  Bytes out;
  Writer w(&out);
  f(w);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  w.finish();
  return out;
}

void expect_malformed(const Reader& r, std::string_view field) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorruption);
  EXPECT_EQ(r.status().protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));
  EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
}

// Reads `input` with `read`, which must fail with INVALID_REQUEST naming `field`.
template <typename F>
void expect_fails(std::string_view input, std::string_view field, F read) {
  const Bytes in = hex(input);
  Reader r(in);
  read(r, field);
  expect_malformed(r, field);
}

TEST(WireReader, FixedWidthBigEndian) {
  const Bytes in = hex("7f | 0102 | fffffffe | 0000000000000100 | ffff | 80000000 | 02 | 3ff8000000000000");
  Reader r(in);
  EXPECT_EQ(r.read_int8("a"), 127);
  EXPECT_EQ(r.read_int16("b"), 0x0102);
  EXPECT_EQ(r.read_int32("c"), -2);
  EXPECT_EQ(r.read_int64("d"), 256);
  EXPECT_EQ(r.read_uint16("e"), 0xffff);
  EXPECT_EQ(r.read_uint32("f"), 0x80000000u);
  EXPECT_TRUE(r.read_bool("g"));  // any non-zero byte
  EXPECT_EQ(r.read_float64("h"), 1.5);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(WireWriter, FixedWidthRoundTrip) {
  const Bytes out = written([](Writer& w) {
    w.put_int8(-128);
    w.put_int16(std::numeric_limits<int16_t>::min());
    w.put_int32(std::numeric_limits<int32_t>::max());
    w.put_int64(-1);
    w.put_uint16(65535);
    w.put_uint32(0xdeadbeef);
    w.put_bool(true);
    w.put_float64(-0.25);
  });
  EXPECT_EQ(out, hex("80 | 8000 | 7fffffff | ffffffffffffffff | ffff | deadbeef | 01 | bfd0000000000000"));
  Reader r(out);
  EXPECT_EQ(r.read_int8("a"), -128);
  EXPECT_EQ(r.read_int16("b"), std::numeric_limits<int16_t>::min());
  EXPECT_EQ(r.read_int32("c"), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(r.read_int64("d"), -1);
  EXPECT_EQ(r.read_uint16("e"), 65535);
  EXPECT_EQ(r.read_uint32("f"), 0xdeadbeefu);
  EXPECT_TRUE(r.read_bool("g"));
  EXPECT_EQ(r.read_float64("h"), -0.25);
  EXPECT_TRUE(r.ok());
}

TEST(WireReader, TruncatedFixedWidthFailsAndSticks) {
  const Bytes in = hex("0001 02");
  Reader r(in);
  EXPECT_EQ(r.read_int16("first"), 1);
  EXPECT_EQ(r.read_int32("partition_index"), 0);
  expect_malformed(r, "partition_index");
  EXPECT_NE(r.status().message().find("offset 2"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(r.read_int8("later"), 0);  // sticky: the first failure is kept
  expect_malformed(r, "partition_index");
}

TEST(WireReader, Varints) {
  const Bytes out = written([](Writer& w) {
    w.put_uvarint(300);
    w.put_varint(-1);
    w.put_varlong(std::numeric_limits<int64_t>::min());
    w.put_uvarint(std::numeric_limits<uint32_t>::max());
  });
  EXPECT_EQ(out, hex("ac02 | 01 | ffffffffffffffffff01 | ffffffff0f"));
  Reader r(out);
  EXPECT_EQ(r.read_uvarint("a"), 300u);
  EXPECT_EQ(r.read_varint("b"), -1);
  EXPECT_EQ(r.read_varlong("c"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(r.read_uvarint("d"), std::numeric_limits<uint32_t>::max());
  EXPECT_TRUE(r.ok());
}

TEST(WireReader, OverlongVarintsFail) {
  // A 32-bit varint takes 5 bytes at most, a 64-bit one 10; the last byte may not carry bits past the type.
  expect_fails("808080808001", "count", [](Reader& r, auto f) { r.read_uvarint(f); });
  expect_fails("808080808001", "delta", [](Reader& r, auto f) { r.read_varint(f); });
  expect_fails("8080808080808080808001", "timestamp", [](Reader& r, auto f) { r.read_varlong(f); });
  expect_fails("ffffffff1f", "size", [](Reader& r, auto f) { r.read_uvarint(f); });
  expect_fails("8080", "length", [](Reader& r, auto f) { r.read_uvarint(f); });
}

TEST(WireWriter, StringsClassicAndCompact) {
  const Bytes out = written([](Writer& w) {
    w.put_string("a", "hi", false);
    w.put_string("b", "hi", true);
    w.put_string("c", "", false);
    w.put_string("d", "", true);
    w.put_nullable_string("e", std::nullopt, false);
    w.put_nullable_string("f", std::nullopt, true);
  });
  EXPECT_EQ(out, hex("0002 6869 | 03 6869 | 0000 | 01 | ffff | 00"));
  Reader r(out);
  EXPECT_EQ(r.read_string("a", false), "hi");
  EXPECT_EQ(r.read_string("b", true), "hi");
  EXPECT_EQ(r.read_nullable_string("c", false), std::optional<std::string>(""));
  EXPECT_EQ(r.read_string("d", true), "");
  EXPECT_EQ(r.read_nullable_string("e", false), std::nullopt);
  EXPECT_EQ(r.read_nullable_string("f", true), std::nullopt);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

// A compact length below 127 is one byte, written inline when it fits the window; 127 and above take two.
TEST(WireWriter, CompactLengthsAtTheOneByteBoundary) {
  const std::string s126(126, 'a');
  const std::string s127(127, 'b');
  const Bytes out = written([&](Writer& w) {
    w.put_string("a", s126, true);
    w.put_string("b", s127, true);
    w.put_array_length("c", 126, true);
    w.put_array_length("d", 127, true);
  });
  ASSERT_EQ(out.size(), 1 + 126 + 2 + 127 + 1 + 2);
  EXPECT_EQ(out[0], 0x7f);
  EXPECT_EQ(Bytes(out.begin() + 127, out.begin() + 129), hex("8001"));
  EXPECT_EQ(Bytes(out.end() - 3, out.end()), hex("7f 8001"));
  Reader r(out);
  EXPECT_EQ(r.read_string("a", true), s126);
  EXPECT_EQ(r.read_string("b", true), s127);
  EXPECT_EQ(r.read_uvarint("c"), 127u);
  EXPECT_EQ(r.read_uvarint("d"), 128u);
  EXPECT_TRUE(r.ok());
}

// Strings and counts at the end of the window: one that fits exactly stays in it, one a byte longer grows it.
TEST(WireWriter, CompactFieldsAtTheEndOfTheWindow) {
  for (const size_t before : {250, 251}) {  // the first window is the 256 bytes reserved
    Bytes out;
    out.reserve(256);
    {
      Writer w(&out);
      w.put_raw(Bytes(before, 0x00));
      w.put_string("name", "xyzab", true);  // 6 bytes
      w.put_string("next", "c", true);
      w.put_array_length("count", 3, true);
    }
    ASSERT_EQ(out.size(), before + 6 + 2 + 1);
    EXPECT_EQ(Bytes(out.begin() + static_cast<std::ptrdiff_t>(before), out.end()), hex("06 78797a6162 | 02 63 | 04"));
  }
}

TEST(WireReader, MalformedStrings) {
  expect_fails("ffff", "host", [](Reader& r, auto f) { r.read_string(f, false); });  // null, not nullable
  expect_fails("fffe", "client_id", [](Reader& r, auto f) { r.read_nullable_string(f, false); });
  expect_fails("0005 6869", "name", [](Reader& r, auto f) { r.read_string(f, false); });
  // Compact length 2^32 - 2: no allocation may follow.
  expect_fails("ffffffff0f", "rack", [](Reader& r, auto f) { r.read_nullable_string(f, true); });
  Bytes too_long = hex("818002");  // compact length 0x8000: over Kafka's string limit even with the bytes there
  too_long.resize(too_long.size() + 0x8000, 'x');
  Reader e(too_long);
  e.read_string("topic", true);
  expect_malformed(e, "topic");
}

TEST(WireWriter, OverlongStringFails) {
  Bytes out;
  Writer w(&out);
  w.put_string("config_value", std::string(kMaxStringBytes + 1, 'x'), false);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kInvalidArgument);
  EXPECT_NE(w.status().message().find("config_value"), std::string::npos);
  w.put_int32(1);  // dropped after the failure
  EXPECT_TRUE(out.empty());
}

// A writer appends through a window sized to the vector's capacity: what it held before stays, the spare bytes go
// at finish() or with the writer, and writing may go on after finish().
TEST(WireWriter, AppendsAfterWhatTheBufferHeldAndTrimsItsWindow) {
  Bytes out = {0xaa, 0xbb};
  out.reserve(1000);
  {
    Writer w(&out);
    w.put_int16(0x0102);
    EXPECT_EQ(w.size(), 4u);
    w.finish();
    EXPECT_EQ(out, hex("aabb0102"));
    w.put_uvarint(300);  // two bytes
    w.put_raw(Bytes{0x07});
  }  // the destructor trims
  EXPECT_EQ(out, hex("aabb0102ac0207"));
  // Past the first window: a reallocation keeps what was written.
  Bytes big;
  {
    Writer w(&big);
    for (int32_t i = 0; i < 1000; ++i) w.put_int32(i);
  }
  ASSERT_EQ(big.size(), 4000u);
  Reader r(big);
  for (int32_t i = 0; i < 1000; ++i) ASSERT_EQ(r.read_int32("i"), i);
}

TEST(WireWriter, StopsAtItsLimitAndDropsWhatFollows) {
  Bytes out = {0x01};
  Writer w(&out, 9);
  w.put_int64(2);  // 9 bytes: at the limit
  EXPECT_TRUE(w.ok());
  w.put_int8(3);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kInvalidArgument);
  w.put_int8(4);  // dropped after the failure
  w.finish();
  EXPECT_EQ(out, hex("010000000000000002"));
}

TEST(WireReader, BytesClassicAndCompact) {
  const Bytes out = written([](Writer& w) {
    w.put_bytes("a", as_bytes("xyz"), false);
    w.put_bytes("b", as_bytes("xyz"), true);
    w.put_null(false, true);
    w.put_null(true, true);
  });
  EXPECT_EQ(out, hex("00000003 78797a | 04 78797a | ffffffff | 00"));
  Reader r(out);
  EXPECT_EQ(as_chars(*r.read_nullable_bytes("a", false)), "xyz");
  EXPECT_EQ(as_chars(*r.read_nullable_bytes("b", true)), "xyz");
  EXPECT_EQ(r.read_nullable_bytes("c", false), std::nullopt);
  EXPECT_EQ(r.read_nullable_bytes("d", true), std::nullopt);
  EXPECT_TRUE(r.ok());
}

TEST(WireReader, MalformedBytes) {
  expect_fails("fffffff0", "records", [](Reader& r, auto f) { r.read_nullable_bytes(f, false); });
  expect_fails("7fffffff 00", "metadata", [](Reader& r, auto f) { r.read_nullable_bytes(f, false); });
  expect_fails("ffffffff0f 00", "assignment", [](Reader& r, auto f) { r.read_nullable_bytes(f, true); });
}

TEST(WireReader, ArrayLengths) {
  const Bytes in = hex("ffffffff | 00000000 | 00 | 01 | 00000002 0000");
  Reader r(in);
  EXPECT_EQ(r.read_array_length("a", false), -1);
  EXPECT_EQ(r.read_array_length("b", false), 0);
  EXPECT_EQ(r.read_array_length("c", true), -1);
  EXPECT_EQ(r.read_array_length("d", true), 0);
  EXPECT_EQ(r.read_array_length("e", false), 2);  // two bytes left: plausible
  EXPECT_TRUE(r.ok());
}

TEST(WireReader, MalformedArrayLengths) {
  expect_fails("fffffffe", "topics", [](Reader& r, auto f) { r.read_array_length(f, false); });
  // Two billion elements in two bytes.
  expect_fails("7fffffff 0000", "partitions", [](Reader& r, auto f) { r.read_array_length(f, false); });
  expect_fails("ffffffff0f", "brokers", [](Reader& r, auto f) { r.read_array_length(f, true); });
}

TEST(WireReader, TaggedFieldBlock) {
  const Bytes in = hex("02 | 00 02 abcd | 05 00 | 7f");
  Reader r(in);
  const std::vector<TaggedField> fields = r.read_tagged_fields("tags");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].tag, 0u);
  EXPECT_EQ(fields[0].data.size(), 2u);
  EXPECT_EQ(fields[1].tag, 5u);
  EXPECT_TRUE(fields[1].data.empty());
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(WireReader, MalformedTaggedFieldBlocks) {
  auto read_block = [](Reader& r, std::string_view where) { EXPECT_TRUE(r.read_tagged_fields(where).empty()); };
  expect_fails("ffffffff0f", "topic tagged fields", read_block);          // count past the end
  expect_fails("01 | 03 05 abcd", "partition tagged fields", read_block);  // data past the end
  expect_fails("01 | 03", "header tagged fields", read_block);             // size missing
}

TEST(WireWriter, TaggedFieldsAreSortedByTag) {
  const Bytes out = written([](Writer& w) {
    w.put_tagged_fields({EncodedTag{3, hex("01")}, EncodedTag{0, hex("aabb")}});
    w.put_tagged_fields({});
  });
  EXPECT_EQ(out, hex("02 | 00 02 aabb | 03 01 01 | 00"));
}

TEST(WireUuid, TextFormAsKafka) {
  EXPECT_TRUE(Uuid::zero().is_zero());
  EXPECT_EQ(Uuid::zero().to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
  Uuid one;
  one.bytes[15] = 1;  // Kafka's METADATA_TOPIC_ID, new Uuid(0, 1)
  EXPECT_EQ(one.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
  Uuid all;
  all.bytes.fill(0xff);
  EXPECT_EQ(all.to_string(), "_____________________w");
  for (const Uuid& u : {Uuid::zero(), one, all}) {
    Result<Uuid> back = Uuid::parse(u.to_string());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, u);
  }
  EXPECT_FALSE(Uuid::parse("AAAA").ok());
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAA+A").ok());  // '+' is not URL-safe
  EXPECT_FALSE(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAB").ok());  // bits past the 128th
}

TEST(WireUuid, RoundTripOnTheWire) {
  Uuid u;
  for (size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = static_cast<uint8_t>(i * 17);
  const Bytes out = written([&](Writer& w) { w.put_uuid(u); });
  ASSERT_EQ(out.size(), 16u);
  Reader r(out);
  EXPECT_EQ(r.read_uuid("topic_id"), u);
  Reader truncated(ByteView(out).first(15));
  truncated.read_uuid("topic_id");
  expect_malformed(truncated, "topic_id");
}

TEST(WireRecords, ViewsOwnedAndNull) {
  const Bytes data = hex("010203");
  const Records view = Records::view(data);
  const Records owned = Records::own(data);
  EXPECT_FALSE(view.is_null());
  EXPECT_EQ(view.bytes().data(), data.data());  // no copy
  EXPECT_EQ(view, owned);
  EXPECT_TRUE(Records().is_null());
  EXPECT_NE(Records(), Records::own({}));  // null differs from empty
  const Records copy = owned;
  EXPECT_NE(copy.bytes().data(), owned.bytes().data());
  EXPECT_EQ(copy, owned);
}

}  // namespace
}  // namespace sluice::protocol
