// Segment: one `.log` of record batches plus its `.index` and `.timeindex` (docs/formats.md), covering the
// offsets [base_offset, next_offset). Appends go to the end; reads are by file position, found through the
// sparse offset index and a walk over batch headers (read in windows, not one pread each), or through the hint a
// previous read left where it ended (PositionHints). segment_read.cc holds the read side.
//
// Descriptors and memory: a segment made with a SegmentConfig::file_cache can close its files (release_files, once
// it is sealed and no longer active): its reads then take the handles from that cache (bounded, LRU, per node), a
// sync of it opens what it needs, and any change opens all three again first (ensure_open), by their current names.
// Its indexes drop their entries from memory too, and are searched in their files until ensure_open loads them back.
//
// Ownership and fibers: a PartitionLog owns its segments through shared_ptr, so that a reader that suspended
// inside a pread keeps a segment alive while it is dropped from the map. Mutating calls (append, truncate_to,
// seal, recover, flush) come only from the fiber holding the log's append lock, or from the loader before the
// log is shared; const queries and reads may come from any fiber of the node. Every bound that comes from the
// file is checked and reported as a Status (kCorruption), never asserted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/env.h"
#include "core/storage/offset_index.h"
#include "core/storage/position_hints.h"
#include "core/storage/record_batch.h"
#include "core/storage/segment_file_cache.h"
#include "core/storage/time_index.h"

namespace sluice::storage {

struct SegmentConfig {
  int64_t index_bytes = 10485760;       // segment.index.bytes
  int64_t index_interval_bytes = 4096;  // index.interval.bytes
  // Where a closed segment's .log handle comes from (the log manager's); null: every file stays open for life.
  std::shared_ptr<SegmentFileCache> file_cache;
};

// What a full scan of a segment found (Segment::recover).
struct SegmentScan {
  uint64_t valid_bytes = 0;  // the valid prefix: the segment now ends here
  uint64_t file_bytes = 0;   // the .log's size before the scan
  size_t batches = 0;
  int64_t next_offset = 0;  // after the last valid batch (the base offset when there is none)
  std::string problem;      // empty when the whole file is valid
  // Everything after the valid prefix is zeros: the preallocated end of an active segment (Segment::append), not
  // a torn write. Only meaningful when !clean().
  bool zero_tail = false;
  bool clean() const { return problem.empty(); }
};

class Segment {
 public:
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Creates the three files of a new, empty segment (emptied when they exist). Their directory entries are not
  // synced: the caller syncs the directory.
  static Result<std::unique_ptr<Segment>> create(Env env, const std::string& dir, int64_t base_offset,
                                                 const SegmentConfig& config);
  // Opens the files of an existing segment (index files are created when missing). Nothing is known about its
  // contents until load_trusted() or recover() runs.
  static Result<std::unique_ptr<Segment>> open(Env env, const std::string& dir, int64_t base_offset,
                                               const SegmentConfig& config);

  // Loads without validating batches (a clean shutdown, or data below the recovery point): takes the indexes
  // as they are and walks the batch headers after the last offset index entry to find the next offset.
  // kCorruption when the indexes are damaged or a header does not parse: the caller then recovers instead.
  Status load_trusted();
  // Scans every batch (header, size within the file, CRC, offsets increasing), rebuilds both indexes and
  // leaves the segment ending after the last valid batch. The file is not truncated: see truncate_bytes.
  Result<SegmentScan> recover();
  // Cuts the .log to `size` (the valid prefix a recover() reported). REQUIRES: size == size_bytes().
  Status truncate_file_to_valid();

