// The record codec of record_batch.h: decode_records, build_batch and apply_topic_compression. Validation of
// produced batches is in batch_validation.cc; the per-record reader both share is record_reader.h.
#include <algorithm>
#include <climits>
#include <string>

#include "core/base/assert.h"
#include "core/base/big_endian.h"
#include "core/base/varint.h"
#include "core/storage/compression.h"
#include "core/storage/record_batch.h"
#include "core/storage/record_reader.h"

namespace sluice::storage {
namespace {

static_assert(kBatchHeaderBytes == 61);
static_assert(kBatchCrcOffset + 4 == kBatchCrcCoveredFrom);

// Offsets and timestamps come from the wire: their sums wrap (as in Kafka's Java) instead of being undefined.
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

int64_t record_offset(const BatchHeader& header, const RecordView& view) {
  return wrapping_add(header.base_offset, view.offset_delta);
}

int64_t record_timestamp(const BatchHeader& header, const RecordView& view) {
  return header.log_append_time() ? header.max_timestamp : wrapping_add(header.base_timestamp, view.timestamp_delta);
}

Record materialize(const BatchHeader& header, const RecordView& view) {
  Record record;
  record.attributes = view.attributes;
  record.timestamp = record_timestamp(header, view);
  record.offset = record_offset(header, view);
  if (view.key.has_value()) record.key = Bytes(view.key->begin(), view.key->end());
  if (view.value.has_value()) record.value = Bytes(view.value->begin(), view.value->end());
  ByteView headers = view.headers;
  const Status status = read_record_headers(&headers, view.header_count, &record.headers);
  SLUICE_ASSERT(status.ok());  // RecordReader checked these very bytes
  SLUICE_ASSERT(headers.empty());
  return record;
}

// --- building ---

// For keys and values (optional<ByteView>) and header values (optional<Bytes>).
template <typename Nullable>
size_t nullable_size(const Nullable& bytes) {
  if (!bytes.has_value()) return 1;  // varint -1
  return varint_size(static_cast<int32_t>(bytes->size())) + bytes->size();
}

template <typename Nullable>
void put_nullable(Bytes* out, const Nullable& bytes) {
  if (!bytes.has_value()) {
    put_varint(out, -1);
    return;
  }
  put_varint(out, static_cast<int32_t>(bytes->size()));
  out->insert(out->end(), bytes->begin(), bytes->end());
}

bool fits_int32(size_t n) { return n <= static_cast<size_t>(INT32_MAX); }

Status check_sizes(const RecordRef& record) {
  bool ok = (!record.key.has_value() || fits_int32(record.key->size())) &&
            (!record.value.has_value() || fits_int32(record.value->size())) && fits_int32(record.headers.size());
  for (const RecordHeader& header : record.headers) {
    ok = ok && fits_int32(header.key.size()) && (!header.value.has_value() || fits_int32(header.value->size()));
  }
  return ok ? Status() : invalid_argument("record field over 2 GiB");
}

// Appends one record (length prefix included) with the given deltas.
Status put_record(Bytes* out, const RecordRef& record, int32_t offset_delta, int64_t timestamp_delta) {
  SLUICE_TRY(check_sizes(record));
  size_t body = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta) + nullable_size(record.key) +
                nullable_size(record.value) + varint_size(static_cast<int32_t>(record.headers.size()));
  for (const RecordHeader& header : record.headers) {
    body += varint_size(static_cast<int32_t>(header.key.size())) + header.key.size() + nullable_size(header.value);
  }
  if (!fits_int32(body)) return invalid_argument("record over 2 GiB");
  put_varint(out, static_cast<int32_t>(body));
  const size_t start = out->size();
  out->push_back(static_cast<uint8_t>(record.attributes));
  put_varlong(out, timestamp_delta);
  put_varint(out, offset_delta);
  put_nullable(out, record.key);
  put_nullable(out, record.value);
  put_varint(out, static_cast<int32_t>(record.headers.size()));
  for (const RecordHeader& header : record.headers) {
    put_varint(out, static_cast<int32_t>(header.key.size()));
    out->insert(out->end(), header.key.begin(), header.key.end());
    put_nullable(out, header.value);
  }
  SLUICE_ASSERT(out->size() - start == body);
  return Status();
}

// At least the records section's size, so that it is encoded without reallocating: each varint at its widest.
size_t records_size_bound(std::span<const RecordRef> records) {
  size_t bound = 0;
  for (const RecordRef& record : records) {
    bound += 5 + 1 + 10 + 5 + nullable_size(record.key) + nullable_size(record.value) + 5;
    for (const RecordHeader& header : record.headers) bound += 5 + header.key.size() + nullable_size(header.value);
  }
  return bound;
}

// Appends the records section, uncompressed, to `section`; `*last_offset_delta` receives the last record's delta.
Status encode_records(std::span<const RecordRef> records, int64_t base_timestamp, int32_t* last_offset_delta,
                      Bytes* section) {
  const int64_t base_offset = records.front().offset;
  for (size_t i = 0; i < records.size(); ++i) {
    const RecordRef& record = records[i];
    if (i > 0 && record.offset <= records[i - 1].offset) {
      return invalid_argument("record offsets must increase: " + std::to_string(record.offset) + " after " +
                              std::to_string(records[i - 1].offset));
    }
    // Increasing offsets from the base: the difference is positive, so unsigned arithmetic gives it exactly.
    const uint64_t delta = static_cast<uint64_t>(record.offset) - static_cast<uint64_t>(base_offset);
    if (delta > static_cast<uint64_t>(INT32_MAX)) return invalid_argument("offset delta over 2^31");
    *last_offset_delta = static_cast<int32_t>(delta);
    SLUICE_TRY(put_record(section, record, *last_offset_delta, wrapping_sub(record.timestamp, base_timestamp)));
  }
  return Status();
}

int16_t batch_attributes(const BatchOptions& options) {
  int attributes = static_cast<int>(options.compression);
  if (options.log_append_time) attributes |= 0x08;
  if (options.transactional) attributes |= 0x10;
  if (options.control) attributes |= 0x20;
  if (options.delete_horizon_ms.has_value()) attributes |= 0x40;
  return static_cast<int16_t>(attributes);
}

// Walks every record of `batch` (whose parsed header is `header`) with the checks decode_records promises;
// `on_record(view, reserve)` gets, at the first record, a bound on how many follow (`reserve`, 0 after), from the
// section's size: the declared count is untrusted.
template <typename OnRecord>
// `storage` receives a compressed batch's decompressed records, which the views handed out point into.
Status visit_records(ByteView batch, const BatchHeader& header, OnRecord on_record, Bytes* storage) {
  if (header.size_bytes() != batch.size()) {
    return corruption("batch of " + std::to_string(batch.size()) + " bytes declares " +
                      std::to_string(header.size_bytes()));
  }
  SLUICE_ASSIGN_OR_RETURN(ByteView section, records_section(batch, header, storage, kMaxDecompressedBytes));
  size_t reserve = std::min(static_cast<size_t>(header.record_count), section.size() / (kMinRecordBodyBytes + 1));
  RecordReader reader(section, header.record_count);
  RecordView view;
  int64_t previous_delta = -1;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool more, reader.next(&view));
    if (!more) break;
    // Compaction leaves gaps, so deltas need only increase and stay within the header's range.
    if (view.offset_delta <= previous_delta || view.offset_delta > header.last_offset_delta) {
      return corruption("record " + std::to_string(reader.index()) + " has offset delta " +
                        std::to_string(view.offset_delta) + " after " + std::to_string(previous_delta) +
                        " (last offset delta " + std::to_string(header.last_offset_delta) + ")");
    }
    previous_delta = view.offset_delta;
    on_record(view, reserve);
    reserve = 0;
  }
  return Status();
}

}  // namespace

