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
// Offsets are never renumbered: the log start moves forward only, segments are dropped whole. Only truncate_to (a
// replica's suffix truncation, as raft's) removes offsets at the end, and later appends may then reuse them.
//
// Replication (partition_log_replica.cc, partition_log_truncate.cc): the log is a raft log whose entries are its
// record batches and whose terms are the batches' partition leader epochs. append_as_replica stores a leader's
// batches byte for byte, truncate_to cuts a suffix durably, a LeaderEpochCache (leader-epoch-checkpoint) answers
// epoch_at / end_offset_for_epoch, durable_end_offset says what survives a power loss.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/storage/leader_epoch_cache.h"
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
  // replication layer turns it off: then only set_high_watermark moves it (a raft commit index), truncate_to lowers
  // it to the cut, and it starts at the log start at open.
  bool high_watermark_follows_log_end = true;
  // Planted bugs (core/base/mutations.h): skip-persisted-fsync, offsets-reused-after-recovery. Empty in the real
  // world.
  MutationSet mutations;
  // The node's bounded cache of closed segments' handles (the log manager's): with it, every segment but the active
  // one closes its files once sealed (segment.h). Null: every segment keeps its files open.
  std::shared_ptr<SegmentFileCache> file_cache;
};

// Told [from, to) when the log start moved from `from` to `to`, right after the move and before any other fiber
// can see it (the log manager declares the effect there: effects.h). Must not suspend.
using LogStartMoved = std::function<void(int64_t from, int64_t to)>;

struct AppendOptions {
  bool log_append_time = false;  // message.timestamp.type=LogAppendTime: stamp every batch with wall_now()
  // `persisted`: return before the sync, so that one connection's pipelined produces share a sync round. The
  // caller acknowledges only after wait_for_durability(last_offset + 1).
  bool defer_sync = false;
  // The leader path of a replicated log: every batch's partition leader epoch becomes this as its offsets are
  // assigned (bytes 12..16, outside the CRC; no copy under CreateTime). Refused (kInvalidArgument) below the log's
  // latest epoch. nullopt keeps the epoch each batch carries. Not for append_as_replica, whose batches carry theirs.
  std::optional<int32_t> leader_epoch = std::nullopt;
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

// One segment as retention and the cleaner see it. Its file names are apart (SegmentFiles): retention reads every
// segment's bounds at every check, and building three paths for each made that cost grow with the segment count.
struct SegmentInfo {
  int64_t base_offset = 0;
  int64_t next_offset = 0;
  uint64_t size_bytes = 0;
  int64_t max_timestamp = -1;
  int64_t first_batch_max_timestamp = -1;
  // Index entries held in memory: none for a closed segment (they are searched in their files), all for the active.
  size_t index_entries_in_memory = 0;
};

// One segment's files.
struct SegmentFiles {
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
  // A read that a truncate_to cut under is retried; if that keeps happening, NOT_LEADER_OR_FOLLOWER.
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
  // The durable prefix: every offset below it survives a power loss (its batches, their index entries as recovery
  // rebuilds them, their leader epochs); equal to recovery_point(). It moves up with sync rounds (flush(), group
  // commit, a roll's sync) and down only with truncate_to, which leaves it at the cut.
  int64_t durable_end_offset() const { return recovery_point_; }
  // REQUIRES: log start <= offset <= log end. With high_watermark_follows_log_end = false the caller alone moves
  // it (down too); appends never do.
  void set_high_watermark(int64_t offset);

