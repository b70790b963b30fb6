#include "core/storage/record_reader.h"

#include <string>

#include "core/base/assert.h"
#include "core/base/varint.h"
#include "core/storage/compression.h"

namespace sluice::storage {
namespace {

// A varint length then that many bytes; -1 is null. Lengths below -1 or past the end fail.
Result<std::optional<ByteView>> read_nullable_bytes(ByteView* in, const char* what) {
  ByteView cursor = *in;
  SLUICE_ASSIGN_OR_RETURN(int32_t length, read_varint(&cursor));
  if (length == -1) {
    *in = cursor;
    return std::optional<ByteView>();
  }
  if (length < 0) return corruption(std::string(what) + " length " + std::to_string(length));
  if (static_cast<size_t>(length) > cursor.size()) {
    return corruption(std::string(what) + " of " + std::to_string(length) + " bytes runs past the record");
  }
  *in = cursor.subspan(static_cast<size_t>(length));
  return std::optional<ByteView>(cursor.first(static_cast<size_t>(length)));
}

Status read_body(ByteView body, RecordView* out) {
  if (body.empty()) return corruption("empty record");
  out->attributes = static_cast<int8_t>(body[0]);
  body = body.subspan(1);
  SLUICE_ASSIGN_OR_RETURN(out->timestamp_delta, read_varlong(&body));
  SLUICE_ASSIGN_OR_RETURN(out->offset_delta, read_varint(&body));
  out->fields = body;
  SLUICE_ASSIGN_OR_RETURN(out->key, read_nullable_bytes(&body, "key"));
  SLUICE_ASSIGN_OR_RETURN(out->value, read_nullable_bytes(&body, "value"));
  SLUICE_ASSIGN_OR_RETURN(out->header_count, read_varint(&body));
  const ByteView headers_start = body;
  SLUICE_TRY(read_record_headers(&body, out->header_count, nullptr));
  out->headers = headers_start.first(headers_start.size() - body.size());
  if (!body.empty()) return corruption(std::to_string(body.size()) + " bytes left inside the record");
  return Status();
}

// The per-record fast path below reads through a raw pointer and an end, which stay in registers (varint.h says
// why). Each step is read_body's check without building a Result.

// A varint length then that many bytes; -1 is null (then `*length` is -1 and nothing more is read).
[[gnu::always_inline]] inline bool scan_field(const uint8_t** p, const uint8_t* end, int32_t* length) {
  if (!try_read_varint(p, end, length)) return false;
  if (*length == -1) return true;
  if (*length < 0 || *length > end - *p) return false;
  *p += *length;
  return true;
}

[[gnu::always_inline]] inline bool scan_nullable_bytes(const uint8_t** p, const uint8_t* end,
                                                       std::optional<ByteView>* out) {
  int32_t length = 0;
  if (!scan_field(p, end, &length)) return false;
  if (length == -1) {
    out->reset();
  } else {
    *out = ByteView(*p - length, static_cast<size_t>(length));
  }
  return true;
}

// True when read_body would accept [p, end), with `*out` filled as it fills it; when false, read_body says what
// is wrong.
bool scan_body(const uint8_t* p, const uint8_t* end, RecordView* out) {
  if (p == end) return false;
  out->attributes = static_cast<int8_t>(*p++);
  if (!try_read_varlong(&p, end, &out->timestamp_delta) || !try_read_varint(&p, end, &out->offset_delta)) {
    return false;
  }
  out->fields = ByteView(p, static_cast<size_t>(end - p));
  if (!scan_nullable_bytes(&p, end, &out->key) || !scan_nullable_bytes(&p, end, &out->value)) return false;
  int32_t count = 0;
  if (!try_read_varint(&p, end, &count)) return false;
  out->header_count = count;
  if (count < 0 || count > (end - p) / 2) return false;  // read_record_headers' bound
  const uint8_t* headers_start = p;
  int32_t length = 0;
  for (int32_t i = 0; i < count; ++i) {  // a header's key may not be null, its value may
    if (!scan_field(&p, end, &length) || length == -1 || !scan_field(&p, end, &length)) return false;
  }
  out->headers = ByteView(headers_start, static_cast<size_t>(p - headers_start));
  return p == end;
}

}  // namespace

Result<ByteView> records_section(ByteView batch, const BatchHeader& header, Bytes* storage, size_t max_bytes) {
  SLUICE_ASSERT(batch.size() == header.size_bytes());
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  const ByteView raw = batch.subspan(kBatchHeaderBytes);
  if (header.compression() == Compression::kNone) return raw;
  if (header.record_count == 0 && raw.empty()) return raw;
  SLUICE_ASSIGN_OR_RETURN(*storage, decompress(header.compression(), raw, max_bytes));
  return ByteView(*storage);
}

Status read_record_headers(ByteView* in, int32_t count, std::vector<RecordHeader>* out) {
  // Each header takes at least two bytes (two lengths), which bounds the count before anything is allocated.
  if (count < 0) return corruption("header count " + std::to_string(count));
  if (static_cast<size_t>(count) > in->size() / 2) {
    return corruption(std::to_string(count) + " headers cannot fit in " + std::to_string(in->size()) + " bytes");
  }
  ByteView cursor = *in;
  if (out != nullptr) out->reserve(out->size() + static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<ByteView> key, read_nullable_bytes(&cursor, "header key"));
    if (!key.has_value()) return corruption("header " + std::to_string(i) + " has a null key");
    SLUICE_ASSIGN_OR_RETURN(std::optional<ByteView> value, read_nullable_bytes(&cursor, "header value"));
    if (out == nullptr) continue;
    RecordHeader header;
    header.key.assign(as_chars(*key));
    if (value.has_value()) header.value = Bytes(value->begin(), value->end());
    out->push_back(std::move(header));
  }
  *in = cursor;
  return Status();
}

