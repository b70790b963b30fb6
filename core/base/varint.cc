#include "core/base/varint.h"

#include <string>

namespace sluice {
namespace {

size_t unsigned_size(uint64_t v) {
  size_t bytes = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++bytes;
  }
  return bytes;
}

void put_unsigned(Bytes* out, uint64_t v) {
  uint8_t encoded[kMaxVarlongBytes];
  const size_t n = encode_unsigned_varint(encoded, v);
  for (size_t i = 0; i < n; ++i) out->push_back(encoded[i]);  // nearly always one byte: no range insert
}

// Why decode_unsigned refused `in`: it ran out of bytes, or the last byte allowed held bits past `value_bits`.
Status why_refused(ByteView in, size_t max_bytes, unsigned value_bits) {
  for (size_t i = 0; i < max_bytes; ++i) {
    if (i >= in.size()) return corruption("varint truncated after " + std::to_string(i) + " bytes");
    if ((in[i] & 0x80) == 0) break;
  }
  return corruption("varint overflows " + std::to_string(value_bits) + " bits");
}

Result<uint64_t> read_unsigned(ByteView* in, size_t max_bytes, unsigned value_bits) {
  uint64_t value = 0;
  if (decode_unsigned(in, max_bytes, value_bits, &value)) return value;
  return why_refused(*in, max_bytes, value_bits);
}

}  // namespace

// Reads at most `max_bytes`; the last of them may only hold the `value_bits` that remain, so that an encoding of a
// value wider than the type fails instead of being silently truncated.
bool decode_unsigned(ByteView* in, size_t max_bytes, unsigned value_bits, uint64_t* value) {
  uint64_t decoded = 0;
  for (size_t i = 0; i < max_bytes && i < in->size(); ++i) {
    const uint8_t byte = (*in)[i];
    const unsigned shift = static_cast<unsigned>(7 * i);
    if (i + 1 == max_bytes && (byte >> (value_bits - shift)) != 0) return false;
    decoded |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *in = in->subspan(i + 1);
      *value = decoded;
      return true;
    }
  }
  return false;  // truncated
}

size_t unsigned_varint_size(uint32_t v) { return unsigned_size(v); }
size_t unsigned_varlong_size(uint64_t v) { return unsigned_size(v); }

void put_unsigned_varint(Bytes* out, uint32_t v) { put_unsigned(out, v); }
void put_unsigned_varlong(Bytes* out, uint64_t v) { put_unsigned(out, v); }

Result<uint32_t> read_unsigned_varint(ByteView* in) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t v, read_unsigned(in, kMaxVarintBytes, 32));
  return static_cast<uint32_t>(v);
}

Result<uint64_t> read_unsigned_varlong(ByteView* in) { return read_unsigned(in, kMaxVarlongBytes, 64); }

Result<int32_t> read_varint(ByteView* in) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t v, read_unsigned(in, kMaxVarintBytes, 32));
  return zigzag_decode32(static_cast<uint32_t>(v));
}

Result<int64_t> read_varlong(ByteView* in) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t v, read_unsigned(in, kMaxVarlongBytes, 64));
  return zigzag_decode64(v);
}

}  // namespace sluice
