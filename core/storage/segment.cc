#include "core/storage/segment.h"

#include <algorithm>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_format.h"

namespace sluice::storage {

Segment::Segment(Env env, std::string dir, int64_t base_offset, const SegmentConfig& config)
    : env_(env), dir_(std::move(dir)), base_offset_(base_offset), config_(config), next_offset_(base_offset) {
  SLUICE_ASSERT(base_offset_ >= 0);
  SLUICE_ASSERT(config_.index_interval_bytes >= 0);
  created_at_ = env_.clock.now();
}

std::string Segment::path(std::string_view suffix) const {
  return join_path(dir_, segment_file_name(base_offset_, suffix) + suffix_);
}
std::string Segment::log_path() const { return path(kLogSuffix); }
std::string Segment::index_path() const { return path(kIndexSuffix); }
std::string Segment::time_index_path() const { return path(kTimeIndexSuffix); }

Status Segment::open_files(OpenMode mode) {
  SLUICE_ASSIGN_OR_RETURN(log_, env_.fs.open(log_path(), mode));
  if (mode == OpenMode::kCreateTruncate) {
    // Stale index files of a segment that once had this base would otherwise be loaded.
    for (const std::string& p : {index_path(), time_index_path()}) {
      SLUICE_ASSIGN_OR_RETURN(auto f, env_.fs.open(p, OpenMode::kCreateTruncate));
      SLUICE_TRY(f->close());
    }
  }
  SLUICE_ASSIGN_OR_RETURN(offset_index_, OffsetIndex::open(env_.fs, index_path(), base_offset_, config_.index_bytes));
  SLUICE_ASSIGN_OR_RETURN(time_index_, TimeIndex::open(env_.fs, time_index_path(), base_offset_, config_.index_bytes));
  SLUICE_ASSIGN_OR_RETURN(size_, log_->size());
  allocated_ = size_;
  return Status();
}

Result<std::unique_ptr<Segment>> Segment::create(Env env, const std::string& dir, int64_t base_offset,
                                                 const SegmentConfig& config) {
  std::unique_ptr<Segment> segment(new Segment(env, dir, base_offset, config));
  SLUICE_TRY(segment->open_files(OpenMode::kCreateTruncate));
  SLUICE_ASSERT(segment->size_ == 0);
  SLUICE_ASSERT(segment->offset_index_->entry_count() == 0);
  return segment;
}

Result<std::unique_ptr<Segment>> Segment::open(Env env, const std::string& dir, int64_t base_offset,
                                               const SegmentConfig& config) {
  std::unique_ptr<Segment> segment(new Segment(env, dir, base_offset, config));
  SLUICE_TRY(segment->open_files(OpenMode::kReadWrite));
  return segment;
}

void Segment::set_config(const SegmentConfig& config) {
  config_ = config;
  offset_index_->set_max_index_bytes(config.index_bytes);
  time_index_->set_max_index_bytes(config.index_bytes);
}

Result<BatchHeader> Segment::header_at(uint64_t position) const {
  if (position + kBatchHeaderBytes > size_) {
    return corruption(log_path() + ": batch header at byte " + std::to_string(position) + " runs past the end");
  }
  uint8_t bytes[kBatchHeaderBytes];
  SLUICE_ASSIGN_OR_RETURN(size_t got, log_->pread(position, MutableByteView(bytes, sizeof(bytes))));
  if (got < sizeof(bytes)) return corruption(log_path() + ": short read at byte " + std::to_string(position));
  Result<BatchHeader> header = parse_batch_header(ByteView(bytes, sizeof(bytes)));
  if (!header.ok())
    return corruption(log_path() + " at byte " + std::to_string(position) + ": " + header.status().message());
  if (header->size_bytes() > size_ - position) {
    return corruption(log_path() + ": batch at byte " + std::to_string(position) + " runs past the end");
  }
  return header;
}

Status Segment::index_batch(const BatchHeader& header, uint64_t position) {
  SLUICE_ASSERT(header.base_offset >= next_offset_);
  SLUICE_ASSERT(header.last_offset() - base_offset_ <= kMaxRelativeOffset);
  if (position == 0) first_batch_max_timestamp_ = header.max_timestamp;
  if (header.max_timestamp > max_timestamp_) {
    max_timestamp_ = header.max_timestamp;
    offset_of_max_timestamp_ = header.last_offset();
  }
  // Kafka's rule: an entry once more than index.interval.bytes were written since the last one. A full index
  // simply stops growing (the log rolls at the next append); a sparser index stays correct.
  if (bytes_since_index_entry_ > static_cast<uint64_t>(config_.index_interval_bytes) && !offset_index_->full() &&
      !time_index_->full()) {
    SLUICE_TRY(offset_index_->append(header.last_offset(), position));
    if (max_timestamp_ >= 0) SLUICE_TRY(time_index_->maybe_append(max_timestamp_, offset_of_max_timestamp_));
    bytes_since_index_entry_ = 0;
  }
  bytes_since_index_entry_ += header.size_bytes();
  next_offset_ = header.last_offset() + 1;
  return Status();
}

Status Segment::preallocate_for(uint64_t bytes, uint64_t preallocate_bytes) {
  if (preallocate_bytes == 0 || size_ + bytes <= allocated_) return Status();
  const uint64_t target = size_ + bytes + preallocate_bytes;
  const Status grown = log_->preallocate(target);
  if (grown.ok()) {
    allocated_ = target;
    return Status();
  }
  SLUICE_PROBE("segment.preallocate_failed");
  return cut_file_to(size_);  // whatever a failed preallocation left goes: the file ends where the data does
}

Status Segment::cut_file_to(uint64_t size) {
  SLUICE_ASSERT(size <= allocated_);
  ++writes_;
  allocated_ = size;  // even on failure: a file in doubt is never written past `size` on the belief it is longer
  return log_->truncate(size);
}

Status Segment::append(std::span<const ByteView> parts, std::span<const BatchSpan> spans, uint64_t preallocate_bytes) {
  SLUICE_ASSERT(!spans.empty());
  SLUICE_ASSERT(spans.front().header.base_offset >= next_offset_);
  SLUICE_ASSERT(size_ <= allocated_);
  size_t bytes = 0;
  for (const ByteView part : parts) bytes += part.size();
  SLUICE_ASSERT(spans.back().position + spans.back().header.size_bytes() == bytes);
  const uint64_t old_size = size_;
  const int64_t old_next = next_offset_;
  ++writes_;
  Status written = preallocate_for(bytes, preallocate_bytes);
  if (written.ok()) written = log_->pwrite_gathered(size_, parts);  // at size_: the file may end in zeros
  if (!written.ok()) return rollback(old_size, old_next, std::move(written));
  size_ += bytes;  // before the index entries, so that no entry ever points past size_
  allocated_ = std::max(allocated_, size_);
  for (const BatchSpan& span : spans) {
    SLUICE_ASSERT(span.header.base_offset >= next_offset_);
    Status indexed = index_batch(span.header, old_size + span.position);
    if (!indexed.ok()) return rollback(old_size, old_next, std::move(indexed));
  }
  SLUICE_ASSERT(next_offset_ == spans.back().header.last_offset() + 1);
  return Status();
}

Status Segment::rollback(uint64_t size, int64_t next_offset, Status cause) {
  size_ = size;
  next_offset_ = next_offset;
  Status undone = cut_file_to(size);  // also whatever a failed write or preallocation left past `size`
  if (undone.ok()) undone = offset_index_->truncate_to(next_offset);
  if (undone.ok()) undone = time_index_->truncate_to(next_offset);
  if (!undone.ok()) {
    return io_error(log_path() + ": " + cause.message() + "; rolling back failed too: " + undone.message());
  }
  return cause;
}

Status Segment::seal() {
  if (allocated_ > size_) SLUICE_TRY(cut_file_to(size_));
  if (max_timestamp_ < 0) return Status();
  ++writes_;
  // Past a full index too: Kafka's skipFullCheck, so the last entry always carries the max timestamp.
  return time_index_->maybe_append(max_timestamp_, offset_of_max_timestamp_, /*force=*/true);
}

Status Segment::flush() {
  const uint64_t writes = writes_;
  SLUICE_TRY(sync_log());
  SLUICE_TRY(sync_offset_index());
  SLUICE_TRY(sync_time_index());
  mark_synced(writes);
  return Status();
}

Status Segment::sync_log() { return log_->sync(); }
Status Segment::sync_offset_index() { return offset_index_->sync(); }
Status Segment::sync_time_index() { return time_index_->sync(); }

void Segment::mark_synced(uint64_t writes) {
  SLUICE_ASSERT(writes <= writes_);
  synced_writes_ = std::max(synced_writes_, writes);
}

Status Segment::reset_state() {
  ++writes_;
  SLUICE_TRY(offset_index_->reset());
  SLUICE_TRY(time_index_->reset());
  size_ = 0;
  next_offset_ = base_offset_;
  max_timestamp_ = -1;
  offset_of_max_timestamp_ = -1;
  first_batch_max_timestamp_ = -1;
  bytes_since_index_entry_ = 0;
  return Status();
}

namespace {

// One batch of a scan: header, size within the file, CRC, offsets increasing. Empty string when valid.
Result<std::string> check_batch(File& file, const std::string& name, uint64_t position, uint64_t file_bytes,
                                int64_t next_offset, int64_t base_offset, BatchHeader* header_out) {
  const std::string at = "byte " + std::to_string(position);
  if (file_bytes - position < kBatchHeaderBytes) return name + ": incomplete batch header at " + at;
  Bytes head(kBatchHeaderBytes);
  SLUICE_ASSIGN_OR_RETURN(size_t got, file.pread(position, head));
  if (got != head.size()) return name + ": short read at " + at;
  Result<BatchHeader> header = parse_batch_header(head);
  if (!header.ok()) return name + " at " + at + ": " + header.status().message();
  if (header->size_bytes() > file_bytes - position) return name + ": batch at " + at + " runs past the end";
  Bytes batch(header->size_bytes());
  SLUICE_ASSIGN_OR_RETURN(got, file.pread(position, batch));
  if (got != batch.size() || !batch_crc_ok(batch)) return name + ": CRC mismatch in the batch at " + at;
  if (header->base_offset < next_offset || header->last_offset() - base_offset > kMaxRelativeOffset) {
    return name + ": batch at " + at + " has offsets " + std::to_string(header->base_offset) + ".." +
           std::to_string(header->last_offset()) + ", expected from " + std::to_string(next_offset);
  }
  *header_out = *header;
  return std::string();
}

}  // namespace

Result<bool> only_zeros(File& file, uint64_t from, uint64_t to) {
  Bytes chunk(std::min<uint64_t>(to - from, 64 * 1024));
  for (uint64_t position = from; position < to;) {
    const MutableByteView part(chunk.data(), std::min<uint64_t>(chunk.size(), to - position));
    SLUICE_ASSIGN_OR_RETURN(const size_t got, file.pread(position, part));
    if (got != part.size()) return false;  // shorter than its size: not a preallocated tail either
    if (std::any_of(part.begin(), part.end(), [](uint8_t b) { return b != 0; })) return false;
    position += got;
  }
  return true;
}

Result<SegmentScan> scan_log_file(File& file, const std::string& name, int64_t base_offset,
                                  const std::function<Status(const BatchHeader&, uint64_t)>& on_batch) {
  SegmentScan scan;
  SLUICE_ASSIGN_OR_RETURN(scan.file_bytes, file.size());
  uint64_t position = 0;
  int64_t next_offset = base_offset;
  while (position < scan.file_bytes) {
    BatchHeader header;
    SLUICE_ASSIGN_OR_RETURN(scan.problem,
                            check_batch(file, name, position, scan.file_bytes, next_offset, base_offset, &header));
    if (!scan.problem.empty()) break;
    SLUICE_TRY(on_batch(header, position));
    next_offset = header.last_offset() + 1;
    position += header.size_bytes();
    ++scan.batches;
  }
  scan.valid_bytes = position;
  scan.next_offset = next_offset;
  if (!scan.clean()) {
    SLUICE_ASSIGN_OR_RETURN(scan.zero_tail, only_zeros(file, position, scan.file_bytes));
  }
  SLUICE_ASSERT(scan.valid_bytes <= scan.file_bytes);
  SLUICE_ASSERT(scan.next_offset >= base_offset);
  return scan;
}

// The checks are the ones append promises, re-done on disk input: any failure ends the valid prefix.
Result<SegmentScan> Segment::recover() {
  SLUICE_TRY(reset_state());
  SLUICE_ASSIGN_OR_RETURN(SegmentScan scan,
                          scan_log_file(*log_, log_path(), base_offset_, [this](const BatchHeader& h, uint64_t at) {
                            size_ = at + h.size_bytes();
                            return index_batch(h, at);
                          }));
  size_ = scan.valid_bytes;
  SLUICE_ASSERT(next_offset_ == scan.next_offset);
  SLUICE_VERIFY(offset_index_->consistent_with(size_, next_offset_));
  return scan;
}

Status Segment::truncate_file_to_valid() {
  SLUICE_ASSIGN_OR_RETURN(uint64_t file_bytes, log_->size());
  SLUICE_ASSERT(size_ <= file_bytes);
  allocated_ = file_bytes;
  return cut_file_to(size_);
}

// The indexes are taken as they are, so only the part after the last offset index entry is walked.
Status Segment::load_trusted() {
  if (!offset_index_->intact() || !time_index_->intact()) return corruption(index_path() + ": damaged index");
  if (offset_index_->last().position >= size_ && offset_index_->entry_count() > 0) {
    return corruption(index_path() + ": entry points past the end of the log");
  }
  SLUICE_TRY(walk_tail());
  if (!offset_index_->consistent_with(size_, next_offset_) || !time_index_->consistent_with(next_offset_)) {
    return corruption(index_path() + ": entries beyond the log's last offset");
  }
  if (time_index_->last().timestamp > max_timestamp_) {
    max_timestamp_ = time_index_->last().timestamp;
    offset_of_max_timestamp_ = time_index_->last().offset;
  }
  if (size_ > 0) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader first, header_at(0));
    first_batch_max_timestamp_ = first.max_timestamp;
  }
  return Status();
}

