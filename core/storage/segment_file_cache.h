// SegmentFileCache: the open `.log` handles of closed segments (sealed, not the active one), at most `capacity` of
// them, the least recently used closed first. One per log manager, so per node: a broker with tens of thousands of
// segments holds a bounded number of descriptors, not three per segment for life (Kafka keeps them all open and
// asks for a huge RLIMIT_NOFILE). Active segments keep their own handles and are not counted here.
//
// A handle is shared: a reader suspended in a pread holds its shared_ptr (a pin), and only an entry nobody holds is
// evicted, so eviction never closes a file under an in-flight read. When every entry is pinned the cache is over
// its capacity by at most the pinned entries, and trims back at the next acquire once their pins are gone.
// Handles are opened read-only by the segment's current path (a rename to `.deleted` keeps an open one usable);
// fdatasync through them works, so a closed segment can still be synced.
//
// Fibers: any fiber of the node; acquire may suspend in open(), the rest do not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/base/result.h"
#include "core/env/file_system.h"

namespace sluice::storage {

class SegmentFileCache {
 public:
  SegmentFileCache(FileSystem& fs, size_t capacity);
  SegmentFileCache(const SegmentFileCache&) = delete;
  SegmentFileCache& operator=(const SegmentFileCache&) = delete;

  // A key of its own for each segment that uses the cache.
  uint64_t new_key() { return next_key_++; }
  // The open handle of `key`'s file at `path`, opened read-only when not cached. Hold it only across the I/O made
  // with it: while held it is pinned.
  Result<std::shared_ptr<File>> acquire(uint64_t key, const std::string& path);
  // Drops `key`'s handle (its segment is gone, or holds its own handles again). A read in flight keeps the file open
  // until it returns.
  void forget(uint64_t key);

  size_t capacity() const { return capacity_; }
  size_t size() const { return entries_.size(); }
  size_t pinned() const;  // entries held outside the cache (O(size))
  uint64_t opens() const { return opens_; }
  uint64_t hits() const { return hits_; }
  uint64_t evictions() const { return evictions_; }
  // Entries, LRU order and pins agree, and the size is within the capacity but for pinned entries (O(size)).
  bool consistent() const;

 private:
  struct Entry {
    std::shared_ptr<File> file;
    std::list<uint64_t>::iterator recency;  // into recency_
  };
  static bool is_pinned(const Entry& entry) { return entry.file.use_count() > 1; }
  void touch(Entry& entry, uint64_t key);
  // Evicts unpinned entries, least recent first, until the size is within the capacity or only pinned ones are over.
  void trim();

  FileSystem& fs_;
  size_t capacity_;
  uint64_t next_key_ = 1;
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> recency_;  // keys, most recently used first
  uint64_t opens_ = 0;
  uint64_t hits_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace sluice::storage
