// PartitionLog: the directory of one partition — an ordered map of segments, the log start offset, the log end
// offset, the high watermark and the recovery point (storage-semantics.md §2, §4; DESIGN.md §3).
//
// Ownership: the caller owns the log; the log owns its segments (shared with readers suspended in I/O) and one
// background fiber (flush.ms, a replicated roll's sync of the rolled segment, delayed deletion), which close()
// stops. Call close() before destroying a log that is still in use; the destructor waits only for a housekeeping
// pass in progress, and never during a node kill (which unwinds the housekeeping fiber first).
//
// Fibers: every call may suspend and must come from a fiber of the node that opened the log. Any number of
// fibers may append, read and query concurrently: appends are serialised by an internal lock (offset
// assignment, roll, write), durability waits are shared (group commit: one round at a time, appends go on while
// it runs, and appenders waiting for it sync its index files beside the .log; partition_log_sync.cc), reads take
// no lock.
//
// Offsets are never renumbered: the log start moves forward only, segments are dropped whole.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/storage/record_batch.h"
#include "core/storage/segment.h"

namespace sluice::storage {

// How far past each write the active segment's .log of a `persisted` log is preallocated (Segment::append): a
// sync after an append inside it journals no metadata (File::preallocate), which on ext4 is a third or more of a
// small sync. One extension per MiB; an idle partition holds at most this much unused disk until its segment is
// sealed.
inline constexpr uint64_t kPersistedPreallocateBytes = 1024 * 1024;

// What the log needs of a topic's configuration (TopicConfig maps onto it). Kafka names in the comments.
struct LogSettings {
  int64_t segment_bytes = 1073741824;      // segment.bytes
  int64_t segment_ms = 604800000;          // segment.ms
  int64_t segment_jitter_ms = 0;           // segment.jitter.ms
  int64_t segment_index_bytes = 10485760;  // segment.index.bytes
  int64_t index_interval_bytes = 4096;     // index.interval.bytes
  int64_t flush_messages = INT64_MAX;      // flush.messages: sync inline after this many unflushed offsets
  int64_t flush_ms = INT64_MAX;            // flush.ms: sync at least this often (background fiber)
  bool persisted = false;                  // durability=persisted: every append is synced before it returns
  int64_t file_delete_delay_ms = 60000;    // file.delete.delay.ms
  // Single-node mode: append moves the high watermark to the log end (after the sync when persisted). The
  // replication layer turns it off and calls set_high_watermark.
  bool high_watermark_follows_log_end = true;
  // Planted bugs (core/base/mutations.h): skip-persisted-fsync, offsets-reused-after-recovery. Empty in the real
  // world.
  MutationSet mutations;
};

// Told [from, to) when the log start moved from `from` to `to`, right after the move and before any other fiber
// can see it (the log manager declares the effect there: effects.h). Must not suspend.
using LogStartMoved = std::function<void(int64_t from, int64_t to)>;

struct AppendOptions {
  bool log_append_time = false;  // message.timestamp.type=LogAppendTime: stamp every batch with wall_now()
  // `persisted`: return before the sync, so that one connection's pipelined produces share a sync round. The
  // caller acknowledges only after wait_for_durability(last_offset + 1).
  bool defer_sync = false;
};

struct AppendResult {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t log_append_time_ms = -1;  // -1 under CreateTime
  int64_t log_start_offset = 0;
  bool sync_deferred = false;  // defer_sync took effect: not durable yet (see wait_for_durability)
  uint64_t disk_bytes = 0;     // what the .log grew by: the batches, plus any preallocation they started
};

struct ReadResult {
  Bytes records;  // whole batches, possibly empty
  int64_t high_watermark = 0;
  int64_t log_start_offset = 0;
  int64_t log_end_offset = 0;
};

struct OffsetAndTimestamp {
  int64_t offset = 0;
  int64_t timestamp = -1;
  bool operator==(const OffsetAndTimestamp&) const = default;
};

// One segment as retention and the cleaner see it.
struct SegmentInfo {
  int64_t base_offset = 0;
  int64_t next_offset = 0;
  uint64_t size_bytes = 0;
  int64_t max_timestamp = -1;
  int64_t first_batch_max_timestamp = -1;
  std::string log_file;
  std::string index_file;
  std::string time_index_file;
};

// How the last open() went (tests and metrics).
struct LoadStats {
  bool clean_shutdown = false;
  size_t segments_loaded = 0;
  size_t segments_recovered = 0;  // fully scanned
  size_t indexes_rebuilt = 0;
  uint64_t torn_bytes_truncated = 0;
  uint64_t preallocated_bytes_cut = 0;  // zeros after the last segment's data (a persisted log's preallocation)
  size_t segments_deleted_after_torn_tail = 0;  // followed a rolled segment that a power loss left torn
  size_t temp_files_removed = 0;
};

struct LogStats {
  uint64_t appends = 0;
  uint64_t sync_rounds = 0;   // group commits: one sync of every dirty file each
  uint64_t shared_syncs = 0;  // appends whose durability came from another fiber's sync round
  uint64_t helped_index_syncs = 0;  // index syncs a waiting appender ran beside the flusher's .log sync
  uint64_t index_sync_fibers = 0;   // index syncs no waiter took, run on a fiber of their own beside the .log sync
};

class PartitionLog {
 public:
  // Opens (or creates) the partition in `dir`, recovering it as storage-semantics.md §4 describes (see
  // log_loader.h). Fails with kCorruption / KAFKA_STORAGE_ERROR when a closed segment is damaged.
  static Result<std::unique_ptr<PartitionLog>> open(Env env, std::string dir, LogSettings settings);
  ~PartitionLog();
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  // Appends client batches (already validated: magic 2, CRC ok). Offsets are assigned from the log end; each
  // batch keeps its internal deltas. Rolls first when a roll rule holds. RECORD_LIST_TOO_LARGE when the set is
  // larger than segment.bytes; KAFKA_STORAGE_ERROR after a disk failure. With `persisted` (or flush.messages
  // reached) it returns once the data, indexes and directory are synced.
  Result<AppendResult> append(ByteView batches, const AppendOptions& options = {});
  // Whole batches starting with the one holding the first offset >= `offset`, up to max_bytes (at least one
  // batch), none with an offset >= upper_bound_offset. OFFSET_OUT_OF_RANGE below the log start or past the end.
  Result<ReadResult> read(int64_t offset, size_t max_bytes, int64_t upper_bound_offset);
  // Consumers' view: read up to the high watermark.
  Result<ReadResult> read_committed(int64_t offset, size_t max_bytes) {
    return read(offset, max_bytes, high_watermark_);
  }
  // The first offset at or above the log start with timestamp >= ts, below the high watermark.
  Result<std::optional<OffsetAndTimestamp>> offset_for_timestamp(int64_t timestamp);
  // The offset of the first record carrying the largest timestamp below the high watermark.
  Result<std::optional<OffsetAndTimestamp>> max_timestamp();