Status Segment::walk_tail() {
  const OffsetPosition start = offset_index_->last();
  uint64_t position = start.position;
  next_offset_ = base_offset_;
  max_timestamp_ = -1;
  offset_of_max_timestamp_ = -1;
  bytes_since_index_entry_ = 0;
  while (position < size_) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_at(position));
    if (header.base_offset < next_offset_) return corruption(log_path() + ": offsets go backwards");
    if (header.max_timestamp > max_timestamp_) {
      max_timestamp_ = header.max_timestamp;
      offset_of_max_timestamp_ = header.last_offset();
    }
    next_offset_ = header.last_offset() + 1;
    bytes_since_index_entry_ += header.size_bytes();
    position += header.size_bytes();
  }
  SLUICE_ASSERT(position == size_);
  return Status();
}

Status Segment::truncate_to(int64_t offset) {
  SLUICE_ASSERT(offset >= base_offset_);
  SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> position, find_position(offset));
  if (!position.has_value()) return Status();  // nothing at or above `offset`
  SLUICE_TRY(cut_file_to(*position));
  size_ = *position;
  SLUICE_TRY(offset_index_->truncate_to(offset));
  SLUICE_TRY(time_index_->truncate_to(offset));
  SLUICE_TRY(walk_tail());
  if (time_index_->last().timestamp > max_timestamp_) {
    max_timestamp_ = time_index_->last().timestamp;
    offset_of_max_timestamp_ = time_index_->last().offset;
  }
  if (size_ == 0) first_batch_max_timestamp_ = -1;
  SLUICE_ASSERT(next_offset_ <= offset || size_ == 0);
  return Status();
}

