// Messages described once, decoded and encoded at every version from that one description.
//
// A message (or nested struct) lists its fields in wire order in a member template `serde`, each with the versions
// it exists in and the first version where it may be null; tagged fields (flexible versions only) come with their
// tag:
//
//   struct Partition {
//     int32_t leader_epoch = -1;
//     std::optional<std::string> rack;
//     std::optional<int64_t> epoch;  // tagged: nullopt = absent
//     template <class Io>
//     void serde(Io& io) {
//       io.field("leader_epoch", leader_epoch, {.since = 7});
//       io.field("rack", rack, {.since = 1, .nullable_from = 1});
//       io.tagged("epoch", epoch, /*tag=*/0, {.since = 3});
//     }
//   };
//
// Decoder and Encoder are the two `Io`s; `io.version()` and `io.flexible()` are there for the rare custom step.
// The C++ type of a member picks its wire type:
//
//   bool, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, double, Uuid    fixed width, big-endian
//   std::string / std::optional<std::string>                                     string / nullable string
//   Bytes / std::optional<Bytes>                                                 bytes / nullable bytes
//   Records                                                                      nullable bytes, kept as a view
//   std::vector<T>, SmallArray<T> / std::optional<std::vector<T>>                array / nullable array
//   a struct with serde / std::optional<struct>                                  struct / nullable struct (int8 -1)
//
// Classic or compact encodings follow `flexible`; a struct in a flexible version ends with its tagged-field block.
// A tagged field's member is std::optional<T>, written when it holds a value (Kafka writes a tagged field only when
// it differs from its default: leave it empty for the default); unknown tags are skipped. Absent fields (outside
// [since, until]) keep the member's initializer when decoding and are skipped when encoding, whatever they hold.
// A null in a version before `nullable_from` fails both ways. `serde` must only declare fields: decoding runs it twice
// for a struct that carries tagged fields (regular fields, then tagged ones).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/base/assert.h"
#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/protocol/small_array.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {

inline constexpr int16_t kMaxVersion = std::numeric_limits<int16_t>::max();

struct FieldSpec {
  int16_t since = 0;                // first version with the field
  int16_t until = kMaxVersion;      // last version with the field
  int16_t nullable_from = 0;        // std::optional members: first version where null is allowed
};

class Decoder;
class Encoder;

// A type with a field list: a message or a nested struct.
template <typename T>
concept Serde = std::is_class_v<T> && requires(T& t, Decoder& d, Encoder& e) {
  t.serde(d);
  t.serde(e);
};

namespace detail {

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename T>
struct IsArray : std::false_type {};
template <typename T>
struct IsArray<std::vector<T>> : std::true_type {};
template <typename T>
struct IsArray<SmallArray<T>> : std::true_type {};

// The containers an array field may be: std::vector or SmallArray (Bytes, a vector of bytes, has its own overload).
template <typename A>
concept WireArray = IsArray<A>::value;

constexpr bool field_present(const FieldSpec& spec, int16_t version) {
  return version >= spec.since && version <= spec.until;
}

}  // namespace detail

class Decoder {
 public:
  static constexpr bool kDecoding = true;

  // `tagged`: the struct's tagged fields, for the second pass (null in the first).
  Decoder(Reader& reader, int16_t version, bool flexible, const std::vector<TaggedField>* tagged = nullptr)
      : reader_(reader), version_(version), flexible_(flexible), tagged_(tagged) {}

  int16_t version() const { return version_; }
  bool flexible() const { return flexible_; }
  Reader& reader() { return reader_; }

  template <typename T>
  void field(std::string_view name, T& value, const FieldSpec& spec = {}) {
    if (tagged_ == nullptr && detail::field_present(spec, version_)) read(name, value, version_ >= spec.nullable_from);
  }
  template <typename T>
  void tagged(std::string_view name, std::optional<T>& value, uint32_t tag, const FieldSpec& spec = {}) {
    if (tagged_ != nullptr && flexible_ && detail::field_present(spec, version_)) read_tagged(name, value, tag);
  }

