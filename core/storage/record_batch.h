// Kafka record batches, magic v2, exactly as they travel on the wire and sit in .log files (docs/formats.md).
//
//   offset  size  field                      covered by CRC
//        0     8  base_offset                no   (the log assigns it: set_base_offset)
//        8     4  batch_length               no   (bytes after this field)
//       12     4  partition_leader_epoch     no   (raft term later: set_partition_leader_epoch)
//       16     1  magic (= 2)                no
//       17     4  crc (CRC32C of bytes 21..) -
//       21     2  attributes                 yes  (bits 0-2 compression, 3 LogAppendTime, 4 transactional,
//                                                  5 control, 6 delete horizon set)
//       23     4  last_offset_delta          yes
//       27     8  base_timestamp             yes  (the delete horizon when bit 6 is set, KIP-534)
//       35     8  max_timestamp              yes
//       43     8  producer_id                yes
//       51     2  producer_epoch             yes
//       53     4  base_sequence              yes
//       57     4  record_count               yes
//       61     -  records (compressed as a whole when compression != none)
//
// Record: varint length, int8 attributes, varlong timestamp_delta, varint offset_delta, varint key_length (-1 =
// null), key, varint value_length (-1 = null: a tombstone), value, varint header_count, headers (varint key length,
// key, varint value length, value).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/bytes.h"
#include "core/base/function_ref.h"
#include "core/base/result.h"

namespace sluice::storage {

inline constexpr size_t kBatchHeaderBytes = 61;
inline constexpr size_t kBatchLogOverheadBytes = 12;  // base_offset + batch_length
inline constexpr size_t kBatchCrcOffset = 17;
inline constexpr size_t kBatchCrcCoveredFrom = 21;
inline constexpr int8_t kMagicV2 = 2;

enum class Compression : uint8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

struct BatchHeader {
  int64_t base_offset = 0;
  int32_t batch_length = 0;
  int32_t partition_leader_epoch = -1;
  int8_t magic = kMagicV2;
  uint32_t crc = 0;
  int16_t attributes = 0;
  int32_t last_offset_delta = 0;
  int64_t base_timestamp = -1;
  int64_t max_timestamp = -1;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  int32_t record_count = 0;

