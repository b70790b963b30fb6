// TimeIndex: the sparse timestamp → offset index of one segment (`.timeindex`, docs/formats.md). An entry
// (T, O) says: every record at an offset <= O has a timestamp <= T. Entries are strictly increasing in both
// fields; a new one is added only when the segment's max timestamp grew. Kept in memory and appended to the
// file; a damaged file is rebuilt by the Segment from its .log. A closed segment's index releases its entries, as
// OffsetIndex does, and is searched in its file.
//
// Owned by its Segment; same calling rules as OffsetIndex.
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

struct TimestampOffset {
  int64_t timestamp = -1;
  int64_t offset = 0;
};

class TimeIndex {
 public:
  // Opens or creates the index at `path`. A file that is not a whole number of entries, or not monotonic,
  // loads as empty with intact() false.
  static Result<std::unique_ptr<TimeIndex>> open(FileSystem& fs, std::string path, int64_t base_offset,
                                                 int64_t max_index_bytes);

  int64_t base_offset() const { return base_offset_; }
  const std::string& path() const { return file_.path(); }
  size_t entry_count() const { return released_ ? released_->count : entries_.size(); }
  bool full() const { return entry_count() >= max_entries_; }
  bool intact() const { return intact_; }
  void set_max_index_bytes(int64_t max_index_bytes);

  // The greatest entry whose timestamp is strictly below `target`: every record at or before its offset is
  // older than `target`, so a search may start right after it. {-1, base_offset} when there is none.
  // REQUIRES: entries_loaded().
  TimestampOffset lookup_below(int64_t target) const;
  // The same, searched in `file` (this index's file) while the entries are released; kCorruption on a damaged read.
  Result<TimestampOffset> lookup_below_in_file(File& file, int64_t target) const;
  // Drops the entries from memory, keeping their count, first and last (a closed segment's). REQUIRES: intact().
  void release_entries();
  // Loads the released entries back from the file (before a change): kCorruption unless they are the ones released.
  Status reload_entries();
  bool entries_loaded() const { return !released_.has_value(); }
  // The last entry ({-1, base_offset} when empty): the segment's max timestamp once the segment was sealed.
  TimestampOffset last() const;
  bool consistent_with(int64_t next_offset) const;

  // Appends (timestamp, offset) when timestamp is above the last entry's. REQUIRES: offset >= the last entry's
  // offset; room for it unless `force` (the final entry of a sealed segment may go past the limit, as Kafka's
  // skipFullCheck).
  Status maybe_append(int64_t timestamp, int64_t offset, bool force = false);
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
    int64_t timestamp;
    int32_t relative_offset;
    bool operator==(const Entry&) const = default;
  };
  TimeIndex(FileSystem& fs, std::unique_ptr<File> file, std::string path, int64_t base_offset, int64_t max_index_bytes);
  Status load();
  Status truncate_file();

  IndexFile file_;  // syncing an unchanged index is free
  int64_t base_offset_;
  size_t max_entries_ = 0;
  std::vector<Entry> entries_;  // empty while released
  std::optional<ReleasedEntries<Entry>> released_;
  bool intact_ = true;
};

}  // namespace sluice::storage
