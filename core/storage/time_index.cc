#include "core/storage/time_index.h"

#include <algorithm>

#include "core/base/assert.h"
#include "core/storage/index_search.h"
#include "core/storage/log_format.h"

namespace sluice::storage {

TimeIndex::TimeIndex(FileSystem& fs, std::unique_ptr<File> file, std::string path, int64_t base_offset,
                     int64_t max_index_bytes)
    : file_(fs, std::move(path), std::move(file)), base_offset_(base_offset) {
  SLUICE_ASSERT(base_offset_ >= 0);
  set_max_index_bytes(max_index_bytes);
}

Result<std::unique_ptr<TimeIndex>> TimeIndex::open(FileSystem& fs, std::string path, int64_t base_offset,
                                                   int64_t max_index_bytes) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kCreate));
  std::unique_ptr<TimeIndex> index(new TimeIndex(fs, std::move(file), std::move(path), base_offset, max_index_bytes));
  SLUICE_TRY(index->load());
  return index;
}

void TimeIndex::set_max_index_bytes(int64_t max_index_bytes) {
  // segment.index.bytes may be as low as 4 (Kafka's minimum too), below one entry: the index still holds one, so
  // that a segment is full, and rolls, after its first entry.
  SLUICE_ASSERT(max_index_bytes > 0);
  max_entries_ = std::max<size_t>(1, static_cast<size_t>(max_index_bytes) / kTimeIndexEntryBytes);
}

// Disk input: never asserted; a bad file loads empty and is reported through intact().
Status TimeIndex::load() {
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_whole_file(*file_.handle()));
  entries_.clear();
  intact_ = bytes.size() % kTimeIndexEntryBytes == 0;
  for (size_t at = 0; intact_ && at < bytes.size(); at += kTimeIndexEntryBytes) {
    Entry entry{static_cast<int64_t>(get_be(bytes.data() + at, 8)),
                static_cast<int32_t>(get_be(bytes.data() + at + 8, 4))};
    const bool increasing = entries_.empty() || (entry.timestamp > entries_.back().timestamp &&
                                                 entry.relative_offset >= entries_.back().relative_offset);
    if (entry.relative_offset < 0 || !increasing) intact_ = false;
    entries_.push_back(entry);
  }
  if (!intact_) entries_.clear();
  return Status();
}

TimestampOffset TimeIndex::lookup_below(int64_t target) const {
  SLUICE_ASSERT(entries_loaded());
  auto it = std::lower_bound(entries_.begin(), entries_.end(), target,
                             [](const Entry& e, int64_t value) { return e.timestamp < value; });
  if (it == entries_.begin()) return {-1, base_offset_};
  --it;
  SLUICE_ASSERT(it->timestamp < target);
  return {it->timestamp, base_offset_ + it->relative_offset};
}

Result<TimestampOffset> TimeIndex::lookup_below_in_file(File& file, int64_t target) const {
  SLUICE_ASSERT(released_.has_value());
  SLUICE_ASSIGN_OR_RETURN(
      std::optional<Entry> found,
      search_index_file<Entry>(
          file, path(), released_->count, kTimeIndexEntryBytes, released_->first, released_->last,
          [](const uint8_t* bytes) {
            return Entry{static_cast<int64_t>(get_be(bytes, 8)), static_cast<int32_t>(get_be(bytes + 8, 4))};
          },
          [target](const Entry& e) { return e.timestamp < target; },
          [](const Entry& a, const Entry& b) {
            return a.timestamp < b.timestamp && a.relative_offset <= b.relative_offset;
          }));
  if (!found.has_value()) return TimestampOffset{-1, base_offset_};
  SLUICE_ASSERT(found->timestamp < target);
  return TimestampOffset{found->timestamp, base_offset_ + found->relative_offset};
}

void TimeIndex::release_entries() {
  SLUICE_ASSERT(intact_);
  if (!released_.has_value()) released_ = release_index_entries(entries_);
}

Status TimeIndex::reload_entries() {
  return reload_index_entries(entries_, intact_, released_, path(), [this] { return load(); });
}

TimestampOffset TimeIndex::last() const {
  if (released_.has_value()) {
    if (released_->count == 0) return {-1, base_offset_};
    return {released_->last.timestamp, base_offset_ + released_->last.relative_offset};
  }
  if (entries_.empty()) return {-1, base_offset_};
  return {entries_.back().timestamp, base_offset_ + entries_.back().relative_offset};
}

bool TimeIndex::consistent_with(int64_t next_offset) const {
  if (!intact_) return false;
  return entry_count() == 0 || last().offset < next_offset;
}

Status TimeIndex::maybe_append(int64_t timestamp, int64_t offset, bool force) {
  SLUICE_ASSERT(entries_loaded());
  const int64_t relative = offset - base_offset_;
  SLUICE_ASSERT(relative >= 0);
  SLUICE_ASSERT(relative <= INT32_MAX);
  if (!entries_.empty()) {
    SLUICE_ASSERT(relative >= entries_.back().relative_offset);
    if (timestamp <= entries_.back().timestamp) return Status();
  }
  SLUICE_ASSERT(force || !full());
  uint8_t bytes[kTimeIndexEntryBytes];
  put_be(bytes, static_cast<uint64_t>(timestamp), 8);
  put_be(bytes + 8, static_cast<uint32_t>(relative), 4);
  // At the entry's own place, not at the file's end: that would cost an fstat per entry (see truncate_file).
  SLUICE_TRY(file_.handle()->pwrite(entries_.size() * kTimeIndexEntryBytes, ByteView(bytes, sizeof(bytes))));
  entries_.push_back(Entry{timestamp, static_cast<int32_t>(relative)});
  return Status();
}

Status TimeIndex::truncate_to(int64_t offset) {
  SLUICE_ASSERT(entries_loaded());
  const int64_t relative = offset - base_offset_;
  while (!entries_.empty() && entries_.back().relative_offset >= relative) entries_.pop_back();
  return truncate_file();
}

Status TimeIndex::reset() {
  released_.reset();
  entries_.clear();
  intact_ = true;
  return truncate_file();
}

Status TimeIndex::truncate_file() {
  const uint64_t size = entries_.size() * kTimeIndexEntryBytes;
  const std::shared_ptr<TrackedFile> file = file_.handle();
  SLUICE_ASSIGN_OR_RETURN(uint64_t current, file->size());
  if (current != size) SLUICE_TRY(file->truncate(size));
  return Status();
}

Status TimeIndex::sync() { return file_.sync(); }  // a TrackedFile: free when unchanged

Status TimeIndex::close() { return file_.close(); }

}  // namespace sluice::storage
