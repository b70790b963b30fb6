#include "core/storage/cleaner_batches.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

#include "core/base/assert.h"
#include "core/base/varint.h"
#include "core/storage/compression.h"
#include "core/storage/record_reader.h"

namespace sluice::storage {
namespace {

// Offsets and timestamps come from disk: their sums wrap, as decode_records' do, instead of being undefined.
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

// The records of one batch with their absolute offsets and timestamps, checked as decode_records checks them
// (offset deltas increase and stay within the header's last offset delta).
class BatchRecords {
 public:
  BatchRecords(const BatchHeader& header, ByteView section)
      : header_(header), reader_(section, header.record_count) {}

  Result<bool> next(RecordView* view, int64_t* offset) {
    SLUICE_ASSIGN_OR_RETURN(bool more, reader_.next(view));
    if (!more) return false;
    if (view->offset_delta <= previous_delta_ || view->offset_delta > header_.last_offset_delta) {
      return corruption("batch at offset " + std::to_string(header_.base_offset) + ", record " +
                        std::to_string(reader_.index()) + ": offset delta " + std::to_string(view->offset_delta) +
                        " after " + std::to_string(previous_delta_) + " (last offset delta " +
                        std::to_string(header_.last_offset_delta) + ")");
    }
    previous_delta_ = view->offset_delta;
    *offset = wrapping_add(header_.base_offset, view->offset_delta);
    return true;
  }

  // As decode_records gives it: under LogAppendTime every record carries the batch's max timestamp.
  int64_t timestamp(const RecordView& view) const {
    return header_.log_append_time() ? header_.max_timestamp : wrapping_add(header_.base_timestamp,
                                                                            view.timestamp_delta);
  }

 private:
  const BatchHeader& header_;
  RecordReader reader_;
  int32_t previous_delta_ = -1;
};

void append(Bytes* out, ByteView bytes) { out->insert(out->end(), bytes.begin(), bytes.end()); }

void store_be(uint8_t* at, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) at[bytes - 1 - i] = static_cast<uint8_t>(value >> (8 * i));
}

// Batch attribute bits a rebuilt batch keeps (codec, LogAppendTime, transactional) and the one it may gain.
constexpr uint16_t kKeptAttributeBits = 0x1f;
constexpr uint16_t kDeleteHorizonBit = 0x40;
constexpr uint16_t kCompressionBits = 0x07;

// The fixed header of a rebuilt batch; the CRC field stays zero (it covers the records, written after).
struct RebuiltHeader {
  int64_t base_offset;
  size_t batch_length;
  uint16_t attributes;
  int32_t last_offset_delta;
  int64_t base_timestamp;
  int64_t max_timestamp;
  int32_t record_count;
};

void put_header(const BatchHeader& old, const RebuiltHeader& fresh, uint8_t* bytes) {
  std::fill(bytes, bytes + kBatchHeaderBytes, uint8_t{0});
  store_be(bytes, static_cast<uint64_t>(fresh.base_offset), 8);
  store_be(bytes + 8, fresh.batch_length, 4);
  store_be(bytes + 12, static_cast<uint32_t>(old.partition_leader_epoch), 4);
  bytes[16] = static_cast<uint8_t>(kMagicV2);
  store_be(bytes + 21, fresh.attributes, 2);
  store_be(bytes + 23, static_cast<uint32_t>(fresh.last_offset_delta), 4);
  store_be(bytes + 27, static_cast<uint64_t>(fresh.base_timestamp), 8);
  store_be(bytes + 35, static_cast<uint64_t>(fresh.max_timestamp), 8);
  store_be(bytes + 43, static_cast<uint64_t>(old.producer_id), 8);
  store_be(bytes + 51, static_cast<uint16_t>(old.producer_epoch), 2);
  store_be(bytes + 53, static_cast<uint32_t>(old.base_sequence), 4);
  store_be(bytes + 57, static_cast<uint32_t>(fresh.record_count), 4);
}

// One record with deltas from the rebuilt batch's base; the rest of it copied as it is.
Status put_survivor(const SurvivingRecord& record, int64_t base_offset, int64_t base_timestamp, Bytes* out) {
  const int64_t timestamp_delta = wrapping_sub(record.timestamp, base_timestamp);
  // Survivors keep their order within the batch, so the delta is at most the old last offset delta.
  const auto offset_delta = static_cast<int32_t>(record.offset - base_offset);
  const size_t body = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta) + record.fields.size();
  if (body > static_cast<size_t>(INT32_MAX)) return invalid_argument("record over 2 GiB");
  put_varint(out, static_cast<int32_t>(body));
  out->push_back(static_cast<uint8_t>(record.attributes));
  put_varlong(out, timestamp_delta);
  put_varint(out, offset_delta);
  append(out, record.fields);
  return Status();
}

}  // namespace

