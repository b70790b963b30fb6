// Segment's read side: finding a batch by offset, serving whole batches with their CRCs checked, and the timestamp
// search. Reads pread spans, not headers one by one: a fetch used to cost about 16 preads of 61 bytes.
#include <algorithm>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/storage/agreeing_reads.h"
#include "core/storage/compression.h"
#include "core/storage/record_reader.h"
#include "core/storage/segment.h"

namespace sluice::storage {
namespace {

// A header walk over small batches reads this much ahead: the sparse index puts an entry every
// index.interval.bytes (4 KiB by default), so a walk from one usually ends within one window. Over batches of a
// KiB or more it reads headers alone: a window would mostly read bodies it skips (a trusted load reads only headers).
constexpr uint64_t kHeaderWindowBytes = 8 * 1024;
constexpr uint64_t kSmallBatchBytes = 1024;

// A released index's answer, searched in its file and read again on damage. Past lasting damage, `from_start`: the
// index only spares a walk, which then starts at the segment's first batch.
template <typename Answer, typename Search>
Result<Answer> search_released_index(SegmentFileCache& cache, uint64_t key, const std::string& path, Env env,
                                     Search search, Answer from_start) {
  SLUICE_ASSIGN_OR_RETURN(const std::shared_ptr<File> file, cache.acquire(key, path));
  Result<Answer> found = read_again_on_damage(
      2, [&] { return search(*file); }, [](const Status&) { SLUICE_PROBE("segment.index_search_read_again"); });
  if (found.ok() || found.status().code() != Code::kCorruption) return found;
  SLUICE_PROBE("segment.index_search_fell_back");
  env.log.debug("{}; searching from the segment's start", found.status().to_string());
  return from_start;
}

}  // namespace

Result<BatchHeader> Segment::checked_header(ByteView bytes, uint64_t position) const {
  SLUICE_ASSERT(position < size_);
  BatchHeader header;
  if (!parse_valid_batch_header(bytes, &header)) {
    return corruption(log_path() + " at byte " + std::to_string(position) + ": " +
                      batch_header_problem(bytes).message());
  }
  if (header.size_bytes() > size_ - position) {
    return corruption(log_path() + ": batch at byte " + std::to_string(position) + " runs past the end");
  }
  return header;
}

Result<BatchHeader> Segment::header_at(uint64_t position) const {
  if (position + kBatchHeaderBytes > size_) {
    return corruption(log_path() + ": batch header at byte " + std::to_string(position) + " runs past the end");
  }
  uint8_t bytes[kBatchHeaderBytes];
  SLUICE_ASSIGN_OR_RETURN(const std::shared_ptr<File> log, log_file());
  SLUICE_ASSIGN_OR_RETURN(size_t got, log->pread(position, MutableByteView(bytes, sizeof(bytes))));
  if (got < sizeof(bytes)) return corruption(log_path() + ": short read at byte " + std::to_string(position));
  return checked_header(ByteView(bytes, sizeof(bytes)), position);
}

Result<BatchHeader> Segment::header_in(HeaderWindow& window, uint64_t position) const {
  if (position + kBatchHeaderBytes > size_) {
    return corruption(log_path() + ": batch header at byte " + std::to_string(position) + " runs past the end");
  }
  const bool inside =
      position >= window.start && position - window.start + kBatchHeaderBytes <= window.bytes.size();
  if (inside) return checked_header(ByteView(window.bytes).subspan(position - window.start), position);
  window.start = position;
  window.bytes.resize(kBatchHeaderBytes);
  SLUICE_ASSIGN_OR_RETURN(const std::shared_ptr<File> log, log_file());
  SLUICE_ASSIGN_OR_RETURN(size_t got, log->pread(position, window.bytes));
  if (got < window.bytes.size()) return corruption(log_path() + ": short read at byte " + std::to_string(position));
  SLUICE_ASSIGN_OR_RETURN(BatchHeader header, checked_header(window.bytes, position));
  const uint64_t ahead = std::min(kHeaderWindowBytes, size_ - position);
  if (header.size_bytes() < kSmallBatchBytes && ahead > window.bytes.size()) {
    // A small batch: the next headers are likely small ones close behind it; read them in one go.
    window.bytes.resize(ahead);
    SLUICE_ASSIGN_OR_RETURN(got, log->pread(position, window.bytes));
    if (got < window.bytes.size()) {
      return corruption(log_path() + ": short read at byte " + std::to_string(position));
    }
  }
  return header;
}

Result<std::optional<uint64_t>> Segment::find_position(int64_t target) const {
  SLUICE_ASSIGN_OR_RETURN(const std::optional<Located> found, locate(target));
  if (!found.has_value()) return std::optional<uint64_t>();
  return std::optional<uint64_t>(found->position);
}

Result<std::optional<Segment::Located>> Segment::locate(int64_t target) const {
  if (target >= next_offset_) return std::optional<Located>();
  if (const std::optional<uint64_t> hinted = position_hints_.find(target); hinted.has_value()) {
    // target < next_offset_, so a batch holding target or later was appended behind the hinted boundary.
    SLUICE_ASSERT(*hinted < size_);
    SLUICE_ASSERT(!offset_index_->entries_loaded() || *hinted >= offset_index_->lookup(target).position);
    return std::optional<Located>(Located{*hinted, target, std::nullopt});
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<PlacedHeader> found, walk_to(target));
  if (!found.has_value()) {
    // With a batch and target < next_offset_, the last batch ends at or after target: a walk that found none stepped
    // over a damaged header. (Unless a cut shrank the segment meanwhile: the caller's cut check sees that.)
    if (size_ > 0 && target < next_offset_ && !cutting()) {
      return corruption(log_path() + ": a header walk to offset " + std::to_string(target) +
                        " passed the segment's end (next offset " + std::to_string(next_offset_) + ")");
    }
    return std::optional<Located>();
  }
  const Located walked{found->position, base_offset_, found->header.base_offset};
  if (found->header.base_offset <= target) return std::optional<Located>(walked);
  // A gap before the batch found: compaction removed the offsets between, or a damaged header (its base offset lies
  // outside the CRC) made the walk step over the batch holding target. Only a second walk that agrees is believed.
  SLUICE_PROBE("segment.gap_walked_again");
  SLUICE_ASSIGN_OR_RETURN(std::optional<PlacedHeader> again, walk_to(target));
  if (!again.has_value() || again->position != found->position) {
    return corruption(log_path() + ": two header walks to offset " + std::to_string(target) + " disagree (byte " +
                      std::to_string(found->position) + ", then " +
                      (again.has_value() ? "byte " + std::to_string(again->position) : "none") + ")");
  }
  return std::optional<Located>(walked);
}

Result<uint64_t> Segment::indexed_position(int64_t target) const {
  if (offset_index_->entries_loaded()) return offset_index_->lookup(target).position;
  SLUICE_ASSIGN_OR_RETURN(
      const OffsetPosition found,
      search_released_index(
          *cache_, offset_index_key_, index_path(), env_,
          [&](File& file) { return offset_index_->lookup_in_file(file, target); }, OffsetPosition{base_offset_, 0}));
  return found.position;
}

Result<TimestampOffset> Segment::indexed_below(int64_t timestamp) const {
  if (time_index_->entries_loaded()) return time_index_->lookup_below(timestamp);
  return search_released_index(
      *cache_, time_index_key_, time_index_path(), env_,
      [&](File& file) { return time_index_->lookup_below_in_file(file, timestamp); },
      TimestampOffset{-1, base_offset_});
}

Result<std::optional<Segment::PlacedHeader>> Segment::walk_to(int64_t target) const {
  HeaderWindow window;
  SLUICE_ASSIGN_OR_RETURN(uint64_t position, indexed_position(target));
  while (position < size_) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_in(window, position));
    if (header.last_offset() >= target) return std::optional<PlacedHeader>(PlacedHeader{position, header});
    position += header.size_bytes();
  }
  return std::optional<PlacedHeader>();
}

