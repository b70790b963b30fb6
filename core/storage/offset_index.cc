#include "core/storage/offset_index.h"

#include <algorithm>

#include "core/base/assert.h"
#include "core/storage/index_search.h"
#include "core/storage/log_format.h"

namespace sluice::storage {

OffsetIndex::OffsetIndex(FileSystem& fs, std::unique_ptr<File> file, std::string path, int64_t base_offset,
                         int64_t max_index_bytes)
    : file_(fs, std::move(path), std::move(file)), base_offset_(base_offset), max_entries_(0) {
  SLUICE_ASSERT(base_offset_ >= 0);
  set_max_index_bytes(max_index_bytes);
}

Result<std::unique_ptr<OffsetIndex>> OffsetIndex::open(FileSystem& fs, std::string path, int64_t base_offset,
                                                       int64_t max_index_bytes) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kCreate));
  std::unique_ptr<OffsetIndex> index(
      new OffsetIndex(fs, std::move(file), std::move(path), base_offset, max_index_bytes));
  SLUICE_TRY(index->load());
  return index;
}

void OffsetIndex::set_max_index_bytes(int64_t max_index_bytes) {
  // segment.index.bytes may be as low as 4 (Kafka's minimum too), below one entry: the index still holds one, so
  // that a segment is full, and rolls, after its first entry.
  SLUICE_ASSERT(max_index_bytes > 0);
  max_entries_ = std::max<size_t>(1, static_cast<size_t>(max_index_bytes) / kOffsetIndexEntryBytes);
}

// Disk input: anything goes, so nothing here is asserted; a bad file loads empty and is reported.
Status OffsetIndex::load() {
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_whole_file(*file_.handle()));
  entries_.clear();
  intact_ = bytes.size() % kOffsetIndexEntryBytes == 0;
  for (size_t at = 0; intact_ && at < bytes.size(); at += kOffsetIndexEntryBytes) {
    Entry entry{static_cast<int32_t>(get_be(bytes.data() + at, 4)),
                static_cast<uint32_t>(get_be(bytes.data() + at + 4, 4))};
    const bool increasing = entries_.empty() || (entry.relative_offset > entries_.back().relative_offset &&
                                                 entry.position > entries_.back().position);
    if (entry.relative_offset < 0 || !increasing) intact_ = false;
    entries_.push_back(entry);
  }
  if (!intact_) entries_.clear();
  return Status();
}

OffsetPosition OffsetIndex::lookup(int64_t target) const {
  SLUICE_ASSERT(entries_loaded());
  const int64_t relative = target - base_offset_;
  if (entries_.empty() || relative < entries_.front().relative_offset) return {base_offset_, 0};
  // First entry with relative_offset > target, then one back.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), relative,
                             [](int64_t value, const Entry& e) { return value < e.relative_offset; });
  SLUICE_ASSERT(it != entries_.begin());
  --it;
  SLUICE_ASSERT(base_offset_ + it->relative_offset <= target);
  return {base_offset_ + it->relative_offset, it->position};
}

Result<OffsetPosition> OffsetIndex::lookup_in_file(File& file, int64_t target) const {
  SLUICE_ASSERT(released_.has_value());
  const int64_t relative = target - base_offset_;
  SLUICE_ASSIGN_OR_RETURN(
      std::optional<Entry> found,
      search_index_file<Entry>(
          file, path(), released_->count, kOffsetIndexEntryBytes, released_->first, released_->last,
          [](const uint8_t* bytes) {
            return Entry{static_cast<int32_t>(get_be(bytes, 4)), static_cast<uint32_t>(get_be(bytes + 4, 4))};
          },
          [relative](const Entry& e) { return e.relative_offset <= relative; },
          [](const Entry& a, const Entry& b) {
            return a.relative_offset < b.relative_offset && a.position < b.position;
          }));
  if (!found.has_value()) return OffsetPosition{base_offset_, 0};
  SLUICE_ASSERT(found->relative_offset <= relative);
  return OffsetPosition{base_offset_ + found->relative_offset, found->position};
}

void OffsetIndex::release_entries() {
  SLUICE_ASSERT(intact_);
  if (!released_.has_value()) released_ = release_index_entries(entries_);
}

Status OffsetIndex::reload_entries() {
  return reload_index_entries(entries_, intact_, released_, path(), [this] { return load(); });
}

OffsetPosition OffsetIndex::last() const {
  if (released_.has_value()) {
    if (released_->count == 0) return {base_offset_, 0};
    return {base_offset_ + released_->last.relative_offset, released_->last.position};
  }
  if (entries_.empty()) return {base_offset_, 0};
  return {base_offset_ + entries_.back().relative_offset, entries_.back().position};
}

bool OffsetIndex::consistent_with(uint64_t log_bytes, int64_t next_offset) const {
  if (!intact_) return false;
  if (entry_count() == 0) return true;
  const OffsetPosition end = last();
  return end.position < log_bytes && end.offset < next_offset;
}

Status OffsetIndex::append(int64_t offset, uint64_t position) {
  SLUICE_ASSERT(entries_loaded());
  const int64_t relative = offset - base_offset_;
  SLUICE_ASSERT(relative >= 0);
  SLUICE_ASSERT(relative <= kMaxRelativeOffset);
  SLUICE_ASSERT(position <= UINT32_MAX);
  SLUICE_ASSERT(!full());
  if (!entries_.empty()) {
    SLUICE_ASSERT(relative > entries_.back().relative_offset);
    SLUICE_ASSERT(position > entries_.back().position);
  }
  uint8_t bytes[kOffsetIndexEntryBytes];
  put_be(bytes, static_cast<uint32_t>(relative), 4);
  put_be(bytes + 4, position, 4);
  // At the entry's own place, not at the file's end: that would cost an fstat per entry (see truncate_file).
  SLUICE_TRY(file_.handle()->pwrite(entries_.size() * kOffsetIndexEntryBytes, ByteView(bytes, sizeof(bytes))));
  entries_.push_back(Entry{static_cast<int32_t>(relative), static_cast<uint32_t>(position)});
  return Status();
}

Status OffsetIndex::truncate_to(int64_t offset) {
  SLUICE_ASSERT(entries_loaded());
  const int64_t relative = offset - base_offset_;
  while (!entries_.empty() && entries_.back().relative_offset >= relative) entries_.pop_back();
  return truncate_file();
}

Status OffsetIndex::reset() {
  released_.reset();
  entries_.clear();
  intact_ = true;
  return truncate_file();
}

Status OffsetIndex::truncate_file() {
  const uint64_t size = entries_.size() * kOffsetIndexEntryBytes;
  const std::shared_ptr<TrackedFile> file = file_.handle();
  SLUICE_ASSIGN_OR_RETURN(uint64_t current, file->size());
  if (current != size) SLUICE_TRY(file->truncate(size));
  return Status();
}

Status OffsetIndex::sync() { return file_.sync(); }  // a TrackedFile: free when unchanged

Status OffsetIndex::close() { return file_.close(); }

}  // namespace sluice::storage