Result<bool> BatchStream::next(ByteView* batch, BatchHeader* header) {
  if (position_ == chunk_.size()) {
    if (next_offset_ >= to_) return false;
    SLUICE_ASSIGN_OR_RETURN(ReadResult read, log_.read(next_offset_, kCleanerChunkBytes, to_));
    chunk_ = std::move(read.records);
    position_ = 0;
    if (chunk_.empty()) return false;
  }
  const ByteView rest = ByteView(chunk_).subspan(position_);
  SLUICE_ASSIGN_OR_RETURN(*header, parse_batch_header(rest));
  if (header->size_bytes() > rest.size()) {
    return corruption(log_.dir() + ": the batch at offset " + std::to_string(header->base_offset) + " declares " +
                      std::to_string(header->size_bytes()) + " bytes, the read holds " + std::to_string(rest.size()));
  }
  *batch = rest.first(header->size_bytes());
  position_ += header->size_bytes();
  next_offset_ = header->last_offset() + 1;
  return true;
}

Result<bool> map_batch_keys(ByteView batch, const BatchHeader& header, int64_t from, int64_t to, KeyOffsetMap& map,
                            Bytes& scratch) {
  if (header.control() || header.last_offset() < from || header.base_offset >= to) return true;
  SLUICE_ASSIGN_OR_RETURN(ByteView section, records_section(batch, header, &scratch, kMaxDecompressedBytes));
  BatchRecords records(header, section);
  RecordView view;
  int64_t offset = 0;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool more, records.next(&view, &offset));
    if (!more) return true;
    if (offset < from || offset >= to || !view.key.has_value()) continue;
    if (!map.put(*view.key, offset)) return false;
  }
}

Status BatchFilter::filter(ByteView batch, const BatchHeader& header, Bytes* out, FilterTally* tally) {
  if (header.control() || header.base_offset >= rules_.cleaned_end) {
    append(out, batch);
    return Status();
  }
  SLUICE_ASSIGN_OR_RETURN(ByteView section, records_section(batch, header, &decompressed_, kMaxDecompressedBytes));
  bool horizon_passed = header.has_delete_horizon() && rules_.now_ms >= header.base_timestamp;
  if (rules_.ignore_delete_horizon) [[unlikely]] {
    SLUICE_PROBE("mutation.tombstone-before-horizon");
    horizon_passed = true;  // every tombstone goes on the first pass that sees it
  }
  kept_.clear();
  bool tombstone = false;
  size_t total = 0;
  BatchRecords records(header, section);
  RecordView view;
  int64_t offset = 0;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool more, records.next(&view, &offset));
    if (!more) break;
    ++total;
    bool keep = offset >= rules_.cleaned_end;
    if (!keep && view.key.has_value()) {
      const std::optional<int64_t> latest = rules_.map->get(*view.key);
      keep = !latest.has_value() || offset >= *latest;
      if (rules_.drop_latest && latest.has_value()) [[unlikely]] keep = planted_keep(*view.key, offset, *latest);
      keep = keep && (view.value.has_value() || !horizon_passed);
      tombstone = tombstone || (keep && !view.value.has_value());
    }
    if (keep) kept_.push_back(SurvivingRecord{view.attributes, offset, records.timestamp(view), view.fields});
  }
  tally->removed += static_cast<int64_t>(total - kept_.size());
  const bool stamp = tombstone && !header.has_delete_horizon();
  if (kept_.size() == total && !stamp) {
    append(out, batch);  // survives whole: its bytes as they are, no re-encoding, no re-compression
    return Status();
  }
  tally->changed = true;
  if (kept_.empty() && !rules_.keep_batch_ranges) return Status();
  ++tally->rebuilt;
  return rebuild(header, stamp, out);
}