Status Segment::rename_files(std::string_view suffix) {
  SLUICE_ASSERT(suffix_.empty());
  const std::string from[] = {log_path(), index_path(), time_index_path()};
  suffix_ = std::string(suffix);
  const std::string to[] = {log_path(), index_path(), time_index_path()};
  for (size_t i = 0; i < 3; ++i) SLUICE_TRY(env_.fs.rename(from[i], to[i]));
  return Status();
}

Status Segment::close() {
  SLUICE_TRY(offset_index_->close());
  SLUICE_TRY(time_index_->close());
  return log_->close();
}

Result<std::optional<uint64_t>> Segment::find_position(int64_t target) const {
  if (target >= next_offset_) return std::optional<uint64_t>();
  uint64_t position = offset_index_->lookup(target).position;
  while (position < size_) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_at(position));
    if (header.last_offset() >= target) return std::optional<uint64_t>(position);
    position += header.size_bytes();
  }
  return std::optional<uint64_t>();
}

Result<Bytes> Segment::read(uint64_t position, size_t max_bytes, int64_t upper_bound_offset) const {
  SLUICE_ASSERT(position <= size_);
  uint64_t end = position;
  while (end < size_) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_at(end));
    if (header.last_offset() >= upper_bound_offset) break;
    const bool first = end == position;
    if (!first && end - position + header.size_bytes() > max_bytes) break;
    end += header.size_bytes();
  }
  Bytes out(end - position);
  SLUICE_ASSIGN_OR_RETURN(size_t got, log_->pread(position, out));
  if (got != out.size()) return corruption(log_path() + ": short read at byte " + std::to_string(position));
  SLUICE_TRY(verify_read(out, position));
  return out;
}