Result<std::optional<BatchHeader>> Segment::batch_header_at_or_after(int64_t target) const {
  const uint64_t generation = cuts_;
  if (cutting()) return cut_during_read(0);
  SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> position, find_position(target));
  if (generation != cuts_) return cut_during_read(position.value_or(0));
  if (!position.has_value()) return std::optional<BatchHeader>();
  SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_at(*position));
  // A header has no CRC over its base offset or epoch, and raft aligns its entries on this answer (retention
  // expires by its max timestamp, read here without the batch's CRC): a second read must agree with the first.
  SLUICE_ASSIGN_OR_RETURN(const BatchHeader again, header_at(*position));
  if (generation != cuts_) return cut_during_read(*position);
  if (again.base_offset != header.base_offset || again.partition_leader_epoch != header.partition_leader_epoch ||
      again.last_offset_delta != header.last_offset_delta || again.max_timestamp != header.max_timestamp) {
    SLUICE_PROBE("segment.header_reads_disagreed");
    return corruption(log_path() + ": two reads of the batch header at byte " + std::to_string(*position) +
                      " disagree");
  }
  if (header.last_offset() < target) {
    return corruption(log_path() + ": the batch at byte " + std::to_string(*position) + " ends at offset " +
                      std::to_string(header.last_offset()) + ", before " + std::to_string(target));
  }
  return std::optional<BatchHeader>(header);
}

