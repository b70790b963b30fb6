// The Kafka wire primitives (kafka-protocol.md §1, KIP-482): a bounds-checked Reader over a ByteView and a Writer
// appending to Bytes. Integers are big-endian; "compact" forms (flexible versions) carry lengths and counts as
// unsigned varints plus one, 0 meaning null; classic forms use int16 (strings) or int32 (bytes, arrays), -1 null.
//
// Both are sticky: the first failure is kept, later reads return zeros and empties, later writes are dropped, and
// the caller checks status() once at the end. Decode failures are kCorruption carrying INVALID_REQUEST (42) and a
// message naming the field and the offset; input never makes them crash or allocate more than it is long.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"

namespace sluice::protocol {

// Strings are at most this long, classic or compact (Kafka's generated code has the same bound both ways).
inline constexpr size_t kMaxStringBytes = 0x7fff;

// How much memory decoding one input may build, as arrays' elements (Decoder::read_elements): this many times the
// input's size, plus kDecodeAllowanceBytes. Every element takes at least a byte on the wire, but an empty string
// takes 1 or 2 and becomes 32 bytes of std::string: a 100 MiB Metadata request of empty names would decode into
// gigabytes. The realistic requests stay under 4x (a Metadata v12 lookup by id, 18 bytes per 56-byte topic).
inline constexpr size_t kDecodeExpansion = 8;
inline constexpr size_t kDecodeAllowanceBytes = 64 * 1024;

// A decode failure: kCorruption with INVALID_REQUEST. `message` should name the field.
Status malformed(std::string message);
// An encoding that would exceed its limit (Writer's max_bytes): kInvalidArgument.
Status encoding_too_large(size_t max_bytes);

// A Kafka UUID (topic ids): 16 bytes, the all-zero value meaning "none".
struct Uuid {
  std::array<uint8_t, 16> bytes{};

  static constexpr Uuid zero() { return Uuid{}; }
  bool is_zero() const { return *this == Uuid{}; }
  // Kafka's text form: URL-safe base64 without padding, 22 characters.
  std::string to_string() const;
  static Result<Uuid> parse(std::string_view text);

  bool operator==(const Uuid&) const = default;
  auto operator<=>(const Uuid&) const = default;
};

// A records field (Produce, Fetch): nullable bytes on the wire. Decoding keeps a view into the input, valid only
// while the frame lives (no copy of a produce payload); the broker builds owned ones for responses.
class Records {
 public:
  Records() = default;  // null
  static Records view(ByteView bytes) {
    Records r;
    r.null_ = false;
    r.view_ = bytes;
    return r;
  }
  static Records own(Bytes bytes) {
    Records r;
    r.null_ = false;
    r.owning_ = true;
    r.owned_ = std::move(bytes);
    return r;
  }

  bool is_null() const { return null_; }
  ByteView bytes() const { return owning_ ? ByteView(owned_) : view_; }  // empty when null
  bool operator==(const Records& other) const;

 private:
  bool null_ = true;
  bool owning_ = false;
  ByteView view_;
  Bytes owned_;
};

// One entry of a tagged-field block, as read: its tag and its undecoded bytes.
struct TaggedField {
  uint32_t tag = 0;
  ByteView data;
};

// One entry to write: the tag and its encoded bytes.
struct EncodedTag {
  uint32_t tag = 0;
  Bytes data;
};

// The fixed-width reads and writes, the one-byte varints and the bounds check are defined here, inline: every field
// of every Fetch and Produce goes through them, and as calls they were a fifth of the codec's cost in a simulated
// run. Their slow paths (failures, long varints, growing the buffer) stay out of line in wire.cc.
class Reader {
 public:
  explicit Reader(ByteView in) : in_(in), decode_budget_(in.size() * kDecodeExpansion + kDecodeAllowanceBytes) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // Bytes not yet read; 0 once failed, so that loops bounded by it stop.
  size_t remaining() const { return ok() ? in_.size() - pos_ : 0; }
  size_t position() const { return pos_; }
  // Keeps the first failure only.
  void fail(Status status);
  // fail(malformed("field 'name' at offset N: what")).
  void fail(std::string_view field, std::string_view what);

  int8_t read_int8(std::string_view field) { return read_fixed<int8_t>(field); }
  int16_t read_int16(std::string_view field) { return read_fixed<int16_t>(field); }
  int32_t read_int32(std::string_view field) { return read_fixed<int32_t>(field); }
  int64_t read_int64(std::string_view field) { return read_fixed<int64_t>(field); }
  uint16_t read_uint16(std::string_view field) { return read_fixed<uint16_t>(field); }
  uint32_t read_uint32(std::string_view field) { return read_fixed<uint32_t>(field); }
  bool read_bool(std::string_view field) { return read_fixed<int8_t>(field) != 0; }  // any non-zero byte is true
  double read_float64(std::string_view field);
  int32_t read_varint(std::string_view field);    // zigzag, at most 5 bytes
  int64_t read_varlong(std::string_view field);   // zigzag, at most 10 bytes
  // At most 5 bytes. Lengths, counts and tags are nearly always one byte.
  uint32_t read_uvarint(std::string_view field) {
    if (ok() && pos_ < in_.size() && in_[pos_] < 0x80) [[likely]] return in_[pos_++];
    return read_long_uvarint(field);
  }
  Uuid read_uuid(std::string_view field);

