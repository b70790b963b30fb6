#include "core/protocol/wire.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "core/base/big_endian.h"
#include "core/base/varint.h"
#include "core/protocol/error_codes.h"

namespace sluice::protocol {
namespace {

constexpr std::string_view kBase64Url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int base64_value(char c) {
  const size_t at = kBase64Url.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

}  // namespace

Status malformed(std::string message) {
  return Status(Code::kCorruption, std::move(message), static_cast<int16_t>(ErrorCode::kInvalidRequest));
}

// --- Uuid, Records ---

std::string Uuid::to_string() const {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t byte : bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kBase64Url[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += kBase64Url[(acc << (6 - bits)) & 0x3f];  // 128 bits: 21 full digits and 2 bits left
  return out;
}

Result<Uuid> Uuid::parse(std::string_view text) {
  if (text.size() != 22) return invalid_argument(fmt::format("uuid '{}': expected 22 base64 characters", text));
  Uuid uuid;
  uint32_t acc = 0;
  int bits = 0;
  size_t at = 0;
  for (char c : text) {
    const int v = base64_value(c);
    if (v < 0) return invalid_argument(fmt::format("uuid '{}': '{}' is not URL-safe base64", text, c));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (at < uuid.bytes.size()) uuid.bytes[at++] = static_cast<uint8_t>(acc >> bits);
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0) return invalid_argument(fmt::format("uuid '{}': trailing bits set", text));
  return uuid;
}

bool Records::operator==(const Records& other) const {
  if (is_null() || other.is_null()) return is_null() == other.is_null();
  return std::ranges::equal(bytes(), other.bytes());
}

// --- Reader ---

void Reader::fail(Status status) {
  if (ok()) status_ = std::move(status);
}

void Reader::fail(std::string_view field, std::string_view what) {
  if (ok()) fail(malformed(fmt::format("field '{}' at offset {}: {}", field, pos_, what)));
}

// take()'s slow path: the reader already failed, or fewer than `n` bytes are left.
ByteView Reader::take_failed(std::string_view field, size_t n) {
  if (ok()) fail(field, fmt::format("truncated: needs {} bytes, {} left", n, in_.size() - pos_));
  return {};
}

double Reader::read_float64(std::string_view field) { return std::bit_cast<double>(read_fixed<uint64_t>(field)); }

Uuid Reader::read_uuid(std::string_view field) {
  Uuid uuid;
  ByteView b = take(field, uuid.bytes.size());
  std::copy(b.begin(), b.end(), uuid.bytes.begin());
  return uuid;
}

// varint.h does the decoding; this only adapts its Result to the sticky reader.
#define SLUICE_READ_VARIANT(method, type, decode)                      \
  type Reader::method(std::string_view field) {                         \
    if (!ok()) return 0;                                                \
    ByteView rest = in_.subspan(pos_);                                  \
    Result<type> v = decode(&rest);                                     \
    if (!v.ok()) {                                                      \
      fail(field, v.status().message());                                \
      return 0;                                                         \
    }                                                                   \
    pos_ = in_.size() - rest.size();                                    \
    return *v;                                                          \
  }
SLUICE_READ_VARIANT(read_varint, int32_t, ::sluice::read_varint)
SLUICE_READ_VARIANT(read_varlong, int64_t, ::sluice::read_varlong)
#undef SLUICE_READ_VARIANT

// Lengths of 127 bytes and more come here (a records field's, nearly every one): decoded without a Result, which
// is built only to say why a varint failed.
uint32_t Reader::read_long_uvarint(std::string_view field) {
  if (!ok()) return 0;
  ByteView rest = in_.subspan(pos_);
  uint64_t value = 0;
  if (decode_unsigned(&rest, kMaxVarintBytes, 32, &value)) [[likely]] {
    pos_ = in_.size() - rest.size();
    return static_cast<uint32_t>(value);
  }
  const Result<uint32_t> refused = ::sluice::read_unsigned_varint(&rest);
  fail(field, refused.status().message());
  return 0;
}

int64_t Reader::read_length_slow(std::string_view field, bool compact, bool wide, size_t max) {
  int64_t length = 0;
  if (compact) {
    length = static_cast<int64_t>(read_uvarint(field)) - 1;
  } else {
    length = wide ? read_int32(field) : read_int16(field);
  }
  if (!ok()) return -1;
  if (length < -1) {
    fail(field, fmt::format("negative length {}", length));
  } else if (length > static_cast<int64_t>(max)) {
    fail(field, fmt::format("length {} exceeds the limit {}", length, max));
  } else if (length > static_cast<int64_t>(remaining())) {
    fail(field, fmt::format("length {} exceeds the {} bytes left", length, remaining()));
  }
  return ok() ? length : -1;
}

std::optional<std::string> Reader::read_nullable_string(std::string_view field, bool compact) {
  const int64_t length = read_length(field, compact, false, kMaxStringBytes);
  if (length < 0) return std::nullopt;
  return std::string(as_chars(take(field, static_cast<size_t>(length))));
}

// read_nullable_string's steps, without the optional to wrap and unwrap: nearly every string read is a topic name.
std::string Reader::read_string(std::string_view field, bool compact) {
  const int64_t length = read_length(field, compact, false, kMaxStringBytes);
  if (length < 0) {
    if (ok()) fail(field, "null, but the field is not nullable");
    return std::string();
  }
  return std::string(as_chars(take(field, static_cast<size_t>(length))));
}

std::optional<ByteView> Reader::read_nullable_bytes(std::string_view field, bool compact) {
  const int64_t length = read_length(field, compact, true, std::numeric_limits<int32_t>::max());
  if (length < 0) return std::nullopt;
  return take(field, static_cast<size_t>(length));
}

std::vector<TaggedField> Reader::read_tagged_field_block(std::string_view where) {
  std::vector<TaggedField> fields;
  const uint32_t count = read_uvarint(where);
  if (count > remaining()) fail(where, fmt::format("{} tagged fields in {} bytes", count, remaining()));
  if (!ok() || !charge_decoded(where, count, sizeof(TaggedField))) return fields;
  fields.reserve(count);
  for (uint32_t i = 0; i < count && ok(); ++i) {
    TaggedField field;
    field.tag = read_uvarint(where);
    const uint32_t size = read_uvarint(where);
    field.data = take(where, size);
    fields.push_back(field);
  }
  if (!ok()) fields.clear();
  return fields;
}

// charge_decoded's slow path: the reader failed, or the charge does not fit (or its product might not be exact).
bool Reader::charge_decoded_slow(std::string_view field, size_t count, size_t element_bytes) {
  if (!ok()) return false;
  if (element_bytes != 0 && count > decode_budget_ / element_bytes) {
    fail(field, fmt::format("{} elements of {} bytes would decode a {}-byte message into more than {}x its size",
                            count, element_bytes, in_.size(), kDecodeExpansion));
    return false;
  }
  decode_budget_ -= count * element_bytes;
  return true;
}

// --- Writer ---

void Writer::fail(Status status) {
  if (ok()) status_ = std::move(status);
  end_ = cur_;  // every later write goes to grow(), which drops it
}

Status encoding_too_large(size_t max_bytes) {
  return invalid_argument(fmt::format("the encoding exceeds its limit of {} bytes", max_bytes));
}

bool Writer::grow(size_t bytes) {
  if (!ok()) return false;
  const size_t used = size();
  if (bytes > max_bytes_ || used > max_bytes_ - bytes) {
    fail(encoding_too_large(max_bytes_));
    return false;
  }
  if (out_->capacity() - used < bytes) {
    out_->resize(used);  // the spare bytes go before the reallocation would copy them
    out_->reserve(std::min(std::max({used + bytes, 2 * out_->capacity(), size_t{256}}), max_bytes_));
  }
  // A vector grows only by zeroing what it adds: the window is what its buffer holds anyway.
  out_->resize(std::min(out_->capacity(), max_bytes_));
  cur_ = out_->data() + used;
  end_ = out_->data() + out_->size();
  SLUICE_ASSERT(static_cast<size_t>(end_ - cur_) >= bytes);
  return true;
}

void Writer::put_float64(double v) { put_fixed(std::bit_cast<uint64_t>(v)); }

void Writer::put_varint(int32_t v) { put_long_uvarint(zigzag_encode32(v)); }

void Writer::put_varlong(int64_t v) {
  if (static_cast<size_t>(end_ - cur_) < kMaxVarlongBytes && !grow(kMaxVarlongBytes)) return;
  cur_ += encode_unsigned_varint(cur_, zigzag_encode64(v));
}

void Writer::put_long_uvarint(uint32_t v) {
  if (static_cast<size_t>(end_ - cur_) < kMaxVarintBytes && !grow(kMaxVarintBytes)) return;
  cur_ += encode_unsigned_varint(cur_, v);
}

void Writer::put_uuid(const Uuid& v) { put_raw(v.bytes); }

void Writer::put_raw(ByteView v) {
  if (v.empty()) return;
  if (static_cast<size_t>(end_ - cur_) < v.size() && !grow(v.size())) return;
  std::memcpy(cur_, v.data(), v.size());
  cur_ += v.size();
}

void Writer::put_length(std::string_view field, size_t n, bool compact, bool wide) {
  const size_t max = wide ? static_cast<size_t>(std::numeric_limits<int32_t>::max()) : kMaxStringBytes;
  if (n > max) {
    fail(invalid_argument(fmt::format("field '{}': length {} exceeds the limit {}", field, n, max)));
  } else if (compact) {
    put_uvarint(static_cast<uint32_t>(n + 1));
  } else if (wide) {
    put_int32(static_cast<int32_t>(n));
  } else {
    put_int16(static_cast<int16_t>(n));
  }
}

void Writer::put_null(bool compact, bool wide) {
  if (compact) {
    put_uvarint(0);
  } else if (wide) {
    put_int32(-1);
  } else {
    put_int16(-1);
  }
}

void Writer::put_nullable_string(std::string_view field, const std::optional<std::string>& v, bool compact) {
  if (v) {
    put_string(field, *v, compact);
  } else {
    put_null(compact, false);
  }
}

void Writer::put_bytes(std::string_view field, ByteView v, bool compact) {
  put_length(field, v.size(), compact, true);
  put_raw(v);
}

void Writer::put_tagged_field_block(std::vector<EncodedTag>& fields) {
  std::ranges::sort(fields, {}, &EncodedTag::tag);
  put_uvarint(static_cast<uint32_t>(fields.size()));
  for (size_t i = 0; i < fields.size(); ++i) {
    SLUICE_ASSERT(i == 0 || fields[i - 1].tag != fields[i].tag);  // two fields declared with one tag
    put_uvarint(fields[i].tag);
    put_uvarint(static_cast<uint32_t>(fields[i].data.size()));
    put_raw(fields[i].data);
  }
}

}  // namespace sluice::protocol