  int64_t log_start_offset() const { return log_start_offset_; }
  int64_t log_end_offset() const { return log_end_offset_; }
  int64_t high_watermark() const { return high_watermark_; }
  int64_t recovery_point() const { return recovery_point_; }
  // REQUIRES: log start <= offset <= log end.
  void set_high_watermark(int64_t offset);

  // DeleteRecords: moves the log start to `offset` (-1 = the high watermark). OFFSET_OUT_OF_RANGE above the
  // high watermark. Returns the new log start. Segments wholly below it go at remove_segments_below_log_start.
  Result<int64_t> delete_records(int64_t offset, const LogStartMoved& on_moved = {});
  // Retention's primitive. REQUIRES: offset <= high watermark. No-op when not ahead of the log start. The new
  // log start is written to partition.state before returning; `on_moved` hears of it first.
  Status advance_log_start(int64_t offset, const LogStartMoved& on_moved = {});
  // Drops every segment, except the active one, whose offsets are all below the log start: out of the map at
  // once, files renamed `.deleted`, unlinked file.delete.delay.ms later. Returns how many went.
  Result<size_t> remove_segments_below_log_start();
  // The cleaner's swap: replaces the closed segments whose bases lie in [first_base, end_offset) by one segment at
  // first_base holding `cleaned` (whole batches, same offsets), crash-safely through `.log.cleaned` and
  // `.log.swap`. Empty `cleaned` drops them. REQUIRES: first_base is a segment base; the active segment is not
  // covered; `cleaned` is non-empty when first_base is the first segment.
  Status replace_segments(int64_t first_base, int64_t end_offset, ByteView cleaned);
  // Rolls a new active segment at the log end now (retention of an expired active segment). No-op when the
  // active segment is empty.
  Status roll();
  // Unlinks `.deleted` files whose delay has passed and flushes when flush.ms has passed. The background fiber
  // calls it; tests and the broker's housekeeping may too.
  Status run_housekeeping(Instant now);
  // Syncs everything appended so far (group commit with concurrent appenders).
  Status flush();
  // Returns once the offsets below `end_offset` are as durable as an acknowledgement needs: synced (sharing
  // group-commit rounds) when persisted, at once otherwise. Errors: the log failed, or it was closed before they
  // were synced. REQUIRES: end_offset <= log end.
  Status wait_for_durability(int64_t end_offset);
  // True when nothing below `end_offset` waits for a sync before it may be acknowledged.
  bool durable_through(int64_t end_offset) const {
    return !settings_.persisted || recovery_point_ >= end_offset;
  }

