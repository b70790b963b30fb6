#include "core/raft/file_raft_log.h"

#include <algorithm>
#include <utility>

#include "core/base/assert.h"
#include "core/base/crc32c.h"
#include "core/raft/little_endian.h"

namespace sluice::raft {

namespace {

// The CRC covers everything after its own field: length, term and payload.
uint32_t record_crc(ByteView header, ByteView payload) {
  SLUICE_ASSERT(header.size() == kRaftRecordHeaderBytes);
  return crc32c_extend(crc32c(header.subspan(4)), payload);
}

}  // namespace

void encode_raft_record(const Entry& entry, Bytes& out) {
  SLUICE_ASSERT(entry.payload.size() <= kRaftPayloadBytesMax);
  const size_t start = out.size();
  put_u32_le(out, 0);  // the CRC, filled in below
  put_u32_le(out, static_cast<uint32_t>(entry.payload.size()));
  put_u64_le(out, entry.term);
  const ByteView payload = as_bytes(entry.payload);
  out.insert(out.end(), payload.begin(), payload.end());
  const ByteView record(out.data() + start, out.size() - start);
  const uint32_t crc = record_crc(record.first(kRaftRecordHeaderBytes), record.subspan(kRaftRecordHeaderBytes));
  for (int i = 0; i < 4; ++i) out[start + static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (8 * i));
  SLUICE_ASSERT(out.size() - start == kRaftRecordHeaderBytes + entry.payload.size());
}

Result<std::unique_ptr<FileRaftLog>> FileRaftLog::open(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kCreate));
  // A created file's name is durable only once its directory is synced; without it a power loss could forget
  // the whole log after entries in it were synced.
  SLUICE_TRY(fs.sync_dir(parent_dir(path)));
  std::unique_ptr<FileRaftLog> log(new FileRaftLog(std::move(file), path));
  SLUICE_TRY(log->recover());
  return log;
}

Status FileRaftLog::recover() {
  SLUICE_ASSERT(records_.empty());
  SLUICE_ASSERT(end_offset_ == 0);
  SLUICE_ASSIGN_OR_RETURN(const uint64_t size, file_->size());
  Term previous_term = 0;
  while (end_offset_ < size) {
    Result<Record> record = scan_record(end_offset_, size, previous_term);
    if (!record.ok()) {
      if (record.status().code() != Code::kCorruption) return std::move(record).take_status();
      break;  // a torn or damaged tail: everything from here is cut
    }
    SLUICE_ASSERT(record->offset == end_offset_);
    records_.push_back(*record);
    previous_term = record->term;
    end_offset_ += kRaftRecordHeaderBytes + record->length;
  }
  SLUICE_ASSERT(end_offset_ <= size);
  recovery_ = {.entries = records_.size(), .bytes_kept = end_offset_, .bytes_cut = size - end_offset_};
  if (end_offset_ < size) {
    SLUICE_PROBE("raft_log_tail_cut");
    SLUICE_TRY(file_->truncate(end_offset_));
  }
  // What was read may be only in the page cache (a process crash, not a power loss): it is durable once synced.
  SLUICE_TRY(file_->sync());
  durable_index_ = last_index();
  check_invariants();
  return Status();
}

Result<FileRaftLog::Record> FileRaftLog::scan_record(uint64_t offset, uint64_t size, Term previous_term) {
  SLUICE_ASSERT(offset < size);
  Bytes header(kRaftRecordHeaderBytes);
  if (size - offset < header.size()) return corruption(path_ + ": incomplete record header");
  SLUICE_ASSIGN_OR_RETURN(const size_t got, file_->pread(offset, header));
  if (got != header.size()) return corruption(path_ + ": short header read");
  const Record record{.offset = offset, .length = get_u32_le(header, 4), .term = get_u64_le(header, 8)};
  if (record.length > kRaftPayloadBytesMax) return corruption(path_ + ": record length out of range");
  if (size - offset - header.size() < record.length) return corruption(path_ + ": record runs past the end");
  Bytes payload(record.length);
  SLUICE_ASSIGN_OR_RETURN(const size_t got_payload, file_->pread(offset + header.size(), payload));
  if (got_payload != payload.size()) return corruption(path_ + ": short payload read");
  if (record_crc(header, payload) != get_u32_le(header, 0)) return corruption(path_ + ": record CRC mismatch");
  // A raft log's terms never decrease; a record that breaks that was not written by this log in this place.
  if (record.term < previous_term) return corruption(path_ + ": record term decreases");
  return record;
}

Term FileRaftLog::term_at(Index index) const {
  SLUICE_ASSERT(index <= last_index());
  return index == 0 ? 0 : records_[index - 1].term;
}

void FileRaftLog::append(Index at, std::span<const Entry> entries) {
  SLUICE_ASSERT(at == last_index() + 1);
  SLUICE_ASSERT(!entries.empty());
  const Index durable_before = durable_index_;
  const uint64_t end_before = end_offset_;
  Term previous = term_at(at - 1);
  for (const Entry& entry : entries) {
    SLUICE_ASSERT(entry.term >= previous);
    SLUICE_ASSERT(entry.payload.size() <= kRaftPayloadBytesMax);
    previous = entry.term;
  }
  if (!failed()) fail(write_records(entries));
  if (failed()) {
    // Kept in memory so the state machine sees the append it made; never on disk, never durable.
    for (const Entry& entry : entries) {
      records_.push_back(Record{.offset = kUnwritten, .length = 0, .term = entry.term});
    }
    end_offset_ = end_before;
  }
  SLUICE_ASSERT(last_index() == at + entries.size() - 1);
  SLUICE_ASSERT(durable_index_ == durable_before);
  check_invariants();
}