  // Lengths over kMaxStringBytes, negative ones other than -1, and lengths past the end fail.
  std::optional<std::string> read_nullable_string(std::string_view field, bool compact);
  std::string read_string(std::string_view field, bool compact);  // null fails
  // The view points into the input.
  std::optional<ByteView> read_nullable_bytes(std::string_view field, bool compact);
  // An array's element count, or -1 for null. A count above the remaining bytes fails (every element takes at
  // least one), so a caller may size memory by it.
  int32_t read_array_length(std::string_view field, bool compact) {
    return static_cast<int32_t>(read_length(field, compact, true, std::numeric_limits<int32_t>::max()));
  }
  // Exactly n bytes, as a view into the input.
  ByteView read_raw(std::string_view field, size_t n) { return take(field, n); }
  // A tagged-field block: uvarint count, then per field uvarint tag, uvarint size and the bytes. Nearly every block
  // is empty (a single 0), which is read here, inline.
  std::vector<TaggedField> read_tagged_fields(std::string_view where) {
    if (ok() && pos_ < in_.size() && in_[pos_] == 0) [[likely]] {
      ++pos_;
      return {};
    }
    return read_tagged_field_block(where);
  }

  // Takes `count` elements of `element_bytes` from the decode budget (kDecodeExpansion) before they are built;
  // false (and failed, INVALID_REQUEST) when they would exceed what is left of it. Every array decoded is charged:
  // a charge that fits is taken here, inline (both factors below 2^32: their product cannot wrap).
  bool charge_decoded(std::string_view field, size_t count, size_t element_bytes) {
    if (ok() && count <= UINT32_MAX && element_bytes <= UINT32_MAX && count * element_bytes <= decode_budget_)
        [[likely]] {
      decode_budget_ -= count * element_bytes;
      return true;
    }
    return charge_decoded_slow(field, count, element_bytes);
  }
  // What is left of it: a Reader over a tagged field's bytes continues its parent's budget.
  size_t decode_budget() const { return decode_budget_; }
  void set_decode_budget(size_t bytes) { decode_budget_ = bytes; }

 private:
  // An empty view once failed.
  ByteView take(std::string_view field, size_t n) {
    if (ok() && n <= in_.size() - pos_) [[likely]] {
      const ByteView out = in_.subspan(pos_, n);
      pos_ += n;
      return out;
    }
    return take_failed(field, n);
  }
  ByteView take_failed(std::string_view field, size_t n);
  template <typename T>
  T read_fixed(std::string_view field) {
    if (ok() && sizeof(T) <= in_.size() - pos_) [[likely]] {
      const T v = load_be<T>(in_.data() + pos_);
      pos_ += sizeof(T);
      return v;
    }
    take_failed(field, sizeof(T));
    return T{};
  }
  uint32_t read_long_uvarint(std::string_view field);
  std::vector<TaggedField> read_tagged_field_block(std::string_view where);
  bool charge_decoded_slow(std::string_view field, size_t count, size_t element_bytes);
  // A classic or compact length: -1 for null, else checked against `max` and the remaining bytes. A length that
  // passes both checks, in one byte when compact (nearly every string, array and records field, and the request
  // header's classic client id), is read here, inline.
  int64_t read_length(std::string_view field, bool compact, bool wide, size_t max) {
    const size_t width = compact ? 1 : wide ? 4 : 2;
    if (ok() && width <= in_.size() - pos_) [[likely]] {
      const uint8_t* at = in_.data() + pos_;
      // Null (a compact 0, a classic -1) wraps to a huge length and goes the slow way, as do long varints.
      const size_t length = compact  ? (at[0] < 0x80 ? size_t{at[0]} - 1 : SIZE_MAX)
                            : wide   ? static_cast<size_t>(static_cast<int64_t>(load_be<int32_t>(at)))
                                     : static_cast<size_t>(static_cast<int64_t>(load_be<int16_t>(at)));
      if (length <= max && length <= in_.size() - pos_ - width) [[likely]] {
        pos_ += width;
        return static_cast<int64_t>(length);
      }
    }
    return read_length_slow(field, compact, wide, max);
  }
  int64_t read_length_slow(std::string_view field, bool compact, bool wide, size_t max);

