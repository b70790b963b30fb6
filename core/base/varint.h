// Variable-length integers as Kafka writes them: 7 bits a byte, low group first, the high bit meaning "more".
// Signed values (record fields, docs/kafka-protocol.md §3) are zigzag-encoded first, (n << 1) ^ (n >> 63), so that
// small negative numbers stay short; unsigned ones are the compact protocol fields (lengths + 1, tagged fields).
//
// Decoding takes a view and advances it past the bytes it read. It never reads past the view's end and fails with
// kCorruption on truncation or on an encoding longer than the type allows (5 bytes for 32-bit values, 10 for 64-bit,
// and a last byte whose bits would not fit). Non-minimal encodings (0x80 0x00 for 0) are accepted, as Kafka does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/bytes.h"
#include "core/base/result.h"

namespace sluice {

inline constexpr size_t kMaxVarintBytes = 5;
inline constexpr size_t kMaxVarlongBytes = 10;

inline constexpr uint32_t zigzag_encode32(int32_t v) {
  return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
}
inline constexpr uint64_t zigzag_encode64(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline constexpr int32_t zigzag_decode32(uint32_t v) {
  return static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
}
inline constexpr int64_t zigzag_decode64(uint64_t v) {
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Encoded sizes, 1 to 5 (32-bit) or 1 to 10 (64-bit) bytes.
size_t unsigned_varint_size(uint32_t v);
size_t unsigned_varlong_size(uint64_t v);
inline size_t varint_size(int32_t v) { return unsigned_varint_size(zigzag_encode32(v)); }
inline size_t varlong_size(int64_t v) { return unsigned_varlong_size(zigzag_encode64(v)); }

// Writes the encoding at `out`, which has room for kMaxVarlongBytes (kMaxVarintBytes for a 32-bit value); returns
// the bytes written.
inline size_t encode_unsigned_varint(uint8_t* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<uint8_t>(v);
  return n;
}

// Appends the encoding to `out`.
void put_unsigned_varint(Bytes* out, uint32_t v);
void put_unsigned_varlong(Bytes* out, uint64_t v);
inline void put_varint(Bytes* out, int32_t v) { put_unsigned_varint(out, zigzag_encode32(v)); }
inline void put_varlong(Bytes* out, int64_t v) { put_unsigned_varlong(out, zigzag_encode64(v)); }

// Reads one value from the front of `*in` and advances `*in` past it. On failure `*in` is unchanged.
Result<uint32_t> read_unsigned_varint(ByteView* in);
Result<uint64_t> read_unsigned_varlong(ByteView* in);
Result<int32_t> read_varint(ByteView* in);
Result<int64_t> read_varlong(ByteView* in);

// The signed reads for per-record loops, which run a million times a second: no Result is built and a one-byte
// value is decoded inline. They accept exactly what the reads above accept; false on failure (`*in` or `*p` then
// unchanged), and the reads above say why.
bool decode_unsigned(ByteView* in, size_t max_bytes, unsigned value_bits, uint64_t* value);
// One- and two-byte values (lengths of records up to 8 KiB) inline; two bytes never overflow a varint.
// These read [*p, end) and advance *p: a per-record loop keeps its cursor in registers this way, where a ByteView
// passed by address is spilled, written as two words and reloaded as one (a store-forwarding stall per field).
inline bool try_read_unsigned(const uint8_t** p, const uint8_t* end, size_t max_bytes, unsigned value_bits,
                              uint64_t* value) {
  const uint8_t* q = *p;
  if (q < end && q[0] < 0x80) {
    *value = q[0];
    *p = q + 1;
    return true;
  }
  if (end - q >= 2 && q[1] < 0x80) {
    *value = (q[0] & 0x7fu) | (uint64_t{q[1]} << 7);
    *p = q + 2;
    return true;
  }
  ByteView rest(q, static_cast<size_t>(end - q));
  if (!decode_unsigned(&rest, max_bytes, value_bits, value)) return false;
  *p = rest.data();
  return true;
}
inline bool try_read_varint(const uint8_t** p, const uint8_t* end, int32_t* out) {
  uint64_t v = 0;
  if (!try_read_unsigned(p, end, kMaxVarintBytes, 32, &v)) return false;
  *out = zigzag_decode32(static_cast<uint32_t>(v));
  return true;
}
inline bool try_read_varlong(const uint8_t** p, const uint8_t* end, int64_t* out) {
  uint64_t v = 0;
  if (!try_read_unsigned(p, end, kMaxVarlongBytes, 64, &v)) return false;
  *out = zigzag_decode64(v);
  return true;
}
// The same on a view, advanced past what was read.
template <typename T>
bool try_read_from_view(ByteView* in, T* out, bool (*read)(const uint8_t**, const uint8_t*, T*)) {
  const uint8_t* p = in->data();
  if (!read(&p, p + in->size(), out)) return false;
  *in = in->subspan(static_cast<size_t>(p - in->data()));
  return true;
}
inline bool try_read_varint(ByteView* in, int32_t* out) {
  return try_read_from_view<int32_t>(in, out, try_read_varint);
}
inline bool try_read_varlong(ByteView* in, int64_t* out) {
  return try_read_from_view<int64_t>(in, out, try_read_varlong);
}

}  // namespace sluice
