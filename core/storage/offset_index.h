// OffsetIndex: the sparse offset → file position index of one segment (`.index`, docs/formats.md). Entries live
// in memory (a vector) and are appended to the file as they are made; the file is only a cache of what a scan
// of the .log would rebuild, so a damaged one is rebuilt, never trusted blindly (Segment does that). A closed
// segment's index releases its entries (release_entries): lookups then search the file (index_search.h) until a
// change loads them back.
//
// Owned by its Segment; called only by the fiber that holds the owning log's append lock (writes) or by any
// fiber of the node (lookups).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/result.h"
#include "core/env/file_system.h"
#include "core/storage/index_file.h"
#include "core/storage/index_search.h"

namespace sluice::storage {

struct OffsetPosition {
  int64_t offset = 0;
  uint64_t position = 0;
};

class OffsetIndex {
 public:
  // Opens the index at `path`, creating it when missing. A file that is not a whole number of entries or whose
  // entries are not strictly increasing loads as empty with intact() false: the caller rebuilds it.
  static Result<std::unique_ptr<OffsetIndex>> open(FileSystem& fs, std::string path, int64_t base_offset,
                                                   int64_t max_index_bytes);

  int64_t base_offset() const { return base_offset_; }
  const std::string& path() const { return file_.path(); }
  size_t entry_count() const { return released_ ? released_->count : entries_.size(); }
  size_t max_entries() const { return max_entries_; }
  // Kafka's isFull: no room for another entry under segment.index.bytes.
  bool full() const { return entry_count() >= max_entries_; }
  bool intact() const { return intact_; }
  void set_max_index_bytes(int64_t max_index_bytes);

  // The greatest entry with offset <= target; {base_offset, 0} when there is none. REQUIRES: entries_loaded().
  OffsetPosition lookup(int64_t target) const;
  // The same, searched in `file` (this index's file) while the entries are released; kCorruption on a damaged read.
  Result<OffsetPosition> lookup_in_file(File& file, int64_t target) const;
  // Drops the entries from memory, keeping their count, first and last (a closed segment's). REQUIRES: intact().
  void release_entries();
  // Loads the released entries back from the file (before a change): kCorruption unless they are the ones released.
  Status reload_entries();
  bool entries_loaded() const { return !released_.has_value(); }
  // The last entry, or {base_offset, 0} when empty.
  OffsetPosition last() const;
  // True when every entry points inside a log of `log_bytes` and below `next_offset` (a cheap sanity check
  // after loading a possibly torn file).
  bool consistent_with(uint64_t log_bytes, int64_t next_offset) const;

  // REQUIRES: offset > last entry's offset, position > last entry's position (or the index is empty), the
  // relative offset fits in int32, and entries_loaded() (so for the rest of the changes).
  Status append(int64_t offset, uint64_t position);
  // Drops every entry with offset >= `offset`.
  Status truncate_to(int64_t offset);
  Status reset();
  Status sync();
  // Changed since its last successful sync (a sync round skips the index otherwise).
  bool unsynced() const { return file_.unsynced(); }
  Status close();
  // A closed segment's index keeps its entries but not its descriptor (index_file.h); it is opened again, at
  // `path()` (set_path after a rename), before the next change.
  void release_file() { file_.release(); }
  Status reopen_file() { return file_.reopen(); }
  bool file_open() const { return file_.is_open(); }
  void set_path(std::string path) { file_.set_path(std::move(path)); }

 private:
  struct Entry {
    int32_t relative_offset;
    uint32_t position;
    bool operator==(const Entry&) const = default;
  };
  OffsetIndex(FileSystem& fs, std::unique_ptr<File> file, std::string path, int64_t base_offset,
              int64_t max_index_bytes);
  Status load();
  Status truncate_file();

  IndexFile file_;  // syncing an unchanged index is free
  int64_t base_offset_;
  size_t max_entries_;
  std::vector<Entry> entries_;  // empty while released
  std::optional<ReleasedEntries<Entry>> released_;
  bool intact_ = true;
};

}  // namespace sluice::storage