Status Segment::for_each_batch_header(const std::function<Status(const BatchHeader&)>& on_batch) const {
  HeaderWindow window;
  for (uint64_t position = 0; position < size_;) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_in(window, position));
    SLUICE_TRY(on_batch(header));
    position += header.size_bytes();
  }
  return Status();
}

Status Segment::cut_during_read(uint64_t position) const {
  SLUICE_PROBE("segment.cut_during_read");
  return Status(Code::kInvalidArgument,
                log_path() + ": the segment was cut (a truncation) while byte " + std::to_string(position) +
                    " was being read; retry",
                wire_code(ErrorCode::kNotLeaderOrFollower));
}

Result<Bytes> Segment::read(uint64_t position, size_t max_bytes, int64_t upper_bound_offset) const {
  std::optional<BatchHeader> first;
  if (cutting()) return cut_during_read(position);
  return read_batches(position, max_bytes, upper_bound_offset, &first, cuts_);
}

// One pread of the span the answer can cover (max_bytes, or the first batch whole), then a walk over its headers
// in memory. The bytes past the answer's last batch are read and dropped: at most a batch, or what lies above
// upper_bound_offset.
Result<Bytes> Segment::read_batches(uint64_t position, size_t max_bytes, int64_t upper_bound_offset,
                                    std::optional<BatchHeader>* first, uint64_t generation) const {
  if (generation != cuts_) return cut_during_read(position);
  SLUICE_ASSERT(position <= size_);
  const uint64_t available = size_ - position;
  // One header more than the answer can hold: the batch after the answer's last one checks that one's base offset.
  const uint64_t span =
      std::min<uint64_t>(available, std::max<uint64_t>(max_bytes, kBatchHeaderBytes) + kBatchHeaderBytes);
  Bytes out;
  out.reserve(span);
  SLUICE_ASSIGN_OR_RETURN(const std::shared_ptr<File> log, log_file());  // pinned until the read returns
  SLUICE_ASSIGN_OR_RETURN(size_t got, log->pread_append(position, span, out));
  if (generation != cuts_) return cut_during_read(position);
  if (got != span) return corruption(log_path() + ": short read at byte " + std::to_string(position));
  uint64_t end = 0;  // relative to position: the answer is out[0, end)
  int64_t last_offset = -1;
  std::optional<PlacedHeader> damaged;  // the first batch of the answer that fails its CRC
  while (end < available) {
    // Past the span (a first batch above max_bytes was read whole), no batch starting here fits, but its header,
    // read on its own, still checks the base offset of the one before, which nothing else would (a copy of it may
    // have been read higher).
    const bool in_span = end + kBatchHeaderBytes <= out.size();
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, in_span ? checked_header(ByteView(out).subspan(end), position + end)
                                                        : header_at(position + end));
    if (!in_span && generation != cuts_) return cut_during_read(position);
    // Base offsets lie outside the batch CRC: a damaged one is caught by its place among its neighbours, and by the
    // segment's bounds (the next offset of the append whose index writes are under way counts: it grew size_
    // first). One read past the upper bound would otherwise end the answer empty: the reader would stall there.
    if (header.base_offset <= last_offset || header.base_offset < base_offset_ ||
        header.last_offset() >= std::max(next_offset_, appending_next_offset_)) {
      return misplaced_batch(header, position + end, last_offset);
    }
    if (header.last_offset() >= upper_bound_offset) break;
    if (end == 0) {
      *first = header;
      if (header.size_bytes() > out.size()) {
        // The first batch is served whole even above max_bytes: read the rest of it.
        const size_t had = out.size();
        SLUICE_ASSIGN_OR_RETURN(got, log->pread_append(position + had, header.size_bytes() - had, out));
        if (generation != cuts_) return cut_during_read(position);
        if (got != header.size_bytes() - had) {
          return corruption(log_path() + ": short read at byte " + std::to_string(position + had));
        }
      }
    } else if (end + header.size_bytes() > max_bytes || end + header.size_bytes() > out.size()) {
      SLUICE_ASSERT(end + header.size_bytes() > max_bytes);  // the span holds every batch within max_bytes
      break;
    }
    // Its CRC, checked where its header was just parsed (a second walk over the answer parsed each header again);
    // refused after the walk, so that a misplaced batch or a cut the walk finds behind it is still what it reports.
    SLUICE_ASSERT(end + header.size_bytes() <= out.size());
    if (!damaged && !batch_crc_ok(ByteView(out).subspan(end, header.size_bytes()), header)) {
      damaged = PlacedHeader{position + end, header};
    }
    end += header.size_bytes();
    last_offset = header.last_offset();
  }
  SLUICE_ASSERT(end <= out.size());
  SLUICE_ASSERT(end <= available);
  if (damaged.has_value()) return refuse_damaged(*damaged);
  out.resize(end);
  // A cut while this fiber was suspended in a pread would have moved the boundary (checked above: none was).
  if (end > 0 && !position_hints_.remember(last_offset + 1, position + end)) {
    position_hints_.forget_all();  // this read or the one that left the other hint was damaged
    SLUICE_PROBE("segment.contradicting_position_hint");
    return corruption(log_path() + ": a read ending at byte " + std::to_string(position + end) + " before offset " +
                      std::to_string(last_offset + 1) + " contradicts an earlier one; it is not served");
  }
  return out;
}