  Compression compression() const { return static_cast<Compression>(attributes & 0x07); }
  bool log_append_time() const { return (attributes & 0x08) != 0; }
  bool transactional() const { return (attributes & 0x10) != 0; }
  bool control() const { return (attributes & 0x20) != 0; }
  bool has_delete_horizon() const { return (attributes & 0x40) != 0; }
  int64_t last_offset() const { return base_offset + last_offset_delta; }
  // The whole batch on disk: 12 + batch_length.
  size_t size_bytes() const { return kBatchLogOverheadBytes + static_cast<size_t>(batch_length); }
};

struct RecordHeader {
  std::string key;
  std::optional<Bytes> value;
};

struct Record {
  int8_t attributes = 0;
  int64_t timestamp = 0;  // absolute: base_timestamp + delta (or max_timestamp under LogAppendTime)
  int64_t offset = 0;     // absolute: base_offset + delta
  std::optional<Bytes> key;
  std::optional<Bytes> value;  // nullopt: a tombstone
  std::vector<RecordHeader> headers;
};

namespace detail {

// The header's fields as `p` holds them, unchecked. REQUIRES: kBatchHeaderBytes readable at p.
inline BatchHeader decode_batch_header(const uint8_t* p) {
  BatchHeader h;
  h.base_offset = load_be<int64_t>(p + 0);
  h.batch_length = load_be<int32_t>(p + 8);
  h.partition_leader_epoch = load_be<int32_t>(p + 12);
  h.magic = static_cast<int8_t>(p[16]);
  h.crc = load_be<uint32_t>(p + 17);
  h.attributes = load_be<int16_t>(p + 21);
  h.last_offset_delta = load_be<int32_t>(p + 23);
  h.base_timestamp = load_be<int64_t>(p + 27);
  h.max_timestamp = load_be<int64_t>(p + 35);
  h.producer_id = load_be<int64_t>(p + 43);
  h.producer_epoch = load_be<int16_t>(p + 51);
  h.base_sequence = load_be<int32_t>(p + 53);
  h.record_count = load_be<int32_t>(p + 57);
  return h;
}

// Whether a decoded header passes parse_batch_header's checks. last_offset() must be representable: a base offset
// within the delta of 2^63 is no offset a log can reach.
inline bool batch_header_valid(const BatchHeader& h) {
  return h.magic == kMagicV2 &&
         h.batch_length >= static_cast<int32_t>(kBatchHeaderBytes - kBatchLogOverheadBytes) &&
         h.last_offset_delta >= 0 && h.base_offset <= INT64_MAX - h.last_offset_delta && h.record_count >= 0;
}

}  // namespace detail

// Parses the fixed 61-byte header. Fails (kCorruption) when fewer bytes are given, magic != 2, batch_length is
// below the header size, or last_offset_delta / record_count are negative. Does not check the CRC.
Result<BatchHeader> parse_batch_header(ByteView bytes);
// The same for a loop that parses every header it walks: true with `*header` set when `bytes` starts with a
// header that parses, else false (parse_batch_header says why). Inline and without a Result to fill and copy out:
// a fetch parses each batch header it serves several times.
inline bool parse_valid_batch_header(ByteView bytes, BatchHeader* header) {
  if (bytes.size() < kBatchHeaderBytes) return false;
  *header = detail::decode_batch_header(bytes.data());
  return detail::batch_header_valid(*header);
}
// Why parse_batch_header refuses `bytes` (kCorruption, naming the first check that fails). REQUIRES: it does.
Status batch_header_problem(ByteView bytes);

// CRC32C of batch[21 .. size_bytes) — what the crc field must hold.
uint32_t compute_batch_crc(ByteView batch);
// True when `batch` is exactly one whole batch (size matches batch_length) and its crc field matches.
bool batch_crc_ok(ByteView batch);
// The same for a batch whose header the caller has parsed already (`header` from parse_batch_header(batch)).
bool batch_crc_ok(ByteView batch, const BatchHeader& header);

// In-place edits of fields outside the CRC.
void set_base_offset(MutableByteView batch, int64_t base_offset);
// What set_base_offset writes over the batch's first kBaseOffsetBytes: the base offset outside the CRC, so a batch
// can be written as these bytes followed by the rest of its original bytes.
inline constexpr size_t kBaseOffsetBytes = 8;
std::array<uint8_t, kBaseOffsetBytes> encode_base_offset(int64_t base_offset);
void set_partition_leader_epoch(MutableByteView batch, int32_t epoch);
// Both fields a leader assigns (base offset, partition leader epoch), neither covered by the CRC: what the leader
// path edits before PartitionLog::append_as_replica.
void set_base_offset_and_epoch(MutableByteView batch, int64_t base_offset, int32_t epoch);
// The same over whole batches back to back (`batches` exactly whole batches, else kCorruption): the first gets
// `first_offset`, each next one the offset after the previous one's last; every one gets `epoch`. Returns the offset
// after the last batch.
Result<int64_t> set_offsets_and_epoch(MutableByteView batches, int64_t first_offset, int32_t epoch);
// LogAppendTime: sets the timestamp-type bit and max_timestamp to `timestamp_ms`, then recomputes the CRC.
void set_log_append_time(MutableByteView batch, int64_t timestamp_ms);
// CreateTime (LogValidator's setMaxTimestamp): the header as the records say, max_timestamp =
// `records_max_timestamp` (ValidBatch) with the timestamp-type bit clear. `batch` itself when its header already
// says so; otherwise `*storage` receives a copy with those header fields and the CRC rewritten (the records
// section, compressed or not, is untouched) and the answer views it. REQUIRES: `batch` is one whole batch.
ByteView with_create_time_max_timestamp(ByteView batch, int64_t records_max_timestamp, Bytes* storage);
// (A KIP-534 delete horizon cannot be set in place: record timestamps are deltas from base_timestamp, which the
// horizon replaces. The cleaner rebuilds such batches with build_batch and BatchOptions::delete_horizon_ms.)

// Decodes every record (decompressing as needed). Fails with kCorruption on any malformed field, a record count
// or offset delta that disagrees with the header, or trailing bytes.
Result<std::vector<Record>> decode_records(ByteView batch);

// One record of a batch as for_each_record hands it over: key and value view the batch (or its decompressed
// records), valid during the call only. For readers that keep part of each record (a consumer: no headers).
struct DecodedRecord {
  int64_t offset = 0;
  int64_t timestamp = 0;
  std::optional<ByteView> key;
  std::optional<ByteView> value;  // nullopt: a tombstone
};
// decode_records without a Record per record: `on_record` sees each in order; it fails as decode_records does
// (records before the damage have been seen by then).
Status for_each_record(ByteView batch, FunctionRef<void(const DecodedRecord&)> on_record);
// The same for a batch whose header the caller has parsed already (`header` from parse_batch_header(batch)).
Status for_each_record(ByteView batch, const BatchHeader& header, FunctionRef<void(const DecodedRecord&)> on_record);
// The same, leaving a compressed batch's decompressed records in `decompressed`: the views into them stay valid as
// long as its buffer does (a caller that keeps them keeps the buffer).
Status for_each_record(ByteView batch, const BatchHeader& header, FunctionRef<void(const DecodedRecord&)> on_record,
                       Bytes* decompressed);

// Builds one batch from records whose `offset` and `timestamp` are absolute: base_offset = first record's
// offset, deltas relative to it; base_timestamp = first timestamp, max_timestamp = the largest. The CRC is set.
struct BatchOptions {
  Compression compression = Compression::kNone;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  int32_t partition_leader_epoch = -1;
  bool transactional = false;
  bool control = false;
  bool log_append_time = false;
  std::optional<int64_t> delete_horizon_ms;  // sets bit 6 and base_timestamp
};
Result<Bytes> build_batch(const std::vector<Record>& records, const BatchOptions& options = {});
// A record to build a batch from, viewing bytes its caller keeps: build_batch copies them once, into the batch (a
// producer's records need no copy into Records first).
struct RecordRef {
  int8_t attributes = 0;
  int64_t timestamp = 0;
  int64_t offset = 0;
  std::optional<ByteView> key;
  std::optional<ByteView> value;  // nullopt: a tombstone
  std::span<const RecordHeader> headers;
};
Result<Bytes> build_batch(std::span<const RecordRef> records, const BatchOptions& options = {});

// A topic's compression.type applied to a batch about to be stored (Kafka rebuilds a batch whose codec differs
// from the topic's): `target` nullopt is `producer`, keep whatever codec came. When the batch is already in
// `target` (or target is nullopt) the answer is nullopt: store the batch as it came, byte for byte. Otherwise the
// answer is the same batch with its records section re-encoded in `target`: every header field (offsets,
// timestamps, producer id/epoch/sequence, the other attribute bits) and every record byte (keys, values, headers,
// deltas) unchanged; the codec bits, batch_length and CRC rewritten. Fails with kCorruption when `batch` is not
// exactly one batch or its records do not decompress within kMaxDecompressedBytes.
Result<std::optional<Bytes>> apply_topic_compression(ByteView batch, std::optional<Compression> target);

// Splits a buffer of concatenated batches (a produce request's records field or a .log range). Stops at the
// first incomplete batch; `consumed` tells how many bytes were whole batches. A header that does not parse fails
// the split, with `consumed` set to the bytes of the whole batches before it.
struct BatchSpan {
  BatchHeader header;
  size_t position = 0;  // of the batch within the buffer
};
Result<std::vector<BatchSpan>> split_batches(ByteView buffer, size_t* consumed);
// The same walk without the vector: calls `visit` with each whole batch in order. A visit that fails stops the walk
// and is its result (`consumed` then counts the batch it failed on).
Status for_each_batch(ByteView buffer, size_t* consumed, FunctionRef<Status(const BatchSpan&)> visit);

// What a produce request's batches must satisfy before anything is stored (kafka-protocol.md §3). On failure the
// Status carries the Kafka error (core/protocol/error_codes.h): CORRUPT_MESSAGE for a bad CRC or size,
// INVALID_RECORD for bad records (unkeyed on a compacted topic, offset deltas out of order, control batches from
// clients), MESSAGE_TOO_LARGE for a batch over max_message_bytes, INVALID_TIMESTAMP outside the allowed window.
struct ValidationRules {
  bool compacted = false;              // cleanup.policy contains compact: every record needs a key
  int64_t max_message_bytes = 1048588;
  bool log_append_time = false;        // message.timestamp.type = LogAppendTime: client timestamps are ignored
  int64_t timestamp_before_max_ms = INT64_MAX;
  int64_t timestamp_after_max_ms = INT64_MAX;
  int64_t now_ms = 0;
};
// One record a batch was refused for (KIP-467; Produce v8+ answers them as record_errors): its index in the batch
// and why. A batch refused for its records (a missing key, a timestamp) lists each failing record, in batch order,
// at most kMaxRecordErrors of them, in `*record_errors` when that is given; other failures leave it untouched.
struct RecordError {
  int32_t batch_index = 0;
  std::string message;
};
inline constexpr size_t kMaxRecordErrors = 100;  // bounds the response to a batch of millions of bad records
// What a valid batch's records say about it, for the header a CreateTime topic stores.
struct ValidBatch {
  // The largest record timestamp, -1 when none is above -1 (LogValidator's maxTimestamp). Producers may write -1
  // or a wrong value in the header's max_timestamp (sarama does), so the header is not asked.
  int64_t records_max_timestamp = -1;
};
Result<ValidBatch> validate_produce_batch(ByteView batch, const ValidationRules& rules,
                                          std::vector<RecordError>* record_errors = nullptr);

}  // namespace sluice::storage
