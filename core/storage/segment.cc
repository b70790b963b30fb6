#include "core/storage/segment.h"

#include <algorithm>

#include "core/base/assert.h"
#include "core/storage/agreeing_reads.h"
#include "core/storage/log_format.h"

namespace sluice::storage {

Segment::Segment(Env env, std::string dir, int64_t base_offset, const SegmentConfig& config)
    : env_(env),
      dir_(std::move(dir)),
      base_offset_(base_offset),
      config_(config),
      cache_(config.file_cache),
      next_offset_(base_offset) {
  SLUICE_ASSERT(base_offset_ >= 0);
  SLUICE_ASSERT(config_.index_interval_bytes >= 0);
  if (cache_ != nullptr) {
    cache_key_ = cache_->new_key();
    offset_index_key_ = cache_->new_key();
    time_index_key_ = cache_->new_key();
  }
  created_at_ = env_.clock.now();
}

Segment::~Segment() { forget_cached_files(); }

void Segment::forget_cached_files() {
  if (cache_ == nullptr) return;
  cache_->forget(cache_key_);
  cache_->forget(offset_index_key_);
  cache_->forget(time_index_key_);
}

void Segment::release_files() {
  if (cache_ == nullptr || !files_open()) return;
  SLUICE_ASSERT(!cutting());
  SLUICE_PROBE("segment.files_released");
  log_.reset();
  offset_index_->release_file();
  time_index_->release_file();
  // A sealed segment's indexes were loaded whole or rebuilt by its recovery; either way intact.
  SLUICE_ASSERT(offset_index_->intact() && time_index_->intact());
  offset_index_->release_entries();
  time_index_->release_entries();
  SLUICE_ASSERT(!files_open());
}

Status Segment::ensure_open() {
  if (files_open() && offset_index_->entries_loaded() && time_index_->entries_loaded()) return Status();
  SLUICE_PROBE("segment.files_reopened");
  if (log_ == nullptr) {
    SLUICE_ASSIGN_OR_RETURN(log_, env_.fs.open(log_path(), OpenMode::kReadWrite));
  }
  SLUICE_TRY(offset_index_->reopen_file());
  SLUICE_TRY(time_index_->reopen_file());
  SLUICE_TRY(offset_index_->reload_entries());
  SLUICE_TRY(time_index_->reload_entries());
  SLUICE_ASSERT(cache_ != nullptr);
  forget_cached_files();  // its own handles from now on: the cache's would be second descriptors
  SLUICE_ASSERT(files_open());
  SLUICE_ASSERT(offset_index_->entries_loaded() && time_index_->entries_loaded());
  return Status();
}

Result<std::shared_ptr<File>> Segment::log_file() const {
  if (log_ != nullptr) return log_;
  SLUICE_ASSERT(cache_ != nullptr);
  return cache_->acquire(cache_key_, log_path());
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
  SLUICE_ASSERT(config.file_cache == cache_);
  config_ = config;
  offset_index_->set_max_index_bytes(config.index_bytes);
  time_index_->set_max_index_bytes(config.index_bytes);
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
  SLUICE_ASSERT(files_open());
  CutScope cut(*this);
  ++writes_;
  position_hints_.forget_all();
  allocated_ = size;  // even on failure: a file in doubt is never written past `size` on the belief it is longer
  return log_->truncate(size);
}

Status Segment::append(std::span<const ByteView> parts, std::span<const BatchSpan> spans, uint64_t preallocate_bytes) {
  SLUICE_ASSERT(!spans.empty());
  SLUICE_ASSERT(spans.front().header.base_offset >= next_offset_);
  SLUICE_ASSERT(size_ <= allocated_);
  SLUICE_TRY(ensure_open());
  size_t bytes = 0;
  for (const ByteView part : parts) bytes += part.size();
  SLUICE_ASSERT(spans.back().position + spans.back().header.size_bytes() == bytes);
  const uint64_t old_size = size_;
  const int64_t old_next = next_offset_;
  ++writes_;
  Status written = preallocate_for(bytes, preallocate_bytes);
  if (written.ok()) written = log_->pwrite_gathered(size_, parts);  // at size_: the file may end in zeros
  if (!written.ok()) return rollback(old_size, old_next, std::move(written));
  // A reader may run while the index writes below wait: it sees the new size_ with the next offset it goes with.
  appending_next_offset_ = spans.back().header.last_offset() + 1;
  size_ += bytes;  // before the index entries, so that no entry ever points past size_
  allocated_ = std::max(allocated_, size_);
  for (const BatchSpan& span : spans) {
    SLUICE_ASSERT(span.header.base_offset >= next_offset_);
    Status indexed = index_batch(span.header, old_size + span.position);
    if (!indexed.ok()) {
      appending_next_offset_ = 0;
      return rollback(old_size, old_next, std::move(indexed));
    }
  }
  appending_next_offset_ = 0;
  SLUICE_ASSERT(next_offset_ == spans.back().header.last_offset() + 1);
  return Status();
}

Status Segment::rollback(uint64_t size, int64_t next_offset, Status cause) {
  CutScope cut(*this);
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
  SLUICE_TRY(ensure_open());
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

Status Segment::sync_log() {
  SLUICE_ASSIGN_OR_RETURN(const std::shared_ptr<File> log, log_file());
  return log->sync();
}
Status Segment::sync_offset_index() { return offset_index_->sync(); }
Status Segment::sync_time_index() { return time_index_->sync(); }

void Segment::mark_synced(uint64_t writes) {
  SLUICE_ASSERT(writes <= writes_);
  synced_writes_ = std::max(synced_writes_, writes);
}

Status Segment::reset_state() {
  SLUICE_TRY(ensure_open());
  ++writes_;
  position_hints_.forget_all();
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
  SLUICE_TRY(reset_state());  // opens the files
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
  SLUICE_TRY(ensure_open());
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
    // Time retention goes by this timestamp: it is believed when a second read agrees.
    SLUICE_ASSIGN_OR_RETURN(BatchHeader first, header_at(0));
    SLUICE_ASSIGN_OR_RETURN(BatchHeader again, header_at(0));
    if (first.max_timestamp != again.max_timestamp || first.base_offset != again.base_offset) {
      return corruption(log_path() + ": two reads of the first batch header disagree");
    }
    first_batch_max_timestamp_ = first.max_timestamp;
  }
  return Status();
}

Status Segment::walk_tail() {
  SLUICE_ASSIGN_OR_RETURN(
      const TailWalk tail,
      read_until_two_agree<TailWalk>(
          4, log_path() + ": the walk of the tail", [this] { return walk_tail_once(); },
          [] { SLUICE_PROBE("segment.tail_walks_disagreed"); }));
  next_offset_ = tail.next_offset;
  max_timestamp_ = tail.max_timestamp;
  offset_of_max_timestamp_ = tail.offset_of_max_timestamp;
  bytes_since_index_entry_ = tail.bytes_since_index_entry;
  return Status();
}

Result<Segment::TailWalk> Segment::walk_tail_once() const {
  const OffsetPosition start = offset_index_->last();
  uint64_t position = start.position;
  TailWalk tail{base_offset_, -1, -1, 0};
  HeaderWindow window;
  while (position < size_) {
    SLUICE_ASSIGN_OR_RETURN(BatchHeader header, header_in(window, position));
    if (header.base_offset < tail.next_offset) return corruption(log_path() + ": offsets go backwards");
    if (header.max_timestamp > tail.max_timestamp) {
      tail.max_timestamp = header.max_timestamp;
      tail.offset_of_max_timestamp = header.last_offset();
    }
    tail.next_offset = header.last_offset() + 1;
    tail.bytes_since_index_entry += header.size_bytes();
    position += header.size_bytes();
  }
  SLUICE_ASSERT(position == size_);
  return tail;
}

Status Segment::truncate_to(int64_t offset) {
  SLUICE_ASSERT(offset >= base_offset_);
  SLUICE_TRY(ensure_open());
  CutScope cut(*this);  // the .log, both indexes and the tail walk: readers see none of it half done
  SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> position, find_position(offset));
  if (!position.has_value()) return Status();  // nothing at or above `offset`
  // The walk read each header once: the batch it stopped at must hold `offset` or later in a fresh read too, or a
  // damaged copy would cut batches below it.
  SLUICE_ASSIGN_OR_RETURN(const BatchHeader at, header_at(*position));
  if (at.last_offset() < offset) {
    return corruption(log_path() + ": the batch at byte " + std::to_string(*position) + " ends at offset " +
                      std::to_string(at.last_offset()) + ", before " + std::to_string(offset) +
                      ", where a header walk placed it; nothing was cut");
  }
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
  // A closed segment reopens by name: its indexes follow each rename (an open handle, cached or its own, stays valid).
  SLUICE_TRY(env_.fs.rename(from[0], to[0]));
  SLUICE_TRY(env_.fs.rename(from[1], to[1]));
  offset_index_->set_path(to[1]);
  SLUICE_TRY(env_.fs.rename(from[2], to[2]));
  time_index_->set_path(to[2]);
  return Status();
}

Status Segment::close() {
  forget_cached_files();
  SLUICE_TRY(offset_index_->close());
  SLUICE_TRY(time_index_->close());
  return log_ != nullptr ? log_->close() : Status();
}

}  // namespace sluice::storage