Status Segment::misplaced_batch(const BatchHeader& header, uint64_t position, int64_t previous_last_offset) const {
  SLUICE_PROBE("segment.misplaced_batch_refused");
  return Status(Code::kCorruption,
                log_path() + ": the batch at byte " + std::to_string(position) + " starts at offset " +
                    std::to_string(header.base_offset) + " and ends at " + std::to_string(header.last_offset()) +
                    ", not after offset " + std::to_string(std::max(previous_last_offset, base_offset_ - 1)) +
                    " (the batch before it, or the segment's base) and before " +
                    std::to_string(std::max(next_offset_, appending_next_offset_)) +
                    " (the segment's next offset); it is not served",
                wire_code(ErrorCode::kKafkaStorageError));
}

Result<std::optional<Bytes>> Segment::read_from(int64_t offset, size_t max_bytes, int64_t upper_bound_offset) const {
  const uint64_t generation = cuts_;  // before the walk: a cut during it moves the position
  if (cutting()) return cut_during_read(0);
  SLUICE_ASSIGN_OR_RETURN(const std::optional<Located> found, locate(offset));
  if (generation != cuts_) return cut_during_read(found.has_value() ? found->position : 0);
  if (!found.has_value()) return std::optional<Bytes>();
  std::optional<BatchHeader> first;
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes,
                          read_batches(found->position, max_bytes, upper_bound_offset, &first, generation));
  if (!first.has_value()) return std::optional<Bytes>(std::move(bytes));
  // The position (walked or hinted) must hold the offset asked for. A base offset is outside the CRC, so damage
  // there is refused as the CRC check refuses damage elsewhere. Each later batch is checked by the one before it;
  // the first one by the walk's own read of its header, or by the hint's boundary: a client labels the records
  // it keeps by this base offset, so one read lower would serve a later record under an earlier offset.
  const bool disagrees = first->base_offset < found->base_offset_at_least ||
                         (found->base_offset.has_value() && first->base_offset != *found->base_offset);
  if (disagrees || first->last_offset() < offset) {
    if (disagrees) SLUICE_PROBE("segment.first_base_offset_disagreed");
    return Status(Code::kCorruption,
                  log_path() + ": the batch at byte " + std::to_string(found->position) + " reads as offsets " +
                      std::to_string(first->base_offset) + "-" + std::to_string(first->last_offset()) +
                      ", not where the index, a header walk or a previous read placed offset " +
                      std::to_string(offset) + "; it is not served",
                  wire_code(ErrorCode::kKafkaStorageError));
  }
  return std::optional<Bytes>(std::move(bytes));
}