// Bytes about to be served must be what was appended: a latent sector error or a misdirected write in sealed data
// is caught here (recovery scans only from the recovery point on), and refused loudly instead of served. CRC32C
// runs at tens of GB/s here, a small share of the copy the read already made.
Status Segment::verify_read(ByteView bytes, uint64_t position) const {
  for (size_t at = 0; at < bytes.size();) {
    Result<BatchHeader> header = parse_batch_header(bytes.subspan(at));
    const bool whole = header.ok() && at + header->size_bytes() <= bytes.size();
    if (whole && batch_crc_ok(bytes.subspan(at, header->size_bytes()))) {
      at += header->size_bytes();
      continue;
    }
    SLUICE_PROBE("segment.read_damage_refused");
    return Status(Code::kCorruption,
                  log_path() + ": the batch at byte " + std::to_string(position + at) +
                      (header.ok() ? " (offset " + std::to_string(header->base_offset) + ")" : "") +
                      " fails its CRC on read; it is not served. Run `sluice log repair " + dir_ +
                      "` to truncate there (the data from that batch on is lost)",
                  wire_code(ErrorCode::kKafkaStorageError));
  }
  return Status::ok_status();
}

Result<std::optional<TimestampOffset>> Segment::find_offset_for_timestamp(int64_t target, int64_t min_offset) const {
  if (max_timestamp_ < target || next_offset_ <= min_offset) return std::optional<TimestampOffset>();
  // Every record up to the entry's offset is older than target, so the search starts after it.
  const TimestampOffset below = time_index_->lookup_below(target);
  const int64_t from = std::max(below.offset, min_offset);
  SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> start, find_position(from));
  if (!start.has_value()) return std::optional<TimestampOffset>();
  for (uint64_t position = *start; position < size_;) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_at(position));
    if (header.max_timestamp >= target && header.last_offset() >= min_offset) {
      Bytes batch(header.size_bytes());
      SLUICE_ASSIGN_OR_RETURN(size_t got, log_->pread(position, batch));
      if (got != batch.size()) return corruption(log_path() + ": short read");
      SLUICE_ASSIGN_OR_RETURN(auto found, first_record_at_or_after(batch, header, target, min_offset));
      if (found.has_value()) return found;
    }
    position += header.size_bytes();
  }
  return std::optional<TimestampOffset>();
}