  // Appends batches whose offsets are assigned: their bytes are `parts` back to back (one gathered write), and
  // `spans` describe them in order within that concatenation.
  // REQUIRES: the first base offset >= next_offset(), offsets strictly increasing, within int32 of the base.
  // On failure the segment is rolled back to its previous end; a failed rollback is reported as kIoError.
  // `preallocate_bytes` > 0: when the write would pass the .log's preallocated end, the file is first extended
  // (File::preallocate) to this much past the write, so that the syncs of the appends after it journal no size
  // change. The file then ends in zeros past size_bytes(), until seal() or recovery cuts them.
  Status append(std::span<const ByteView> parts, std::span<const BatchSpan> spans, uint64_t preallocate_bytes = 0);
  // Cuts the .log's preallocated zeros and adds the final time index entry (the segment's max timestamp), as
  // Kafka does on roll and close: a sealed segment's file ends with its last batch once it is synced.
  Status seal();
  // The .log's length on disk, preallocated zeros included.
  uint64_t allocated_bytes() const { return allocated_; }
  // Syncs the .log and both indexes (fdatasync each; an unchanged index costs nothing).
  Status flush();
  // The parts of flush, for a caller that overlaps them (group commit hands the indexes to other fibers): take
  // writes() first, sync the three parts in any order or at once, then mark_synced with the value taken.
  uint64_t writes() const { return writes_; }
  Status sync_log();
  Status sync_offset_index();
  Status sync_time_index();
  bool offset_index_unsynced() const { return offset_index_->unsynced(); }
  bool time_index_unsynced() const { return time_index_->unsynced(); }
  void mark_synced(uint64_t writes);
  // Removes every batch with last offset >= `offset` (a batch containing it goes whole).
  Status truncate_to(int64_t offset);
  // Renames the three files to `<name><suffix>` (suffix ".deleted"); the handles stay usable.
  Status rename_files(std::string_view suffix);
  Status close();
  // Closes the three descriptors of a sealed segment that is no longer the active one (see the top), and releases
  // its indexes' entries; the calls in flight on them finish first. Nothing happens without a file cache.
  // REQUIRES: no cut running.
  void release_files();
  // Opens whatever release_files closed, at the files' current names, and loads the index entries back. Every
  // change calls it; the log calls it for the segment that becomes the active one.
  Status ensure_open();
  bool files_open() const { return log_ != nullptr && offset_index_->file_open() && time_index_->file_open(); }

  // Position of the first batch whose last offset >= target; nullopt when there is none in this segment. A walk
  // that lands after a gap is walked again: kCorruption when the two disagree (a damaged read).
  Result<std::optional<uint64_t>> find_position(int64_t target) const;
  // The header of the first batch whose last offset >= target (find_position, then one header read); nullopt when
  // there is none in this segment.
  Result<std::optional<BatchHeader>> batch_header_at_or_after(int64_t target) const;
  // Every batch header from byte 0 on, in order (a walk in read-ahead windows; no CRC check).
  Status for_each_batch_header(const std::function<Status(const BatchHeader&)>& on_batch) const;
  // Whole batches from `position`: at least one (even above max_bytes), then as many as fit, none whose last
  // offset is >= upper_bound_offset. Empty when the first one already reaches the bound. Every batch served
  // passed its CRC (else kCorruption with KAFKA_STORAGE_ERROR). Leaves a hint where it ended.
  Result<Bytes> read(uint64_t position, size_t max_bytes, int64_t upper_bound_offset) const;
  // read() from the batch holding `offset` (find_position); nullopt when no batch here holds it or a later one.
  Result<std::optional<Bytes>> read_from(int64_t offset, size_t max_bytes, int64_t upper_bound_offset) const;
  const PositionHints& position_hints() const { return position_hints_; }
  // Bumped when a cut of the .log (truncate_to, a rollback, seal's cut of preallocated zeros) starts and again when
  // it ends; cutting() while one runs (its I/O suspends). A reader that began during a cut, or saw the generation
  // change across its own I/O, may hold a position or bytes from before the cut: its read fails with
  // cut_during_read() (NOT_LEADER_OR_FOLLOWER) and PartitionLog::read tries again.
  uint64_t cut_generation() const { return cuts_; }
  bool cutting() const { return cutting_ > 0; }
  // The first record at an offset >= min_offset whose timestamp >= target; nullopt when there is none here.
  Result<std::optional<TimestampOffset>> find_offset_for_timestamp(int64_t target, int64_t min_offset) const;