// For the keys whose digest is even, the latest record goes and the older ones stay, the last of them now looking
// like the key's latest value (or the key vanishes, when the latest was its only record).
bool BatchFilter::planted_keep(ByteView key, int64_t offset, int64_t latest) {
  if (!KeyOffsetMap::digest_even(key)) return offset >= latest;
  SLUICE_PROBE("mutation.compaction-drops-latest");
  return offset < latest;
}

// The survivors re-encoded with deltas from the first of them (build_batch's layout), the rest of each record
// copied as it is. Uncompressed, they go straight after the header in `*out`; compressed, through section_.
Status BatchFilter::rebuild(const BatchHeader& header, bool stamp, Bytes* out) {
  SLUICE_ASSERT(!kept_.empty() || rules_.keep_batch_ranges);
  SLUICE_ASSERT(!stamp || !kept_.empty());
  RebuiltHeader fresh{};
  fresh.base_offset = rules_.keep_batch_ranges ? header.base_offset : kept_.front().offset;
  fresh.base_timestamp = kept_.empty() ? header.base_timestamp : kept_.front().timestamp;
  fresh.attributes = static_cast<uint16_t>(header.attributes) & kKeptAttributeBits;
  if (kept_.empty()) fresh.attributes &= static_cast<uint16_t>(~kCompressionBits);  // no records: nothing to compress
  if (header.has_delete_horizon() || stamp) {
    fresh.base_timestamp = header.has_delete_horizon() ? header.base_timestamp : rules_.horizon_ms;
    fresh.attributes |= kDeleteHorizonBit;
  }
  fresh.max_timestamp = kept_.empty() ? header.max_timestamp : kept_.front().timestamp;
  fresh.last_offset_delta = rules_.keep_batch_ranges ? header.last_offset_delta
                                                     : static_cast<int32_t>(kept_.back().offset - fresh.base_offset);
  SLUICE_ASSERT(kept_.empty() || kept_.back().offset - fresh.base_offset <= fresh.last_offset_delta);
  fresh.record_count = static_cast<int32_t>(kept_.size());
  const bool compressed = header.compression() != Compression::kNone && !kept_.empty();
  const size_t start = out->size();
  out->resize(start + kBatchHeaderBytes);  // filled in below, once the records' size is known
  Bytes* records = compressed ? &section_ : out;
  if (compressed) section_.clear();
  for (const SurvivingRecord& survivor : kept_) {
    fresh.max_timestamp = std::max(fresh.max_timestamp, survivor.timestamp);
    SLUICE_TRY(put_survivor(survivor, fresh.base_offset, fresh.base_timestamp, records));
  }
  if (compressed) {
    SLUICE_ASSIGN_OR_RETURN(Bytes packed, compress(header.compression(), section_));
    append(out, packed);
  }
  fresh.batch_length = kBatchHeaderBytes - kBatchLogOverheadBytes + (out->size() - start - kBatchHeaderBytes);
  if (fresh.batch_length > static_cast<size_t>(INT32_MAX)) return invalid_argument("batch over 2 GiB");
  const MutableByteView rebuilt(out->data() + start, out->size() - start);
  put_header(header, fresh, rebuilt.data());
  store_be(rebuilt.data() + kBatchCrcOffset, compute_batch_crc(rebuilt), 4);
  return Status();
}

}  // namespace sluice::storage