RecordReader::RecordReader(ByteView section, int32_t record_count) : rest_(section), record_count_(record_count) {
  SLUICE_ASSERT(record_count >= 0);
}

Result<bool> RecordReader::next(RecordView* out) {
  if (read_ < record_count_) {
    const uint8_t* p = rest_.data();
    const uint8_t* const end = p + rest_.size();
    int32_t length = 0;
    if (try_read_varint(&p, end, &length) && length >= static_cast<int32_t>(kMinRecordBodyBytes) && length <= end - p &&
        scan_body(p, p + length, out)) {
      rest_ = ByteView(p + length, static_cast<size_t>(end - p - length));
      ++read_;
      return true;
    }
    // A bad record: read it again with the checks that say what is wrong.
    Result<bool> checked = next_checked(out);
    SLUICE_ASSERT_MSG(!checked.ok(), "scan_body refused a record that read_body accepts");
    return checked;
  }
  return next_checked(out);
}

Result<bool> RecordReader::next_checked(RecordView* out) {
  if (read_ == record_count_) {
    if (!rest_.empty()) {
      return corruption(std::to_string(rest_.size()) + " bytes trail the " + std::to_string(record_count_) +
                        " records the header declares");
    }
    return false;
  }
  // The index is formatted only on failure.
  auto fail = [this](const std::string& message) {
    return corruption("record " + std::to_string(read_) + ": " + message);
  };
  if (rest_.empty()) return fail("missing; the header declares " + std::to_string(record_count_) + " records");
  Result<int32_t> length = read_varint(&rest_);
  if (!length.ok()) return fail(length.status().message());
  if (*length < static_cast<int32_t>(kMinRecordBodyBytes) || static_cast<size_t>(*length) > rest_.size()) {
    return fail("length " + std::to_string(*length) + " with " + std::to_string(rest_.size()) + " bytes left");
  }
  const ByteView body = rest_.first(static_cast<size_t>(*length));
  rest_ = rest_.subspan(static_cast<size_t>(*length));
  const Status status = read_body(body, out);
  if (!status.ok()) return fail(status.message());
  ++read_;
  return true;
}

}  // namespace sluice::storage