  ByteView in_;
  size_t pos_ = 0;
  size_t decode_budget_;
  Status status_;
};

// Appends to `*out` through a window: while a writer is open, `*out` may hold spare bytes past what was written
// (it is sized to its capacity, so a field is a bounds check and a store, where push_back reloaded the vector after
// every byte: a uint8_t store may alias it). finish(), or the destructor, trims them; read `*out` only after it.
class Writer {
 public:
  explicit Writer(Bytes* out) : out_(out) {}
  // `*out` never grows past `max_bytes` (its size, including what it held before): a write that would take it
  // further fails the writer (kInvalidArgument, "exceeds ... bytes") and is dropped. For responses, whose frames
  // carry an int32 size.
  Writer(Bytes* out, size_t max_bytes) : out_(out), max_bytes_(max_bytes) {}
  ~Writer() { finish(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  void fail(Status status);  // keeps the first failure only
  // Trims `*out` to the bytes written. Writing may go on after it.
  void finish() {
    if (cur_ == nullptr) return;
    out_->resize(size());
    cur_ = end_ = nullptr;
  }
  // The bytes in `*out`, what it held before included.
  size_t size() const { return cur_ == nullptr ? out_->size() : static_cast<size_t>(cur_ - out_->data()); }

  void put_int8(int8_t v) { put_fixed(v); }
  void put_int16(int16_t v) { put_fixed(v); }
  void put_int32(int32_t v) { put_fixed(v); }
  void put_int64(int64_t v) { put_fixed(v); }
  void put_uint16(uint16_t v) { put_fixed(v); }
  void put_uint32(uint32_t v) { put_fixed(v); }
  void put_bool(bool v) { put_int8(v ? 1 : 0); }
  void put_float64(double v);
  void put_varint(int32_t v);
  void put_varlong(int64_t v);
  // Lengths, counts and tags are nearly always one byte.
  void put_uvarint(uint32_t v) {
    if (v < 0x80 && cur_ != end_) [[likely]] {
      *cur_++ = static_cast<uint8_t>(v);
      return;
    }
    put_long_uvarint(v);
  }
  void put_uuid(const Uuid& v);

  // A string over kMaxStringBytes fails (kInvalidArgument naming the field). A compact one of a one-byte length
  // that fits the window, nearly every topic name, is written here, inline.
  void put_string(std::string_view field, std::string_view v, bool compact) {
    if (compact && v.size() < 0x7f && v.size() < static_cast<size_t>(end_ - cur_)) [[likely]] {
      *cur_++ = static_cast<uint8_t>(v.size() + 1);
      if (!v.empty()) std::memcpy(cur_, v.data(), v.size());
      cur_ += v.size();
      return;
    }
    put_length(field, v.size(), compact, false);
    put_raw(as_bytes(v));
  }
  void put_nullable_string(std::string_view field, const std::optional<std::string>& v, bool compact);
  void put_bytes(std::string_view field, ByteView v, bool compact);
  void put_null(bool compact, bool wide);  // null string (wide = false) or null bytes/array (wide = true)
  // A compact count of one byte, nearly every array's, is written here, inline.
  void put_array_length(std::string_view field, size_t n, bool compact) {
    if (compact && n < 0x7f && cur_ != end_) [[likely]] {
      *cur_++ = static_cast<uint8_t>(n + 1);
      return;
    }
    put_length(field, n, compact, true);
  }
  void put_raw(ByteView v);
  // Sorts by tag, then writes the block (count, then tag, size, bytes each). An empty one, nearly every block, is
  // its count alone.
  void put_tagged_fields(std::vector<EncodedTag>&& fields) {
    if (fields.empty()) [[likely]] {
      put_uvarint(0);
      return;
    }
    put_tagged_field_block(fields);
  }

 private:
  // A failed writer keeps an empty window, so this one test also sends every write after a failure to grow(),
  // which drops it.
  template <typename T>
  void put_fixed(T v) {
    if (static_cast<size_t>(end_ - cur_) < sizeof(T)) [[unlikely]] {
      if (!grow(sizeof(T))) return;
    }
    store_be<T>(cur_, v);
    cur_ += sizeof(T);
  }
  // Makes room for `bytes` more: messages are encoded into fresh buffers, field by field, and growing from 256
  // bytes, then doubling, skips the 1, 2, 4, ... reallocations (and copies) a vector makes on its own. Never past
  // max_bytes_: false (and failed) when `bytes` more would go beyond it, or the writer has failed.
  bool grow(size_t bytes);
  void put_long_uvarint(uint32_t v);
  void put_tagged_field_block(std::vector<EncodedTag>& fields);
  void put_length(std::string_view field, size_t n, bool compact, bool wide);

  Bytes* out_;
  uint8_t* cur_ = nullptr;  // the window [cur_, end_) of `*out_`, open once something was written
  uint8_t* end_ = nullptr;
  size_t max_bytes_ = SIZE_MAX;
  Status status_;
};

}  // namespace sluice::protocol