Result<std::vector<Record>> decode_records(ByteView batch) {
  SLUICE_ASSIGN_OR_RETURN(const BatchHeader header, parse_batch_header(batch));
  std::vector<Record> records;
  Bytes storage;
  SLUICE_TRY(visit_records(
      batch, header,
      [&](const RecordView& view, size_t reserve) {
        if (reserve > 0) records.reserve(reserve);
        records.push_back(materialize(header, view));
      },
      &storage));
  return records;
}

Status for_each_record(ByteView batch, FunctionRef<void(const DecodedRecord&)> on_record) {
  SLUICE_ASSIGN_OR_RETURN(const BatchHeader header, parse_batch_header(batch));
  return for_each_record(batch, header, on_record);
}

Status for_each_record(ByteView batch, const BatchHeader& header, FunctionRef<void(const DecodedRecord&)> on_record) {
  Bytes storage;
  return for_each_record(batch, header, on_record, &storage);
}

Status for_each_record(ByteView batch, const BatchHeader& header, FunctionRef<void(const DecodedRecord&)> on_record,
                       Bytes* decompressed) {
  return visit_records(
      batch, header,
      [&](const RecordView& view, size_t) {
        on_record(DecodedRecord{record_offset(header, view), record_timestamp(header, view), view.key, view.value});
      },
      decompressed);
}

Result<Bytes> build_batch(const std::vector<Record>& records, const BatchOptions& options) {
  std::vector<RecordRef> refs;
  refs.reserve(records.size());
  for (const Record& record : records) {
    RecordRef& ref = refs.emplace_back();
    ref.attributes = record.attributes;
    ref.timestamp = record.timestamp;
    ref.offset = record.offset;
    if (record.key.has_value()) ref.key = ByteView(*record.key);
    if (record.value.has_value()) ref.value = ByteView(*record.value);
    ref.headers = record.headers;
  }
  return build_batch(refs, options);
}