// One append for the whole batch; the records are indexed only once the file has them.
Status FileRaftLog::write_records(std::span<const Entry> entries) {
  SLUICE_ASSERT(!failed());
  Bytes buffer;
  for (const Entry& entry : entries) encode_raft_record(entry, buffer);
  SLUICE_TRY(file_->append(buffer));
  uint64_t offset = end_offset_;
  for (const Entry& entry : entries) {
    records_.push_back(Record{.offset = offset, .length = static_cast<uint32_t>(entry.payload.size()),
                              .term = entry.term});
    offset += kRaftRecordHeaderBytes + entry.payload.size();
  }
  SLUICE_ASSERT(offset == end_offset_ + buffer.size());
  end_offset_ = offset;
  return Status();
}

void FileRaftLog::truncate_suffix(Index from) {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  const Record& first_cut = records_[from - 1];
  if (!failed()) {
    SLUICE_ASSERT(first_cut.offset != kUnwritten);
    SLUICE_ASSERT(first_cut.offset < end_offset_);
    // Synced at once: otherwise a power loss could keep records appended after the cut while losing the cut
    // itself, splicing new entries into the old suffix (a real file system may reorder the two).
    Status cut = file_->truncate(first_cut.offset);
    if (cut.ok()) cut = file_->sync();
    if (cut.ok()) end_offset_ = first_cut.offset;
    fail(std::move(cut));
  }
  records_.resize(from - 1);
  durable_index_ = std::min(durable_index_, from - 1);
  SLUICE_ASSERT(last_index() == from - 1);
  check_invariants();
}

std::vector<Entry> FileRaftLog::read(Index from, size_t max_count) const {
  Result<std::vector<Entry>> entries = read_checked(from, max_count);
  if (!entries.ok()) {
    fail(std::move(entries).take_status());
    return {};
  }
  return std::move(entries).value();
}

Result<std::vector<Entry>> FileRaftLog::read_checked(Index from, size_t max_count) const {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  SLUICE_ASSERT(max_count > 0);
  if (failed()) return failure_;
  const Index end = std::min<Index>(last_index() + 1, from + max_count);
  const Record& first = records_[from - 1];
  const Record& last = records_[end - 2];
  SLUICE_ASSERT(first.offset != kUnwritten);
  SLUICE_ASSERT(last.offset != kUnwritten);
  SLUICE_ASSERT(last.offset >= first.offset);
  // The records of a range are back to back: one pread for all of them.
  Bytes buffer(last.offset + kRaftRecordHeaderBytes + last.length - first.offset);
  SLUICE_ASSIGN_OR_RETURN(const size_t got, file_->pread(first.offset, buffer));
  if (got != buffer.size()) return corruption(path_ + ": log shorter than its index");
  std::vector<Entry> entries;
  entries.reserve(end - from);
  for (Index index = from; index < end; ++index) {
    const Record& record = records_[index - 1];
    const ByteView bytes = ByteView(buffer).subspan(record.offset - first.offset);
    const ByteView header = bytes.first(kRaftRecordHeaderBytes);
    const ByteView payload = bytes.subspan(kRaftRecordHeaderBytes, record.length);
    // What was written must read back unchanged; a difference is the disk's fault, reported, never asserted.
    if (get_u32_le(header, 4) != record.length || get_u64_le(header, 8) != record.term ||
        record_crc(header, payload) != get_u32_le(header, 0)) {
      return corruption(path_ + ": entry " + std::to_string(index) + " does not read back as written");
    }
    entries.push_back(Entry{.term = record.term, .payload = std::string(as_chars(payload))});
  }
  SLUICE_ASSERT(entries.size() == end - from);
  return entries;
}

Status FileRaftLog::sync() {
  if (failed()) return failure_;
  const Index last = last_index();
  // fsyncgate: after a failed fdatasync the kernel may have dropped the dirty pages and a retry can succeed
  // without writing them, so a failed sync is final.
  fail(file_->sync());
  if (failed()) return failure_;
  SLUICE_ASSERT(last == last_index());
  durable_index_ = last;
  check_invariants();
  return Status();
}

void FileRaftLog::fail(Status error) const {
  if (error.ok() || failed()) return;
  SLUICE_PROBE("raft_log_poisoned");
  failure_ = std::move(error);
}

void FileRaftLog::check_invariants() const {
  SLUICE_ASSERT(durable_index_ <= last_index());
  if (records_.empty()) {
    if (!failed()) SLUICE_ASSERT(end_offset_ == 0);
    return;
  }
  const Record& last = records_.back();
  if (last.offset == kUnwritten) SLUICE_ASSERT(failed());
  // Once failed, the file is no longer what the index says (a write or a cut may have half happened).
  if (failed()) return;
  SLUICE_ASSERT(last.offset + kRaftRecordHeaderBytes + last.length == end_offset_);
  SLUICE_VERIFY(std::is_sorted(records_.begin(), records_.end(),
                               [](const Record& a, const Record& b) { return a.term < b.term; }));
}

}  // namespace sluice::raft