  // ---- Replication ----
  // Appends whole batches that a leader wrote, with their offsets and partition leader epochs, byte for byte: no
  // offset assignment, no LogAppendTime stamp (options.log_append_time and options.leader_epoch must be unset).
  // Refused, with nothing written: not whole well-formed batches or a CRC mismatch (CORRUPT_MESSAGE); more than
  // segment.bytes (RECORD_LIST_TOO_LARGE); a first base offset other than the log end, or a batch not starting right
  // after the previous one's last offset (kInvalidArgument, INVALID_REQUEST); a partition leader epoch below the
  // previous batch's or the log's latest epoch (kInvalidArgument, INVALID_REQUEST). Durability, rolls, indexes,
  // preallocation and defer_sync as append(). The leader path edits its batches with set_offsets_and_epoch
  // (record_batch.h) and calls this, or calls append() with AppendOptions::leader_epoch.
  Result<AppendResult> append_as_replica(ByteView batches, const AppendOptions& options = {});
  // Kafka's Log.truncateTo: removes every batch at or above `end_offset`. kInvalidArgument (INVALID_REQUEST, the
  // log unchanged) unless log start <= end_offset <= log end and no batch straddles it (it starts a batch, lies in
  // a gap compaction left, or is the log end). Later segments go (renamed `.deleted`, newest first, directory
  // synced), the segment holding the cut is cut with its indexes, and the whole remaining log is synced before the
  // return: log end = durable end = end_offset, high watermark and recovery point at most end_offset, position hints
  // forgotten, the epoch cache cut (leader-epoch-checkpoint rewritten), partition.state rewritten. A power loss at
  // any step recovers a valid log ending at end_offset or holding a prefix of the old suffix above it. Waits for
  // appends in flight and for a running sync round; an append or durability wait whose offsets were cut fails with
  // NOT_LEADER_OR_FOLLOWER. A disk error part-way takes the log offline. No-op at the log end. Must not race a
  // cleaner pass, retention or DeleteRecords on the same log: LogManager::truncate_to takes their maintenance turn.
  Status truncate_to(int64_t end_offset);
  // Kafka's truncateFullyAndStartAt, for a replica whose leader no longer holds the entries it needs (raft's
  // InstallSnapshot of an empty snapshot): every segment goes (renamed `.deleted`, directory synced), one empty
  // segment starts at `offset`, and log start = log end = high watermark = durable end = offset. `epoch` (>= 0, or
  // -1 for none) is the epoch of the last offset before it, kept as the epoch cache's only entry (at `offset`), so
  // that the empty log still answers its last epoch. Durable on return. REQUIRES offset >= log start (the log start
  // only moves forward). A power loss part-way leaves an empty log, at the old log start or at `offset`. Must not
  // race a cleaner pass, retention or DeleteRecords on the same log.
  Status restart_at(int64_t offset, int32_t epoch);
  // The base offset of the batch holding `offset` (the first batch after it when it lies in a gap compaction left;
  // the log end when none follows). OFFSET_OUT_OF_RANGE unless log start <= offset < log end. An offset index lookup
  // and a short header walk. A cut of the segment under the lookup (a truncation beside it) makes it start over,
  // as read() does.
  Result<int64_t> batch_base_offset_containing(int64_t offset);
  // The header of the batch holding `offset` (or the first after it, past a gap), across segments; nullopt when no
  // batch follows. Read without the batch (so without its CRC): two reads must agree on its offsets, epoch and
  // max timestamp. A cut under the lookup fails it.
  Result<std::optional<BatchHeader>> batch_header_containing(int64_t offset) const {
    return first_batch_ending_at_or_after(offset);
  }
  // The leader epoch of the batch holding `offset`, by the epoch cache: nullopt outside [log start, log end) or
  // when no epoch covers it (batches written without one, -1). A batch whose epoch is below the latest one when
  // appended (a client's, through append()) is counted in the epoch then in force.
  std::optional<int32_t> epoch_at(int64_t offset) const;
  std::optional<int32_t> latest_epoch() const { return epochs_.latest_epoch(); }
  // OffsetForLeaderEpoch (Kafka 3.9's LeaderEpochFileCache.endOffsetFor, leader_epoch_cache.h): the largest epoch
  // <= `requested` and the start of the next larger one, or the log end for the latest; (-1, -1) when undefined.
  EpochEndOffset end_offset_for_epoch(int32_t requested) const {
    return epochs_.end_offset_for(requested, log_end_offset_);
  }
  // The largest offset <= at_or_below_offset in [log start, log end) whose epoch is <= `epoch` (offsets no epoch
  // covers count as -1); -1 when there is none. Not necessarily a batch boundary: see batch_base_offset_containing.
  int64_t last_offset_with_epoch_at_most(int64_t at_or_below_offset, int32_t epoch) const;
  // (epoch, start offset) entries, strictly increasing in both, starting at or above the log start.
  const std::vector<EpochEntry>& leader_epochs() const { return epochs_.entries(); }

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
  // Syncs everything appended so far (group commit with concurrent appenders): on success durable_end_offset() is at
  // least the log end as of the call. Raft's "sync the log".
  Status flush();
  // Returns once the offsets below `end_offset` are as durable as an acknowledgement needs: synced (sharing
  // group-commit rounds) when persisted, at once otherwise. Errors: the log failed, it was closed before they were
  // synced, or truncate_to cut them (NOT_LEADER_OR_FOLLOWER; after a cut, offsets may hold other batches, so the
  // caller that must know whose batches are durable checks their epoch).
  Status wait_for_durability(int64_t end_offset);
  // True when nothing below `end_offset` waits for a sync before it may be acknowledged.
  bool durable_through(int64_t end_offset) const {
    return !settings_.persisted || recovery_point_ >= end_offset;
  }