// Bytes about to be served must be what was appended: a latent sector error or a misdirected write in sealed data
// is caught by the CRC check (recovery scans only from the recovery point on), and refused loudly instead of
// served. CRC32C runs at tens of GB/s here, a small share of the copy the read already made.
Status Segment::refuse_damaged(const PlacedHeader& batch) const {
  SLUICE_PROBE("segment.read_damage_refused");
  return Status(Code::kCorruption,
                log_path() + ": the batch at byte " + std::to_string(batch.position) + " (offset " +
                    std::to_string(batch.header.base_offset) +
                    ") fails its CRC on read; it is not served. Run `sluice log repair " + dir_ +
                    "` to truncate there (the data from that batch on is lost)",
                wire_code(ErrorCode::kKafkaStorageError));
}

Result<std::optional<TimestampOffset>> Segment::find_offset_for_timestamp(int64_t target, int64_t min_offset) const {
  if (max_timestamp_ < target || next_offset_ <= min_offset) return std::optional<TimestampOffset>();
  // Every record up to the entry's offset is older than target, so the search starts after it.
  SLUICE_ASSIGN_OR_RETURN(const TimestampOffset below, indexed_below(target));
  const int64_t from = std::max(below.offset, min_offset);
  SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> start, find_position(from));
  if (!start.has_value()) return std::optional<TimestampOffset>();
  HeaderWindow window;
  for (uint64_t position = *start; position < size_;) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_in(window, position));
    if (header.max_timestamp >= target && header.last_offset() >= min_offset) {
      Bytes batch(header.size_bytes());
      SLUICE_ASSIGN_OR_RETURN(const std::shared_ptr<File> log, log_file());
      SLUICE_ASSIGN_OR_RETURN(size_t got, log->pread(position, batch));
      if (got != batch.size()) return corruption(log_path() + ": short read");
      // The walk read this header without its CRC; the batch read whole must agree with it and pass its CRC.
      Result<BatchHeader> whole = parse_batch_header(batch);
      if (!whole.ok() || whole->base_offset != header.base_offset || whole->max_timestamp != header.max_timestamp ||
          !batch_crc_ok(batch)) {
        return corruption(log_path() + ": the batch at byte " + std::to_string(position) +
                          " does not read back as its header said; it is not searched");
      }
      SLUICE_ASSIGN_OR_RETURN(auto found, first_record_at_or_after(batch, header, target, min_offset));
      if (found.has_value()) return found;
    }
    position += header.size_bytes();
  }
  return std::optional<TimestampOffset>();
}

namespace {

// Timestamps and offset deltas come from the producer: their sums wrap (as decode_records' do) instead of being
// undefined.
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

}  // namespace

Result<std::optional<TimestampOffset>> first_record_at_or_after(ByteView batch, const BatchHeader& header,
                                                                int64_t target, int64_t min_offset) {
  if (header.max_timestamp < target || header.last_offset() < min_offset) return std::optional<TimestampOffset>();
  const int64_t first = std::max(header.base_offset, min_offset);
  if (header.log_append_time()) {
    return std::optional<TimestampOffset>(TimestampOffset{header.max_timestamp, first});
  }
  // Record by record, compressed or not, without materialising them: a small compressed batch can hold millions
  // of tiny records, and a decoded Record costs ~100 bytes of heap (decode_records would take a GiB for one batch
  // of 64 MiB decompressed).
  Bytes storage;
  SLUICE_ASSIGN_OR_RETURN(ByteView section, records_section(batch, header, &storage, kMaxDecompressedBytes));
  RecordReader reader(section, header.record_count);
  RecordView record;
  while (true) {
    Result<bool> more = reader.next(&record);
    if (!more.ok()) {
      return corruption("the batch at offset " + std::to_string(header.base_offset) + ": " + more.status().message());
    }
    if (!*more) return std::optional<TimestampOffset>();
    const int64_t offset = wrapping_add(header.base_offset, record.offset_delta);
    const int64_t timestamp = wrapping_add(header.base_timestamp, record.timestamp_delta);
    if (offset >= min_offset && timestamp >= target) {
      return std::optional<TimestampOffset>(TimestampOffset{timestamp, offset});
    }
  }
}

}  // namespace sluice::storage
