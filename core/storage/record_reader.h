// Internal to core/storage: reading the records section of a v2 batch one record at a time, without copying.
// decode_records (record_codec.cc) materialises Records from it; validate_produce_batch (batch_validation.cc) only
// looks, because a small compressed batch can hold millions of tiny records and a Record costs ~100 bytes of heap.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {

// The smallest record body: attributes, timestamp delta, offset delta, key length, value length, header count.
inline constexpr size_t kMinRecordBodyBytes = 6;

// One record as it sits in the section; the views point into the section.
struct RecordView {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  int32_t header_count = 0;
  ByteView headers;  // header_count headers, already checked to be well-formed
  // Everything after the offset delta as it is encoded (key, value, header count, headers): what a rewrite that
  // only changes the deltas copies as it is.
  ByteView fields;
};

// The records section of `batch` (which must be exactly one batch, header.size_bytes() long): a view into `batch`
// when uncompressed, else the decompressed bytes, kept in `*storage`. Fails with kCorruption when decompression
// fails or exceeds `max_bytes`. A compressed batch with no records and an empty section (what compaction can
// leave behind) yields an empty section without decompressing.
Result<ByteView> records_section(ByteView batch, const BatchHeader& header, Bytes* storage, size_t max_bytes);

class RecordReader {
 public:
  // `section`: the records section; `record_count`: how many records the header declares (>= 0).
  RecordReader(ByteView section, int32_t record_count);

  // Reads the next record into `*out` and returns true; returns false once record_count records were read and no
  // bytes trail them. Fails with kCorruption (naming the record's index) on any malformed or truncated field, a
  // length that runs past its record, bytes left inside a record, too few records or trailing bytes. Once it
  // failed, the reader must not be used again.
  Result<bool> next(RecordView* out);
  // next() through the Result-returning decoders only. next() takes a faster path for well-formed records and comes
  // here for the error; tests hold the two to the same answers.
  Result<bool> next_checked(RecordView* out);

  // Index of the record the last successful next() returned.
  int32_t index() const { return read_ - 1; }

 private:
  ByteView rest_;
  int32_t record_count_;
  int32_t read_ = 0;
};

// Parses `count` headers from the front of `*in`, advancing it. Appends them to `*out` unless it is null (then it
// only checks them). Header keys may not be null; values may.
Status read_record_headers(ByteView* in, int32_t count, std::vector<RecordHeader>* out);

}  // namespace sluice::storage