  // Bytes of the log from the batch holding `offset` to the end (retention.bytes counts from the log start).
  // REQUIRES: log start <= offset <= log end.
  Result<uint64_t> size_from(int64_t offset);
  std::vector<SegmentInfo> segments() const;
  std::vector<SegmentFiles> segment_files() const;  // in the order of segments()
  size_t pending_deletions() const { return pending_deletes_.size(); }
  const LoadStats& load_stats() const { return load_stats_; }
  const LogStats& stats() const { return stats_; }
  bool sync_running() const { return syncing_; }  // a group-commit round is in progress (tests)
  const LogSettings& settings() const { return settings_; }
  const std::string& dir() const { return dir_; }
  // Offline: a sync of any file the log keeps failed (a segment, an index, the directory, partition.state,
  // leader-epoch-checkpoint, a cleaner swap), or an I/O error hit a write. Final until the log is opened again
  // (fsyncgate: a retried sync that succeeds proves nothing): appends, truncations, log start moves, rolls and
  // flushes fail with this (KAFKA_STORAGE_ERROR, naming the cause); reads go on.
  bool offline() const { return !failed_.ok(); }
  const Status& offline_reason() const { return failed_; }
  // Takes the log offline for a failed sync outside it that its recovery relies on (the cleaner checkpoint).
  void take_offline(const Status& cause);
  Buggify& buggify() const { return env_.buggify; }  // the cleaner's fault points
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
  // The part of an append under the append lock once offsets are known: roll, epoch cache (its file first), write,
  // log end, high watermark. `bytes`: the batches' total size.
  Status write_locked(std::span<const ByteView> parts, std::span<const BatchSpan> spans, uint64_t bytes,
                      AppendResult& result);
  // After the lock: the sync an append owes (persisted, flush.messages) and the result's last fields.
  Result<AppendResult> finish_append(AppendResult result, const AppendOptions& options);
  // append_as_replica's checks of its split batches against the log end and latest epoch (CRCs are checked first).
  Status check_replica_batches(ByteView batches, std::span<const BatchSpan> spans) const;
  Status save_leader_epochs(const LeaderEpochCache& epochs);  // REQUIRES: the append lock (or the open)
  Status load_leader_epochs();
  Status rebuild_leader_epochs();
  Result<LeaderEpochCache> walk_leader_epochs() const;  // one walk of rebuild_leader_epochs
  // Whether the last batch's epoch is what the cache says of it (a stale or foreign file fails this).
  Result<bool> leader_epochs_agree_with_last_batch() const;
  // The header of the first batch whose last offset is >= `offset`, across segments; nullopt when none is. With
  // `cut` set, a cut of a segment under the lookup sets *cut and answers nullopt instead of failing.
  Result<std::optional<BatchHeader>> first_batch_ending_at_or_after(int64_t offset, bool* cut = nullptr) const;
  // Before a read that a cut interrupted starts over: until a running truncation (or a rollback's cut) is done.
  void wait_for_cut();
  Status cut_suffix(int64_t end_offset);  // truncate_to's work on the files, as the flusher (syncing_)
  Status truncated_error(int64_t end_offset) const;  // NOT_LEADER_OR_FOLLOWER: [.., end_offset) was cut
  Result<std::optional<ReadResult>> read_once(int64_t offset, size_t max_bytes, int64_t upper_bound_offset);
  bool should_roll(const Segment& segment, uint64_t incoming_bytes, int64_t incoming_max_timestamp,
                   int64_t last_offset);
  Status roll_locked();
  Status swap_in(int64_t first_base, const std::vector<std::shared_ptr<Segment>>& old, ByteView cleaned,
                 std::unique_ptr<Segment>& fresh);
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
    std::array<uint8_t, 4> epoch{};                                 // CreateTime with leader_epoch: bytes 12..16
    std::vector<ByteView> parts;
    // Empties it for the next append, keeping the vectors' room (a large copy's is given back).
    void clear();
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
  OutgoingBatches outgoing_;  // the append holding the append guard's; reused for its room
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
  // One entry per leader epoch (leader-epoch-checkpoint). Changed with log_end_offset_ (after the batches are
  // written) under the append lock; its file is written before the batches that start an epoch, and after a
  // truncation is durable, so the file never lacks an entry a durable batch needs (it may hold entries above the
  // durable end or below the log start, which open() drops).
  LeaderEpochCache epochs_;
  bool epochs_unsaved_ = false;  // the file may differ from epochs_ above the log start: rewrite it before a write
  // There is no file (a new partition, or one from before it existed): epochs_ is the truth, and the file is written
  // with the next change of the entries or at close (a new partition's creation costs no extra syncs).
  bool epochs_file_missing_ = false;
  bool truncating_ = false;      // truncate_to is cutting files: a read it cut under waits for it, then retries
  WaitQueue truncation_done_;
  friend class LogLoader;
};

}  // namespace sluice::storage