  int64_t base_offset() const { return base_offset_; }
  int64_t next_offset() const { return next_offset_; }
  uint64_t size_bytes() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t max_timestamp() const { return max_timestamp_; }
  int64_t offset_of_max_timestamp() const { return offset_of_max_timestamp_; }
  // The max timestamp of the first batch (what segment.ms measures from); -1 when empty or unknown.
  int64_t first_batch_max_timestamp() const { return first_batch_max_timestamp_; }
  Instant created_at() const { return created_at_; }
  int64_t roll_jitter_ms() const { return roll_jitter_ms_; }
  void set_roll_jitter_ms(int64_t jitter_ms) { roll_jitter_ms_ = jitter_ms; }
  bool indexes_full() const { return offset_index_->full() || time_index_->full(); }
  bool dirty() const { return writes_ != synced_writes_; }
  void set_config(const SegmentConfig& config);
  const OffsetIndex& offset_index() const { return *offset_index_; }
  const TimeIndex& time_index() const { return *time_index_; }
  std::string log_path() const;
  std::string index_path() const;
  std::string time_index_path() const;

 private:
  Segment(Env env, std::string dir, int64_t base_offset, const SegmentConfig& config);
  Status open_files(OpenMode mode);
  // The .log's handle for one read or sync: the segment's own while open, else the file cache's (pinned while held).
  Result<std::shared_ptr<File>> log_file() const;
  void forget_cached_files();
  // The bytes of the .log that a header walk has read ahead: [start, start + bytes.size()).
  struct HeaderWindow {
    uint64_t start = 0;
    Bytes bytes;
  };
  Result<BatchHeader> header_at(uint64_t position) const;  // one pread
  // The header at `position`, from `window` when it holds it, else after refilling it from there on.
  Result<BatchHeader> header_in(HeaderWindow& window, uint64_t position) const;
  // Parses the header `bytes` start with, found at `position`: kCorruption (naming the file and byte) when it
  // does not parse or its batch runs past size_.
  Result<BatchHeader> checked_header(ByteView bytes, uint64_t position) const;
  // read() that also reports the first batch served (nullopt when none), for read_from's check. `generation`: the
  // cut generation when the caller found `position`; a cut since (a truncation or rollback moved the batches) fails
  // the read with cut_during_read() rather than walking bytes that may mix two versions.
  Result<Bytes> read_batches(uint64_t position, size_t max_bytes, int64_t upper_bound_offset,
                             std::optional<BatchHeader>* first, uint64_t generation) const;
  Status cut_during_read(uint64_t position) const;
  Status misplaced_batch(const BatchHeader& header, uint64_t position, int64_t previous_last_offset) const;
  struct PlacedHeader {
    uint64_t position;
    BatchHeader header;
  };
  // A batch read fails its CRC: kCorruption with KAFKA_STORAGE_ERROR, naming the file, byte and offset.
  Status refuse_damaged(const PlacedHeader& batch) const;
  // find_position's walk from the sparse index entry, without hints.
  Result<std::optional<PlacedHeader>> walk_to(int64_t target) const;
  // find_position's answer with what the walk or the hint says of the base offset there, read apart from the batch
  // that will be served: a base offset lies outside the batch CRC.
  struct Located {
    uint64_t position;
    int64_t base_offset_at_least;         // a hint: the batch before ends at base_offset_at_least - 1
    std::optional<int64_t> base_offset;   // a walk read the header there
  };
  Result<std::optional<Located>> locate(int64_t target) const;
  // The sparse indexes' answers, from memory or, released, from their files (read again on damage).
  Result<uint64_t> indexed_position(int64_t target) const;
  Result<TimestampOffset> indexed_below(int64_t timestamp) const;
  // Marks a cut for readers (cut_generation) for its scope; nests.
  class CutScope {
   public:
    explicit CutScope(Segment& segment) : segment_(segment) {
      ++segment_.cutting_;
      ++segment_.cuts_;
    }
    ~CutScope() {
      --segment_.cutting_;
      ++segment_.cuts_;
    }
    CutScope(const CutScope&) = delete;
    CutScope& operator=(const CutScope&) = delete;

