#include "core/raft/file_raft_log.h"

#include <algorithm>
#include <utility>

#include "core/base/assert.h"
#include "core/base/crc32c.h"
#include "core/raft/little_endian.h"

namespace sluice::raft {

namespace {

// The CRC covers everything after its own field: length, term, count and payload.
uint32_t record_crc(ByteView header, ByteView payload) {
  SLUICE_ASSERT(header.size() == kRaftRecordHeaderBytes);
  return crc32c_extend(crc32c(header.subspan(4)), payload);
}

}  // namespace

void encode_raft_record(const Entry& entry, Bytes& out) {
  SLUICE_ASSERT(entry.payload.size() <= kRaftPayloadBytesMax);
  SLUICE_ASSERT(entry.count >= 1);
  SLUICE_ASSERT(entry.count <= kEntryCountMax);
  const size_t start = out.size();
  put_u32_le(out, 0);  // the CRC, filled in below
  put_u32_le(out, static_cast<uint32_t>(entry.payload.size()));
  put_u64_le(out, entry.term);
  put_u32_le(out, static_cast<uint32_t>(entry.count));
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

// How many reads recovery makes of what fails a check before it believes the failure.
constexpr int kRecoveryReads = 4;

Status FileRaftLog::recover() {
  SLUICE_ASSERT(records_.empty());
  SLUICE_ASSERT(end_offset_ == 0);
  SLUICE_ASSIGN_OR_RETURN(uint64_t size, file_->size());
  SLUICE_TRY(open_header(size));
  SLUICE_ASSIGN_OR_RETURN(size, file_->size());
  SLUICE_ASSERT(size >= kRaftLogFileHeaderBytes);
  end_offset_ = kRaftLogFileHeaderBytes;
  Term previous_term = 0;
  while (end_offset_ < size) {
    Result<Record> record = scan_record(end_offset_, size, previous_term, last_index() + 1);
    // A bad copy of a good record must not cut it and what follows (acknowledged entries): a record that fails is
    // read again, and only one that fails every read is the torn tail.
    for (int attempt = 2; attempt <= kRecoveryReads && !record.ok() && record.status().code() == Code::kCorruption;
         ++attempt) {
      record = scan_record(end_offset_, size, previous_term, last_index() + 1);
      if (record.ok()) SLUICE_PROBE("raft_log.damaged_record_read_again");
    }
    if (!record.ok()) {
      if (record.status().code() != Code::kCorruption) return std::move(record).take_status();
      break;  // a torn or damaged tail: everything from here is cut
    }
    SLUICE_ASSERT(record->offset == end_offset_);
    SLUICE_ASSERT(record->first == last_index() + 1);
    records_.push_back(*record);
    previous_term = record->term;
    end_offset_ += kRaftRecordHeaderBytes + record->length;
  }
  SLUICE_ASSERT(end_offset_ <= size);
  recovery_ = {.entries = records_.size(), .last_index = last_index(), .bytes_kept = end_offset_,
               .bytes_cut = size - end_offset_};
  if (end_offset_ < size) {
    SLUICE_PROBE("raft_log_tail_cut");
    SLUICE_TRY(file_->truncate(end_offset_));
  }
  // What was read may be only in the page cache (a process crash, not a power loss): it is durable once synced.
  // For a new file this also makes its header durable before any record can be.
  SLUICE_TRY(file_->sync());
  durable_index_ = last_index();
  check_invariants();
  return Status();
}

Status FileRaftLog::open_header(uint64_t size) {
  if (size < kRaftLogFileHeaderBytes) {
    // A new file, or one whose creation a power loss tore before its header was synced (nothing else can have been
    // written behind an incomplete header).
    if (size > 0) {
      SLUICE_PROBE("raft_log_header_torn");
      SLUICE_TRY(file_->truncate(0));
    }
    Bytes header;
    put_u32_le(header, kRaftLogMagic);
    put_u32_le(header, kRaftLogFormatVersion);
    SLUICE_ASSERT(header.size() == kRaftLogFileHeaderBytes);
    return file_->append(header);
  }
  Bytes header(kRaftLogFileHeaderBytes);
  SLUICE_ASSIGN_OR_RETURN(size_t got, file_->pread(0, header));
  // A bad copy of the magic or the version is read again before either is believed.
  for (int attempt = 2; attempt <= kRecoveryReads && got == header.size() &&
                        (get_u32_le(header, 0) != kRaftLogMagic || get_u32_le(header, 4) != kRaftLogFormatVersion);
       ++attempt) {
    SLUICE_ASSIGN_OR_RETURN(got, file_->pread(0, header));
  }
  if (got != header.size()) return corruption(path_ + ": short file header read");
  if (get_u32_le(header, 0) != kRaftLogMagic) {
    return corruption(path_ + ": not a raft log (bad magic; format 1 logs, which had none, are not readable)");
  }
  if (const uint32_t version = get_u32_le(header, 4); version != kRaftLogFormatVersion) {
    return Status(Code::kNotSupported, path_ + ": raft log format " + std::to_string(version) + " (this node reads " +
                                           std::to_string(kRaftLogFormatVersion) + ")");
  }
  return Status();
}

Result<FileRaftLog::Record> FileRaftLog::scan_record(uint64_t offset, uint64_t size, Term previous_term, Index first) {
  SLUICE_ASSERT(offset < size);
  SLUICE_ASSERT(first >= 1);
  Bytes header(kRaftRecordHeaderBytes);
  if (size - offset < header.size()) return corruption(path_ + ": incomplete record header");
  SLUICE_ASSIGN_OR_RETURN(const size_t got, file_->pread(offset, header));
  if (got != header.size()) return corruption(path_ + ": short header read");
  const Record record{.first = first,
                      .count = get_u32_le(header, 16),
                      .length = get_u32_le(header, 4),
                      .offset = offset,
                      .term = get_u64_le(header, 8)};
  if (record.length > kRaftPayloadBytesMax) return corruption(path_ + ": record length out of range");
  if (size - offset - header.size() < record.length) return corruption(path_ + ": record runs past the end");
  Bytes payload(record.length);
  SLUICE_ASSIGN_OR_RETURN(const size_t got_payload, file_->pread(offset + header.size(), payload));
  if (got_payload != payload.size()) return corruption(path_ + ": short payload read");
  if (record_crc(header, payload) != get_u32_le(header, 0)) return corruption(path_ + ": record CRC mismatch");
  // A CRC-valid record with no indexes was not written by this log: every entry covers at least one.
  if (record.count == 0) return corruption(path_ + ": record covers no index");
  // A raft log's terms never decrease; a record that breaks that was not written by this log in this place.
  if (record.term < previous_term) return corruption(path_ + ": record term decreases");
  return record;
}

Index FileRaftLog::last_index() const { return records_.empty() ? 0 : records_.back().last(); }

size_t FileRaftLog::position_of(Index index) const {
  SLUICE_ASSERT(index >= 1);
  SLUICE_ASSERT(index <= last_index());
  // Most lookups are of the last entry (the state machine's last term, the append path).
  if (index >= records_.back().first) return records_.size() - 1;
  const auto after = std::upper_bound(records_.begin(), records_.end(), index,
                                      [](Index i, const Record& record) { return i < record.first; });
  SLUICE_ASSERT(after != records_.begin());
  const auto position = static_cast<size_t>(after - records_.begin()) - 1;
  SLUICE_ASSERT(records_[position].first <= index);
  SLUICE_ASSERT(index <= records_[position].last());
  return position;
}

Term FileRaftLog::term_at(Index index) const {
  SLUICE_ASSERT(index <= last_index());
  return index == 0 ? 0 : records_[position_of(index)].term;
}

Index FileRaftLog::entry_start(Index index) const { return records_[position_of(index)].first; }

void FileRaftLog::append(Index at, std::span<const Entry> entries) {
  SLUICE_ASSERT(at == last_index() + 1);
  SLUICE_ASSERT(!entries.empty());
  const Index durable_before = durable_index_;
  const uint64_t end_before = end_offset_;
  Term previous = term_at(at - 1);
  for (const Entry& entry : entries) {
    SLUICE_ASSERT(entry.term >= previous);
    SLUICE_ASSERT(entry.count >= 1);
    SLUICE_ASSERT(entry.count <= kEntryCountMax);
    SLUICE_ASSERT(entry.payload.size() <= kRaftPayloadBytesMax);
    previous = entry.term;
  }
  if (!failed()) {
    Status written = write_records(entries);
    append_refused_for_space_ = written.code() == Code::kNoSpace;
    fail(std::move(written));
  }
  if (failed()) {
    // Kept in memory so the state machine sees the append it made; never on disk, never durable.
    for (const Entry& entry : entries) {
      records_.push_back(Record{.first = last_index() + 1, .count = static_cast<uint32_t>(entry.count), .length = 0,
                                .offset = kUnwritten, .term = entry.term});
    }
    end_offset_ = end_before;
  }
  SLUICE_ASSERT(last_index() == at + span_of(entries) - 1);
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
    records_.push_back(Record{.first = last_index() + 1,
                              .count = static_cast<uint32_t>(entry.count),
                              .length = static_cast<uint32_t>(entry.payload.size()),
                              .offset = offset,
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
  const size_t position = position_of(from);
  const Record& first_cut = records_[position];
  SLUICE_ASSERT_MSG(first_cut.first == from, "a truncation starts at an entry start");
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
  records_.resize(position);
  durable_index_ = std::min(durable_index_, from - 1);
  SLUICE_ASSERT(last_index() == from - 1);
  check_invariants();
}

// A read that does not come back as written is read again before it is believed: a device or its path can hand
// back one bad copy of good bytes, and poisoning the log on it would take the group offline for a transient fault.
// Lasting damage fails every attempt.
std::vector<Entry> FileRaftLog::read(Index from, size_t max_count, uint64_t max_bytes) const {
  constexpr int kAttempts = 4;
  Result<std::vector<Entry>> entries = read_checked(from, max_count, max_bytes);
  for (int attempt = 2; attempt <= kAttempts && !failed() && !entries.ok() &&
                        entries.status().code() == Code::kCorruption;
       ++attempt) {
    SLUICE_PROBE("raft_log.read_again_after_damage");
    entries = read_checked(from, max_count, max_bytes);
  }
  if (!entries.ok()) {
    fail(std::move(entries).take_status());
    return {};
  }
  return std::move(entries).value();
}

Result<std::vector<Entry>> FileRaftLog::read_checked(Index from, size_t max_count, uint64_t max_bytes) const {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  SLUICE_ASSERT(max_count > 0);
  if (failed()) return failure_;
  const size_t begin = position_of(from);
  SLUICE_ASSERT_MSG(records_[begin].first == from, "a read starts at an entry start");
  // The records to read: at least one, then while the count and payload limits allow.
  size_t end = begin + 1;
  uint64_t bytes = records_[begin].length;
  while (end < records_.size() && end - begin < max_count && bytes + records_[end].length <= max_bytes) {
    bytes += records_[end].length;
    ++end;
  }
  const Record& first = records_[begin];
  const Record& last = records_[end - 1];
  SLUICE_ASSERT(first.offset != kUnwritten);
  SLUICE_ASSERT(last.offset != kUnwritten);
  SLUICE_ASSERT(last.offset >= first.offset);
  // The records of a range are back to back: one pread for all of them.
  Bytes buffer(last.offset + kRaftRecordHeaderBytes + last.length - first.offset);
  SLUICE_ASSIGN_OR_RETURN(const size_t got, file_->pread(first.offset, buffer));
  if (got != buffer.size()) return corruption(path_ + ": log shorter than its index");
  std::vector<Entry> entries;
  entries.reserve(end - begin);
  for (size_t position = begin; position < end; ++position) {
    const Record& record = records_[position];
    const ByteView bytes_of_record = ByteView(buffer).subspan(record.offset - first.offset);
    const ByteView header = bytes_of_record.first(kRaftRecordHeaderBytes);
    const ByteView payload = bytes_of_record.subspan(kRaftRecordHeaderBytes, record.length);
    // What was written must read back unchanged; a difference is the disk's fault, reported, never asserted.
    if (get_u32_le(header, 4) != record.length || get_u64_le(header, 8) != record.term ||
        get_u32_le(header, 16) != record.count || record_crc(header, payload) != get_u32_le(header, 0)) {
      return corruption(path_ + ": entry at " + std::to_string(record.first) + " does not read back as written");
    }
    entries.push_back(Entry{.term = record.term, .count = record.count, .payload = std::string(as_chars(payload))});
  }
  SLUICE_ASSERT(entries.size() == end - begin);
  SLUICE_ASSERT(!entries.empty());
  SLUICE_ASSERT(entries.size() <= max_count);
  SLUICE_ASSERT(entries.size() == 1 || bytes <= max_bytes);
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
  SLUICE_ASSERT(is_entry_end(durable_index_));
  if (records_.empty()) {
    if (!failed()) SLUICE_ASSERT(end_offset_ == kRaftLogFileHeaderBytes);
    return;
  }
  SLUICE_ASSERT(records_.front().first == 1);
  const Record& last = records_.back();
  SLUICE_ASSERT(last.count >= 1);
  if (last.offset == kUnwritten) SLUICE_ASSERT(failed());
  SLUICE_VERIFY(std::adjacent_find(records_.begin(), records_.end(), [](const Record& a, const Record& b) {
                  return b.first != a.last() + 1 || b.term < a.term;
                }) == records_.end());
  // Once failed, the file is no longer what the index says (a write or a cut may have half happened).
  if (failed()) return;
  SLUICE_ASSERT(last.offset + kRaftRecordHeaderBytes + last.length == end_offset_);
}

}  // namespace sluice::raft