  // Reads one struct: its fields, then (flexible versions) its tagged-field block.
  template <Serde S>
  void read_struct(std::string_view name, S& s) {
    Decoder regular(reader_, version_, flexible_);
    s.serde(regular);
    if (!flexible_ || !reader_.ok()) return;
    const std::vector<TaggedField> tagged = reader_.read_tagged_fields(name);
    if (tagged.empty()) return;
    Decoder tagged_pass(reader_, version_, flexible_, &tagged);
    s.serde(tagged_pass);
  }

 private:
  friend class Encoder;

  void read(std::string_view n, bool& v, bool) { v = reader_.read_bool(n); }
  void read(std::string_view n, int8_t& v, bool) { v = reader_.read_int8(n); }
  void read(std::string_view n, int16_t& v, bool) { v = reader_.read_int16(n); }
  void read(std::string_view n, int32_t& v, bool) { v = reader_.read_int32(n); }
  void read(std::string_view n, int64_t& v, bool) { v = reader_.read_int64(n); }
  void read(std::string_view n, uint16_t& v, bool) { v = reader_.read_uint16(n); }
  void read(std::string_view n, uint32_t& v, bool) { v = reader_.read_uint32(n); }
  void read(std::string_view n, double& v, bool) { v = reader_.read_float64(n); }
  void read(std::string_view n, Uuid& v, bool) { v = reader_.read_uuid(n); }
  void read(std::string_view n, std::string& v, bool) { v = reader_.read_string(n, flexible_); }
  void read(std::string_view n, std::optional<std::string>& v, bool nullable) {
    v = reader_.read_nullable_string(n, flexible_);
    if (!v) null_check(n, nullable);
  }
  void read(std::string_view n, Bytes& v, bool) {
    std::optional<ByteView> b = reader_.read_nullable_bytes(n, flexible_);
    if (!b) null_check(n, false);
    v = b ? Bytes(b->begin(), b->end()) : Bytes();
  }
  void read(std::string_view n, std::optional<Bytes>& v, bool nullable) {
    std::optional<ByteView> b = reader_.read_nullable_bytes(n, flexible_);
    v = b ? std::optional<Bytes>(Bytes(b->begin(), b->end())) : std::nullopt;
    if (!b) null_check(n, nullable);
  }
  void read(std::string_view n, Records& v, bool) {
    std::optional<ByteView> b = reader_.read_nullable_bytes(n, flexible_);
    v = b ? Records::view(*b) : Records();
  }
  template <Serde S>
  void read(std::string_view n, S& v, bool) {
    read_struct(n, v);
  }
  template <Serde S>
  void read(std::string_view n, std::optional<S>& v, bool nullable) {
    if (reader_.read_int8(n) < 0) {
      v.reset();
      null_check(n, nullable);
    } else if (reader_.ok()) {
      read_struct(n, v.emplace());
    }
  }
  template <detail::WireArray A>
  void read(std::string_view n, A& v, bool) {
    const int32_t count = reader_.read_array_length(n, flexible_);
    if (count < 0) null_check(n, false);
    read_elements(n, v, count);
  }
  template <typename T>
  void read(std::string_view n, std::optional<std::vector<T>>& v, bool nullable) {
    const int32_t count = reader_.read_array_length(n, flexible_);
    if (count < 0) {
      v.reset();
      null_check(n, nullable);
    } else {
      read_elements(n, v.emplace(), count);
    }
  }

  template <detail::WireArray A>
  void read_elements(std::string_view n, A& v, int32_t count) {
    using T = typename A::value_type;
    static_assert(!detail::IsOptional<T>::value && !std::is_same_v<T, bool>, "no Kafka array holds these");
    v.clear();
    if (count <= 0) return;
    if constexpr (std::is_arithmetic_v<T>) {
      if (static_cast<size_t>(count) > reader_.remaining() / sizeof(T)) {
        return reader_.fail(n, too_many_elements(count, sizeof(T)));
      }
    }
    // Refused before anything is built when the elements alone would make the decoded message far larger than its
    // bytes (wire.h, kDecodeExpansion): an element may take one byte on the wire and dozens in memory.
    if (!reader_.charge_decoded(n, static_cast<size_t>(count), sizeof(T))) return;
    v.reserve(static_cast<size_t>(count));
    for (int32_t i = 0; i < count && reader_.ok(); ++i) {
      read(n, v.emplace_back(), false);  // in place: a SmallArray member moves element by element
    }
  }