Result<Bytes> build_batch(std::span<const RecordRef> records, const BatchOptions& options) {
  if (records.empty()) return invalid_argument("a batch needs at least one record");
  if (static_cast<uint8_t>(options.compression) > static_cast<uint8_t>(Compression::kZstd)) {
    return invalid_argument("unknown compression codec");
  }
  const int64_t base_timestamp = options.delete_horizon_ms.value_or(records.front().timestamp);
  int64_t max_timestamp = records.front().timestamp;
  for (const RecordRef& record : records) max_timestamp = std::max(max_timestamp, record.timestamp);
  int32_t last_offset_delta = 0;
  // The records go straight behind the header, unless they are compressed first.
  Bytes batch;
  if (options.compression == Compression::kNone) {
    batch.reserve(kBatchHeaderBytes + records_size_bound(records));
    batch.resize(kBatchHeaderBytes);
    SLUICE_TRY(encode_records(records, base_timestamp, &last_offset_delta, &batch));
  } else {
    Bytes section;
    section.reserve(records_size_bound(records));
    SLUICE_TRY(encode_records(records, base_timestamp, &last_offset_delta, &section));
    SLUICE_ASSIGN_OR_RETURN(section, compress(options.compression, section));
    batch.reserve(kBatchHeaderBytes + section.size());
    batch.resize(kBatchHeaderBytes);
    batch.insert(batch.end(), section.begin(), section.end());
  }
  const size_t batch_length = batch.size() - kBatchLogOverheadBytes;
  if (!fits_int32(batch_length)) return invalid_argument("batch over 2 GiB");

  // Fields stored through a pointer, each as its own type: a push_back per byte reloaded the vector after each one.
  uint8_t* at = batch.data();
  const auto put = [&at]<typename T>(T v) {
    store_be<T>(at, v);
    at += sizeof(T);
  };
  put(records.front().offset);
  put(static_cast<int32_t>(batch_length));
  put(options.partition_leader_epoch);
  put(kMagicV2);
  put(uint32_t{0});  // the CRC, written last
  put(batch_attributes(options));
  put(last_offset_delta);
  put(base_timestamp);
  put(max_timestamp);
  put(options.producer_id);
  put(options.producer_epoch);
  put(options.base_sequence);
  put(static_cast<int32_t>(records.size()));
  SLUICE_ASSERT(at == batch.data() + kBatchHeaderBytes);
  store_be<uint32_t>(batch.data() + kBatchCrcOffset, compute_batch_crc(batch));
  return batch;
}

Result<std::optional<Bytes>> apply_topic_compression(ByteView batch, std::optional<Compression> target) {
  if (!target.has_value()) return std::optional<Bytes>();
  if (static_cast<uint8_t>(*target) > static_cast<uint8_t>(Compression::kZstd)) {
    return invalid_argument("unknown compression codec");
  }
  SLUICE_ASSIGN_OR_RETURN(BatchHeader header, parse_batch_header(batch));
  if (header.size_bytes() != batch.size()) {
    return corruption("batch of " + std::to_string(batch.size()) + " bytes declares " +
                      std::to_string(header.size_bytes()));
  }
  if (header.compression() == *target) return std::optional<Bytes>();
  Bytes storage;
  SLUICE_ASSIGN_OR_RETURN(ByteView section, records_section(batch, header, &storage, kMaxDecompressedBytes));
  Bytes compressed;
  if (*target != Compression::kNone) {
    SLUICE_ASSIGN_OR_RETURN(compressed, compress(*target, section));
    section = compressed;
  }
  const size_t batch_length = kBatchHeaderBytes - kBatchLogOverheadBytes + section.size();
  if (!fits_int32(batch_length)) return invalid_argument("batch over 2 GiB");
  Bytes out;
  out.reserve(kBatchHeaderBytes + section.size());
  out.insert(out.end(), batch.begin(), batch.begin() + kBatchHeaderBytes);
  out.insert(out.end(), section.begin(), section.end());
  constexpr size_t kBatchLengthOffset = 8;
  constexpr size_t kAttributesOffset = 21;
  constexpr uint16_t kCodecBits = 0x07;
  const uint16_t attributes =
      static_cast<uint16_t>((static_cast<uint16_t>(header.attributes) & ~kCodecBits) | static_cast<uint16_t>(*target));
  store_be<int32_t>(out.data() + kBatchLengthOffset, static_cast<int32_t>(batch_length));
  store_be<uint16_t>(out.data() + kAttributesOffset, attributes);
  store_be<uint32_t>(out.data() + kBatchCrcOffset, compute_batch_crc(out));
  return std::optional<Bytes>(std::move(out));
}

}  // namespace sluice::storage