  // Bytes of the log from the batch holding `offset` to the end (retention.bytes counts from the log start).
  // REQUIRES: log start <= offset <= log end.
  Result<uint64_t> size_from(int64_t offset);
  std::vector<SegmentInfo> segments() const;
  size_t pending_deletions() const { return pending_deletes_.size(); }
  const LoadStats& load_stats() const { return load_stats_; }
  const LogStats& stats() const { return stats_; }
  bool sync_running() const { return syncing_; }  // a group-commit round is in progress (tests)
  const LogSettings& settings() const { return settings_; }
  const std::string& dir() const { return dir_; }
  // Applies at once: later rolls, flushes and deletions use the new values.
  void update_settings(const LogSettings& settings);

  // Graceful: waits for appends in flight, flushes everything, writes partition.state and the clean-shutdown
  // marker, closes the files. Later calls fail with kClosed.
  Status close();

  // The explicit repair the refusal message points to: truncates the first damaged segment at its first bad
  // batch and deletes every later segment. Returns a description of what was cut (empty when nothing was).
  static Result<std::string> repair(Env env, const std::string& dir);

  struct Background;  // the housekeeping fiber's shared state (partition_log.cc)

 private:
  PartitionLog(Env env, std::string dir, LogSettings settings);
  SegmentConfig segment_config() const;
  Segment& active() const;
  Status check_appendable() const;
  bool should_roll(const Segment& segment, uint64_t incoming_bytes, int64_t incoming_max_timestamp,
                   int64_t last_offset);
  Status roll_locked();
  Status flush_rolled_segments();
  Status write_state();            // REQUIRES: the append lock
  Status record_recovery_point();  // write_state under the append lock, unless closed or failed
  static constexpr int64_t kWholeLog = INT64_MAX;
  // Returns once everything below `offset` is synced, sharing rounds; the rounds it starts cover only the segments
  // whose base lies below `below` (a segment base, >= offset).
  Status sync_through(int64_t offset, int64_t below = kWholeLog);
  // `active_indexes`: the active segment's index files too (a clean close, whose marker lets the next open trust
  // them); otherwise only its .log. `below`: as for sync_through.
  Status sync_round(bool active_indexes = false, int64_t below = kWholeLog);
  Status sync_segments(const std::vector<std::shared_ptr<Segment>>& dirty, bool active_indexes);
  Status fail(Status cause);
  // Planted bugs (core/base/mutations.h); called only when their mutation is set.
  bool planted_skipped_sync(const Segment& segment, bool active_indexes) const;
  Status planted_offset_reuse();
  Status delete_expired_files(Instant now);
  // What an append writes: `parts`, viewing the caller's batches and the members here.
  struct OutgoingBatches {
    Bytes copy;                                                   // LogAppendTime: the batches, edited
    std::vector<std::array<uint8_t, kBaseOffsetBytes>> base_offsets;  // CreateTime: each batch's new first bytes
    std::vector<ByteView> parts;
  };
  AppendResult assign_offsets(ByteView batches, std::vector<BatchSpan>& spans, const AppendOptions& options,
                              OutgoingBatches* out);
  void advance_high_watermark();
  std::vector<std::shared_ptr<Segment>> snapshot() const;
  void start_background();
  void stop_background();
  std::optional<Instant> next_housekeeping() const;
  void verify_invariants() const;

  class AppendGuard;
  struct SyncJob;
  struct PendingDelete {
    Instant due;
    std::vector<std::string> paths;
  };

  Env env_;
  std::string dir_;
  LogSettings settings_;
  std::map<int64_t, std::shared_ptr<Segment>> segments_;  // by base offset; the last one is active
  int64_t log_start_offset_ = 0;
  int64_t log_end_offset_ = 0;
  int64_t high_watermark_ = 0;
  int64_t recovery_point_ = 0;  // everything below is synced
  // What partition.state says. Recovery may cut what lies above it (log_loader.cc), so no cleaned segment does.
  int64_t recorded_recovery_point_ = 0;
  // The end of the last segment a `replicated` roll left for the background fiber to sync; 0 when none waits.
  int64_t roll_flush_pending_ = 0;
  // The append lock: offset assignment, rolls, segment map changes, partition.state. Not a sync.h Mutex: its
  // hand-off leaves it locked when the fiber it was handed to is killed before running, and ~Mutex asserts.
  bool append_locked_ = false;
  WaitQueue append_waiters_;
  bool syncing_ = false;      // a sync round is running (group commit's single flusher)
  WaitQueue sync_done_;       // appenders waiting for the running round
  std::deque<std::shared_ptr<SyncJob>> help_;  // the running round's index syncs that no waiter took yet
  uint64_t dir_changes_ = 0;  // directory entries created since open
  uint64_t dir_synced_ = 0;   // dir_changes_ covered by the last sync_dir
  Instant last_flush_;
  Status failed_;  // sticky: a failed sync or rollback takes the log offline, as Kafka's log dir
  bool closed_ = false;
  std::vector<PendingDelete> pending_deletes_;
  std::shared_ptr<Background> background_;
  LoadStats load_stats_;
  LogStats stats_;
  friend class LogLoader;
};

}  // namespace sluice::storage