  template <typename T>
  void read_tagged(std::string_view n, std::optional<T>& v, uint32_t tag) {
    for (const TaggedField& field : *tagged_) {
      if (field.tag != tag) continue;
      Reader sub(field.data);
      sub.set_decode_budget(reader_.decode_budget());
      Decoder inner(sub, version_, flexible_);
      if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes>) {
        inner.read(n, v, true);  // a null tagged string or bytes reads as absent
      } else {
        inner.read(n, v.emplace(), true);
      }
      if (sub.ok() && sub.remaining() != 0) sub.fail(n, "tagged field has trailing bytes");
      if (!sub.ok()) reader_.fail(sub.status());
      reader_.set_decode_budget(sub.decode_budget());
    }
  }

  void null_check(std::string_view n, bool nullable);
  static std::string too_many_elements(int32_t count, size_t element_bytes);

  Reader& reader_;
  int16_t version_;
  bool flexible_;
  const std::vector<TaggedField>* tagged_;
};

class Encoder {
 public:
  static constexpr bool kDecoding = false;

  // `tagged`: where the struct being written collects its tagged fields (write_struct's; null outside a struct).
  Encoder(Writer& writer, int16_t version, bool flexible, std::optional<std::vector<EncodedTag>>* tagged = nullptr)
      : writer_(writer), version_(version), flexible_(flexible), tagged_(tagged) {}

  int16_t version() const { return version_; }
  bool flexible() const { return flexible_; }
  Writer& writer() { return writer_; }

  template <typename T>
  void field(std::string_view name, const T& value, const FieldSpec& spec = {}) {
    if (detail::field_present(spec, version_)) write(name, value, version_ >= spec.nullable_from);
  }
  template <typename T>
  void tagged(std::string_view name, const std::optional<T>& value, uint32_t tag, const FieldSpec& spec = {}) {
    if (flexible_ && detail::field_present(spec, version_)) write_tagged(name, value, tag);
  }

  // One pass over the fields: the regular ones go to the writer in order, the tagged ones (each encoded on its own)
  // aside, to follow as the struct's tagged-field block. Nearly every struct has none: the block is then its count
  // alone, and no vector is built (nor destroyed, out of line, as an empty one was for every struct written).
  template <Serde S>
  void write_struct(const S& s) {
    S& fields = const_cast<S&>(s);  // serde is shared with the Decoder; the Encoder only reads the members
    std::optional<std::vector<EncodedTag>> tagged;  // made by the first tagged field written
    Encoder regular(writer_, version_, flexible_, &tagged);
    fields.serde(regular);
    if (!flexible_) {
      SLUICE_ASSERT(!tagged.has_value());  // tagged() writes nothing outside flexible versions
      return;
    }
    if (!tagged.has_value()) [[likely]] return writer_.put_uvarint(0);  // an empty block: its count alone
    writer_.put_tagged_fields(std::move(*tagged));
  }