namespace {

// Kafka's zigzag varint (varlong when up to 10 bytes). False when truncated or too long.
bool read_varlong(ByteView in, size_t& at, int64_t& out) {
  uint64_t raw = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= in.size()) return false;
    const uint8_t byte = in[at++];
    raw |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      out = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
      return true;
    }
  }
  return false;
}

}  // namespace

Result<std::optional<TimestampOffset>> first_record_at_or_after(ByteView batch, const BatchHeader& header,
                                                                int64_t target, int64_t min_offset) {
  if (header.max_timestamp < target || header.last_offset() < min_offset) return std::optional<TimestampOffset>();
  const int64_t first = std::max(header.base_offset, min_offset);
  if (header.log_append_time()) {
    return std::optional<TimestampOffset>(TimestampOffset{header.max_timestamp, first});
  }
  if (header.compression() != Compression::kNone) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<Record> records, decode_records(batch));
    for (const Record& record : records) {
      if (record.offset >= min_offset && record.timestamp >= target) {
        return std::optional<TimestampOffset>(TimestampOffset{record.timestamp, record.offset});
      }
    }
    return std::optional<TimestampOffset>();
  }
  size_t at = kBatchHeaderBytes;
  for (int32_t i = 0; i < header.record_count; ++i) {
    int64_t length = 0;
    int64_t timestamp_delta = 0;
    int64_t offset_delta = 0;
    if (!read_varlong(batch, at, length) || length < 1 || static_cast<uint64_t>(length) > batch.size() - at) {
      return corruption("record " + std::to_string(i) + " of the batch at offset " +
                        std::to_string(header.base_offset) + " is malformed");
    }
    const size_t next = at + static_cast<size_t>(length);
    ++at;  // attributes
    if (!read_varlong(batch, at, timestamp_delta) || !read_varlong(batch, at, offset_delta) || at > next) {
      return corruption("record " + std::to_string(i) + " of the batch at offset " +
                        std::to_string(header.base_offset) + " is malformed");
    }
    const int64_t offset = header.base_offset + offset_delta;
    const int64_t timestamp = header.base_timestamp + timestamp_delta;
    if (offset >= min_offset && timestamp >= target) {
      return std::optional<TimestampOffset>(TimestampOffset{timestamp, offset});
    }
    at = next;
  }
  return std::optional<TimestampOffset>();
}

}  // namespace sluice::storage
