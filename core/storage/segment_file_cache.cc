#include "core/storage/segment_file_cache.h"

#include <utility>

#include "core/base/assert.h"

namespace sluice::storage {

SegmentFileCache::SegmentFileCache(FileSystem& fs, size_t capacity) : fs_(fs), capacity_(capacity) {
  SLUICE_ASSERT(capacity_ > 0);
}

void SegmentFileCache::touch(Entry& entry, uint64_t key) {
  SLUICE_ASSERT(*entry.recency == key);
  recency_.splice(recency_.begin(), recency_, entry.recency);
  SLUICE_ASSERT(recency_.front() == key);
}

Result<std::shared_ptr<File>> SegmentFileCache::acquire(uint64_t key, const std::string& path) {
  SLUICE_ASSERT(key > 0 && key < next_key_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    ++hits_;
    touch(it->second, key);
    return it->second.file;
  }
  Result<std::unique_ptr<File>> opened = fs_.open(path, OpenMode::kRead);
  SLUICE_TRY(opened.status());
  std::shared_ptr<File> file(std::move(opened).value());
  ++opens_;
  // Another fiber may have opened the same file while this one was suspended in open(): keep one of the two.
  if (auto it = entries_.find(key); it != entries_.end()) {
    touch(it->second, key);
    return it->second.file;
  }
  recency_.push_front(key);
  entries_.emplace(key, Entry{file, recency_.begin()});
  trim();
  SLUICE_ASSERT(is_pinned(entries_.at(key)));  // held by `file`: never the one trim() just closed
  SLUICE_ASSERT(recency_.size() == entries_.size());
  return file;
}

void SegmentFileCache::forget(uint64_t key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  recency_.erase(it->second.recency);
  entries_.erase(it);  // the last reference closes the file, now or when a read in flight returns
}

void SegmentFileCache::trim() {
  size_t pinned_kept = 0;
  for (auto it = recency_.end(); entries_.size() > capacity_ && it != recency_.begin();) {
    --it;
    auto entry = entries_.find(*it);
    SLUICE_ASSERT(entry != entries_.end());
    if (is_pinned(entry->second)) {
      ++pinned_kept;  // a read is in flight on it: it stays
      continue;
    }
    SLUICE_ASSERT(entry->second.file.use_count() == 1);
    entries_.erase(entry);  // closes it: nobody else holds it
    it = recency_.erase(it);
    ++evictions_;
  }
  SLUICE_ASSERT(entries_.size() <= capacity_ + pinned_kept);
}

size_t SegmentFileCache::pinned() const {
  size_t count = 0;
  for (const auto& [key, entry] : entries_) count += is_pinned(entry) ? 1 : 0;
  return count;
}

bool SegmentFileCache::consistent() const {
  if (recency_.size() != entries_.size()) return false;
  for (auto it = recency_.begin(); it != recency_.end(); ++it) {
    auto entry = entries_.find(*it);
    if (entry == entries_.end() || entry->second.recency != it || entry->second.file == nullptr) return false;
  }
  return entries_.size() <= capacity_ + pinned();
}

}  // namespace sluice::storage
