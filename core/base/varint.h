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
// value is decoded inline. They accept exactly what the reads above accept; false on failure (`*in` then
// unchanged), and the reads above say why.
bool decode_unsigned(ByteView* in, size_t max_bytes, unsigned value_bits, uint64_t* value);
// One- and two-byte values (lengths of records up to 8 KiB) inline; two bytes never overflow a varint.
inline bool try_read_unsigned(ByteView* in, size_t max_bytes, unsigned value_bits, uint64_t* value) {
  const size_t size = in->size();
  if (size >= 1 && (*in)[0] < 0x80) {
    *value = (*in)[0];
    *in = in->subspan(1);
    return true;
  }
  if (size >= 2 && (*in)[1] < 0x80) {
    *value = ((*in)[0] & 0x7fu) | (uint64_t{(*in)[1]} << 7);
    *in = in->subspan(2);
    return true;
  }
  return decode_unsigned(in, max_bytes, value_bits, value);
}
inline bool try_read_varint(ByteView* in, int32_t* out) {
  uint64_t v = 0;
  if (!try_read_unsigned(in, kMaxVarintBytes, 32, &v)) return false;
  *out = zigzag_decode32(static_cast<uint32_t>(v));
  return true;
}
inline bool try_read_varlong(ByteView* in, int64_t* out) {
  uint64_t v = 0;
  if (!try_read_unsigned(in, kMaxVarlongBytes, 64, &v)) return false;
  *out = zigzag_decode64(v);
  return true;
}

}  // namespace sluice
