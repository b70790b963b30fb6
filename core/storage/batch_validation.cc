// validate_produce_batch: what Kafka checks before it appends a client's batch, in Kafka's order, with Kafka's
// error codes (kafka-protocol.md §3). The Kafka sources each check follows:
//   ProduceRequest.validateRecords       exactly one batch per partition, magic 2            INVALID_RECORD
//   ByteBufferLogInputStream.nextBatch   batch length below the header                       CORRUPT_MESSAGE
//   UnifiedLog.analyzeAndValidateRecords base offset 0, size <= max.message.bytes, the CRC    INVALID_RECORD,
//                                                                                            MESSAGE_TOO_LARGE,
//                                                                                            CORRUPT_MESSAGE
//   LogValidator.validateBatch           count > 0 and == last offset delta + 1, no control  INVALID_RECORD
//                                        batches, a producer id needs a base sequence >= 0
//   DefaultRecord.readFrom, RecordIterator  malformed records, wrong count, trailing bytes     INVALID_RECORD
//   LogValidator.validateKey / validateTimestamp / processRecordErrors: a null key on a compacted topic is
//                                        INVALID_RECORD, a timestamp outside the window (or a client-set
//                                        LogAppendTime) INVALID_TIMESTAMP, which wins when both occur; every
//                                        failing record is reported with its index (RecordError, KIP-467)
//   LogValidator.assignOffsetsNonCompressed, validateMessagesAndAssignOffsetsCompressed: the records' largest
//                                        timestamp (ValidBatch), never the header's max timestamp
// Where Sluice is stricter than Kafka, on purpose:
//   - inner offset deltas other than 0..n-1 are INVALID_RECORD (Kafka rebuilds compressed batches and stores
//     uncompressed ones as they came; every current client writes 0..n-1, and storing them as sent would break
//     offset lookups);
//   - bytes after the batch are INVALID_RECORD even when fewer than 17 (Kafka ignores such a short tail);
//   - a records section that does not decompress, or decompresses past kMaxDecompressedBytes, is INVALID_RECORD
//     (Kafka answers UNKNOWN_SERVER_ERROR from a KafkaException; the batch is bad, not the broker, and a client
//     must not retry it, which rules out the retriable CORRUPT_MESSAGE). So is an unknown codec number.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/storage/compression.h"
#include "core/storage/record_batch.h"
#include "core/storage/record_reader.h"