   private:
    Segment& segment_;
  };
  // Index maintenance for one batch that now sits at `position` (append and recovery share it).
  Status index_batch(const BatchHeader& header, uint64_t position);
  Status rollback(uint64_t size, int64_t next_offset, Status cause);
  // Extends the .log ahead of a write of `bytes` (see append). A failure is not the append's: the write goes on
  // without (a full disk then refuses the write itself).
  Status preallocate_for(uint64_t bytes, uint64_t preallocate_bytes);
  Status cut_file_to(uint64_t size);  // truncates the .log, keeping allocated_ true; forgets the position hints
  // Sets next_offset_, the max timestamp and the bytes since the last index entry from the headers after the last
  // offset index entry. Headers carry no CRC over their base offset, so the walk is believed when two agree.
  Status walk_tail();
  struct TailWalk {
    int64_t next_offset;
    int64_t max_timestamp;
    int64_t offset_of_max_timestamp;
    uint64_t bytes_since_index_entry;
    bool operator==(const TailWalk&) const = default;
  };
  Result<TailWalk> walk_tail_once() const;
  Status reset_state();
  std::string path(std::string_view suffix) const;

  Env env_;
  std::string dir_;
  int64_t base_offset_;
  SegmentConfig config_;
  std::string suffix_;  // appended to every file name after rename_files
  std::shared_ptr<SegmentFileCache> cache_;  // null: the files stay open for life
  uint64_t cache_key_ = 0;  // the .log's
  uint64_t offset_index_key_ = 0;
  uint64_t time_index_key_ = 0;
  std::shared_ptr<File> log_;  // null while released; shared: a sync in flight keeps it open across a release
  std::unique_ptr<OffsetIndex> offset_index_;
  std::unique_ptr<TimeIndex> time_index_;
  uint64_t size_ = 0;
  uint64_t allocated_ = 0;  // the .log's length: size_ plus preallocated zeros (>= size_)
  int64_t next_offset_;
  int64_t appending_next_offset_ = 0;  // while an append writes its index entries: the next offset it ends at
  int64_t max_timestamp_ = -1;
  int64_t offset_of_max_timestamp_ = -1;
  int64_t first_batch_max_timestamp_ = -1;
  uint64_t bytes_since_index_entry_ = 0;
  Instant created_at_;
  int64_t roll_jitter_ms_ = 0;
  uint64_t writes_ = 0;         // mutations of any of the three files
  uint64_t synced_writes_ = 0;  // writes_ as of the start of the last successful flush
  mutable PositionHints position_hints_;  // reads leave them; cut_file_to and reset_state forget them
  uint64_t cuts_ = 0;  // see cut_generation()
  int cutting_ = 0;    // CutScopes open
};

// Scans the batches of a .log file from byte 0 with the checks recover() makes, calling `on_batch` for each
// valid one (header, position). Stops at the first invalid batch and reports it in `problem` (and whether only
// zeros follow, in `zero_tail`).
Result<SegmentScan> scan_log_file(File& file, const std::string& name, int64_t base_offset,
                                  const std::function<Status(const BatchHeader&, uint64_t)>& on_batch);

// Whether the bytes [from, to) of `file` are all zeros (a preallocated tail).
Result<bool> only_zeros(File& file, uint64_t from, uint64_t to);

// The first record of `batch` (one whole batch) at an offset >= min_offset with a timestamp >= target.
// Uncompressed batches are walked record by record without copying; compressed ones are decoded; under
// LogAppendTime every record carries the batch's max timestamp.
Result<std::optional<TimestampOffset>> first_record_at_or_after(ByteView batch, const BatchHeader& header,
                                                                int64_t target, int64_t min_offset);

}  // namespace sluice::storage