 private:
  void write(std::string_view, bool v, bool) { writer_.put_bool(v); }
  void write(std::string_view, int8_t v, bool) { writer_.put_int8(v); }
  void write(std::string_view, int16_t v, bool) { writer_.put_int16(v); }
  void write(std::string_view, int32_t v, bool) { writer_.put_int32(v); }
  void write(std::string_view, int64_t v, bool) { writer_.put_int64(v); }
  void write(std::string_view, uint16_t v, bool) { writer_.put_uint16(v); }
  void write(std::string_view, uint32_t v, bool) { writer_.put_uint32(v); }
  void write(std::string_view, double v, bool) { writer_.put_float64(v); }
  void write(std::string_view, const Uuid& v, bool) { writer_.put_uuid(v); }
  void write(std::string_view n, const std::string& v, bool) { writer_.put_string(n, v, flexible_); }
  void write(std::string_view n, const std::optional<std::string>& v, bool nullable) {
    if (!v) null_check(n, nullable);
    writer_.put_nullable_string(n, v, flexible_);
  }
  void write(std::string_view n, const Bytes& v, bool) { writer_.put_bytes(n, v, flexible_); }
  void write(std::string_view n, const std::optional<Bytes>& v, bool nullable) {
    if (v) return writer_.put_bytes(n, *v, flexible_);
    null_check(n, nullable);
    writer_.put_null(flexible_, true);
  }
  void write(std::string_view n, const Records& v, bool) {
    if (v.is_null()) return writer_.put_null(flexible_, true);
    writer_.put_bytes(n, v.bytes(), flexible_);
  }
  template <Serde S>
  void write(std::string_view, const S& v, bool) {
    write_struct(v);
  }
  template <Serde S>
  void write(std::string_view n, const std::optional<S>& v, bool nullable) {
    if (!v) null_check(n, nullable);
    writer_.put_int8(v ? 1 : -1);
    if (v) write_struct(*v);
  }
  template <detail::WireArray A>
  void write(std::string_view n, const A& v, bool) {
    writer_.put_array_length(n, v.size(), flexible_);
    for (const auto& element : v) write(n, element, false);
  }
  template <typename T>
  void write(std::string_view n, const std::optional<std::vector<T>>& v, bool nullable) {
    if (v) return write(n, *v, nullable);
    null_check(n, nullable);
    writer_.put_null(flexible_, true);
  }

  template <typename T>
  void write_tagged(std::string_view n, const std::optional<T>& v, uint32_t tag) {
    if (!v) return;
    SLUICE_ASSERT_MSG(tagged_ != nullptr, "a tagged field is written inside its struct");
    EncodedTag field{tag, {}};
    Writer sub(&field.data);
    Encoder inner(sub, version_, flexible_);
    inner.write(n, *v, true);
    sub.finish();
    if (!sub.ok()) return writer_.fail(sub.status());
    if (!tagged_->has_value()) tagged_->emplace();
    (*tagged_)->push_back(std::move(field));
  }

  void null_check(std::string_view n, bool nullable);

  Writer& writer_;
  int16_t version_;
  bool flexible_;
  std::optional<std::vector<EncodedTag>>* tagged_;
};

// Decodes one whole struct from `in` at `version`; bytes left over are an error (INVALID_REQUEST), which catches a
// wrong schema as well as a wrong client.
template <Serde T>
Status decode(ByteView in, int16_t version, bool flexible, T* out) {
  Reader reader(in);
  Decoder(reader, version, flexible).read_struct("message", *out);
  if (reader.ok() && reader.remaining() != 0) reader.fail("message", "unexpected trailing bytes");
  return reader.status();
}

// The same without the check on what follows: `*trailing` receives how many bytes came after the struct. Only for
// requests arriving at the broker, which Kafka reads this way (librdkafka 2.15's all-topics Metadata v9+ carries
// bytes past its schema); codec tests, the fuzzer and every response keep the strict `decode`.
template <Serde T>
Status decode_leading(ByteView in, int16_t version, bool flexible, T* out, size_t* trailing) {
  Reader reader(in);
  Decoder(reader, version, flexible).read_struct("message", *out);
  *trailing = reader.ok() ? reader.remaining() : 0;
  return reader.status();
}

// Appends the encoding of `msg` to `*out`. Fails (kInvalidArgument) on a null in a non-nullable version, a string
// or array too long for its length field, or `*out` growing past `max_bytes` (Writer); `*out` then holds a partial
// encoding.
template <Serde T>
Status encode(const T& msg, int16_t version, bool flexible, Bytes* out, size_t max_bytes = SIZE_MAX) {
  Writer writer(out, max_bytes);
  Encoder(writer, version, flexible).write_struct(msg);
  writer.finish();
  // The writer never writes past max_bytes; a buffer that held more before, with nothing written, is caught here.
  if (writer.ok() && out->size() > max_bytes) {
    writer.fail(encoding_too_large(max_bytes));
  }
  return writer.status();
}

}  // namespace sluice::protocol