namespace sluice::storage {
namespace {

constexpr size_t kMagicOffset = 16;
constexpr int64_t kNoTimestamp = -1;

uint64_t read_be(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

Status invalid_record(std::string message) { return kafka_error(ErrorCode::kInvalidRecord, std::move(message)); }

// Framing, size and CRC: everything decided from the header bytes before the header is trusted.
Status check_framing(ByteView batch, const ValidationRules& rules) {
  if (batch.size() <= kMagicOffset) {
    return invalid_record("produce data of " + std::to_string(batch.size()) + " bytes holds no record batch");
  }
  if (static_cast<int8_t>(batch[kMagicOffset]) != kMagicV2) {
    return invalid_record("record batch magic " + std::to_string(static_cast<int8_t>(batch[kMagicOffset])) +
                          "; produce accepts magic 2 only");
  }
  const int32_t batch_length = static_cast<int32_t>(read_be(batch.data() + 8, 4));
  if (batch_length < static_cast<int32_t>(kBatchHeaderBytes - kBatchLogOverheadBytes)) {
    return kafka_error(ErrorCode::kCorruptMessage,
                       "record batch length " + std::to_string(batch_length) + " is below the header size");
  }
  const size_t size_bytes = kBatchLogOverheadBytes + static_cast<size_t>(batch_length);
  if (batch.size() != size_bytes) {
    return invalid_record("produce data of " + std::to_string(batch.size()) + " bytes is not exactly one record " +
                          "batch of " + std::to_string(size_bytes));
  }
  const int64_t base_offset = static_cast<int64_t>(read_be(batch.data(), 8));
  if (base_offset != 0) {
    return invalid_record("a produced batch must have base offset 0, not " + std::to_string(base_offset));
  }
  if (static_cast<int64_t>(size_bytes) > rules.max_message_bytes) {
    return kafka_error(ErrorCode::kMessageTooLarge, "record batch of " + std::to_string(size_bytes) +
                                                        " bytes exceeds max.message.bytes " +
                                                        std::to_string(rules.max_message_bytes));
  }
  // Not batch_crc_ok: that parses the header first, and a bad count must be INVALID_RECORD, not a CRC failure.
  const uint32_t stored_crc = static_cast<uint32_t>(read_be(batch.data() + kBatchCrcOffset, 4));
  const uint32_t crc = compute_batch_crc(batch);
  if (crc != stored_crc) {
    return kafka_error(ErrorCode::kCorruptMessage, "record batch CRC mismatch (stored " + std::to_string(stored_crc) +
                                                       ", computed " + std::to_string(crc) + ")");
  }
  return Status();
}

Status check_header(const BatchHeader& header) {
  if (header.record_count <= 0) {
    return invalid_record("record batch declares " + std::to_string(header.record_count) + " records");
  }
  if (static_cast<int64_t>(header.last_offset_delta) + 1 != header.record_count) {
    return invalid_record("last offset delta " + std::to_string(header.last_offset_delta) + " disagrees with " +
                          std::to_string(header.record_count) + " records");
  }
  if (header.control()) return invalid_record("clients may not write control batches");
  if (header.producer_id >= 0 && header.base_sequence < 0) {
    return invalid_record("producer id " + std::to_string(header.producer_id) + " with base sequence " +
                          std::to_string(header.base_sequence));
  }
  return Status();
}

// Kafka's window test, in 128 bits so that extreme timestamps and INT64_MAX bounds cannot overflow.
bool timestamp_in_window(int64_t timestamp, const ValidationRules& rules) {
  const __int128 age = static_cast<__int128>(rules.now_ms) - timestamp;
  return age <= rules.timestamp_before_max_ms && -age <= rules.timestamp_after_max_ms;
}

// The timestamp a record is checked with.
int64_t record_timestamp(const BatchHeader& header, const RecordView& view) {
  return header.log_append_time() ? header.max_timestamp
                                  : static_cast<int64_t>(static_cast<uint64_t>(header.base_timestamp) +
                                                         static_cast<uint64_t>(view.timestamp_delta));
}

// Whether a record fails LogValidator.validateTimestamp. Asked of every record, so it builds no message.
bool timestamp_fails(const BatchHeader& header, const RecordView& view, const ValidationRules& rules) {
  const int64_t timestamp = record_timestamp(header, view);
  if (!rules.log_append_time && timestamp != kNoTimestamp) return !timestamp_in_window(timestamp, rules);
  return header.log_append_time();  // producers may not set LogAppendTime
}

// Why a record fails timestamp_fails.
std::string timestamp_error(const BatchHeader& header, const RecordView& view, int32_t index,
                            const ValidationRules& rules) {
  const int64_t timestamp = record_timestamp(header, view);
  if (!rules.log_append_time && timestamp != kNoTimestamp) {
    return "record " + std::to_string(index) + " has timestamp " + std::to_string(timestamp) +
           ", outside the window allowed at " + std::to_string(rules.now_ms);
  }
  return "record " + std::to_string(index) + ": producers may not set LogAppendTime";
}

// The batch's verdict from its per-record errors (LogValidator.processRecordErrors): INVALID_TIMESTAMP when any
// record has a timestamp error, else INVALID_RECORD; the message names the first error and how many there are.
Status record_errors_status(const std::vector<RecordError>& errors, int32_t total, bool any_timestamp_error) {
  std::string message = errors.front().message;
  if (total > 1) message += " (" + std::to_string(total) + " records rejected in all)";
  if (any_timestamp_error) return kafka_error(ErrorCode::kInvalidTimestamp, std::move(message));
  return invalid_record(std::move(message));
}

Result<ValidBatch> check_records(ByteView batch, const BatchHeader& header, const ValidationRules& rules,
                                 std::vector<RecordError>* record_errors) {
  Bytes storage;
  Result<ByteView> section = records_section(batch, header, &storage, kMaxDecompressedBytes);
  if (!section.ok()) return invalid_record("records section: " + section.status().message());
  RecordReader reader(*section, header.record_count);
  RecordView view;
  std::vector<RecordError> errors;
  int32_t total = 0;
  bool any_timestamp_error = false;
  ValidBatch valid;
  while (true) {
    Result<bool> more = reader.next(&view);
    if (!more.ok()) return invalid_record(more.status().message());
    if (!*more) break;
    const int32_t index = reader.index();
    if (view.offset_delta != index) {
      return invalid_record("record " + std::to_string(index) + " has offset delta " +
                            std::to_string(view.offset_delta));
    }
    valid.records_max_timestamp = std::max(valid.records_max_timestamp, record_timestamp(header, view));
    // One error per record, the key's before the timestamp's, as Kafka's validateRecord reports them.
    const bool key_missing = rules.compacted && !view.key.has_value();
    const bool timestamp_failed = !key_missing && timestamp_fails(header, view, rules);
    if (!key_missing && !timestamp_failed) continue;
    any_timestamp_error = any_timestamp_error || timestamp_failed;
    ++total;  // a compressed batch may hold millions of bad records: the list is capped, the count is not
    if (errors.size() >= kMaxRecordErrors) continue;
    errors.push_back({index, key_missing ? "record " + std::to_string(index) +
                                               " has no key, which a compacted topic requires"
                                         : timestamp_error(header, view, index, rules)});
  }
  if (errors.empty()) return valid;
  Status status = record_errors_status(errors, total, any_timestamp_error);
  if (record_errors != nullptr) *record_errors = std::move(errors);
  return status;
}

}  // namespace

Result<ValidBatch> validate_produce_batch(ByteView batch, const ValidationRules& rules,
                                          std::vector<RecordError>* record_errors) {
  SLUICE_TRY(check_framing(batch, rules));
  Result<BatchHeader> header = parse_batch_header(batch);
  // Framing passed, so only a negative count or last offset delta can fail the parse.
  if (!header.ok()) return invalid_record(header.status().message());
  SLUICE_TRY(check_header(*header));
  return check_records(batch, *header, rules, record_errors);
}

}  // namespace sluice::storage
