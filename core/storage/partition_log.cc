#include "core/storage/partition_log.h"

#include <algorithm>
#include <exception>

#include "core/base/assert.h"
#include "core/env/buggify.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_format.h"
#include "core/storage/log_loader.h"
#include "core/storage/partition_log_internal.h"

namespace sluice::storage {

namespace {

// flush.ms and file.delete.delay.ms above this are "never" (Kafka's Long.MAX default would overflow an Instant).
constexpr int64_t kNeverMs = int64_t{1} << 40;
// Of the appends a BUGGIFY run's early-roll site sees, those that roll first: often enough to give every log many
// small segments, rarely enough that a run does not spend itself opening files.
constexpr double kBuggifyEarlyRollChance = 0.02;

Duration ms(int64_t value) { return std::chrono::milliseconds(value); }

}  // namespace

PartitionLog::PartitionLog(Env env, std::string dir, LogSettings settings)
    : env_(env),
      dir_(std::move(dir)),
      settings_(settings),
      append_waiters_(env.scheduler),
      sync_done_(env.scheduler),
      truncation_done_(env.scheduler) {
  SLUICE_ASSERT(settings_.segment_bytes > 0);
  SLUICE_ASSERT(settings_.segment_ms > 0);
  SLUICE_ASSERT(settings_.flush_messages > 0);
  last_flush_ = env_.clock.now();
}

PartitionLog::~PartitionLog() {
  // Destroyed open by a running fiber (an unclean stop in tests): a housekeeping pass in progress, such as a
  // replicated roll's background sync, finishes first instead of resuming into a freed log. A node kill unwinds
  // the housekeeping fiber before the fibers that own logs (newest first), so it never waits here.
  if (background_ != nullptr && background_->busy && std::uncaught_exceptions() == 0 && env_.scheduler.in_fiber()) {
    stop_background();
  }
  if (background_ != nullptr) {
    SLUICE_ASSERT_MSG(!background_->busy, "a PartitionLog destroyed while its housekeeping runs");
    background_->log = nullptr;
    background_->stop = true;
    background_->wake.notify_all();
  }
}

SegmentConfig PartitionLog::segment_config() const {
  return SegmentConfig{settings_.segment_index_bytes, settings_.index_interval_bytes, settings_.file_cache};
}

Segment& PartitionLog::active() const {
  SLUICE_ASSERT(!segments_.empty());
  return *segments_.rbegin()->second;
}

Result<std::unique_ptr<PartitionLog>> PartitionLog::open(Env env, std::string dir, LogSettings settings) {
  std::unique_ptr<PartitionLog> log(new PartitionLog(env, std::move(dir), settings));
  SLUICE_ASSIGN_OR_RETURN(LoadedLog loaded, LogLoader::load(env, log->dir_, log->segment_config()));
  log->segments_ = std::move(loaded.segments);
  log->log_start_offset_ = loaded.log_start_offset;
  log->load_stats_ = loaded.stats;
  const bool reuse_offsets = settings.mutations.has(Mutation::kOffsetsReusedAfterRecovery);
  if (reuse_offsets) [[unlikely]] SLUICE_TRY(log->planted_offset_reuse());
  if (log->segments_.empty()) {
    // A new log, or one whose every segment lay below the log start: it starts empty at the log start.
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Segment> first,
                            Segment::create(env, log->dir_, log->log_start_offset_, log->segment_config()));
    log->segments_.emplace(log->log_start_offset_, std::move(first));
    ++log->dir_changes_;
  }
  SLUICE_TRY(log->active().ensure_open());  // the loader closed every segment it loaded but the last listed
  const int64_t jitter = std::min(settings.segment_jitter_ms, settings.segment_ms);
  log->active().set_roll_jitter_ms(jitter > 0 ? static_cast<int64_t>(env.random.uniform(jitter)) : 0);
  log->log_end_offset_ = log->active().next_offset();
  log->recovery_point_ = log->log_end_offset_;
  log->high_watermark_ = settings.high_watermark_follows_log_end ? log->log_end_offset_ : log->log_start_offset_;
  SLUICE_TRY(log->load_leader_epochs());  // after every cut recovery made: the cache follows the log
  SLUICE_TRY(log->write_state());  // also syncs the directory (a new first segment)
  log->verify_invariants();
  log->start_background();
  return log;
}

Status PartitionLog::check_appendable() const {
  if (closed_) return closed(dir_ + ": the log is closed");
  return failed_;
}

void PartitionLog::take_offline(const Status& cause) { static_cast<void>(fail(cause)); }

Status PartitionLog::fail(Status cause) {
  SLUICE_ASSERT(!cause.ok());
  if (failed_.ok()) {
    env_.log.error("{}: taking the log offline: {}", dir_, cause.message());
    failed_ = Status(cause.code() == Code::kNoSpace ? Code::kNoSpace : Code::kIoError,
                     dir_ + ": the log is offline after a disk failure (" + cause.message() + ")",
                     static_cast<int16_t>(ErrorCode::kKafkaStorageError));
  }
  return failed_;
}

Result<AppendResult> PartitionLog::append(ByteView batches, const AppendOptions& options) {
  SLUICE_TRY(check_appendable());
  size_t consumed = 0;
  Result<std::vector<BatchSpan>> split = split_batches(batches, &consumed);
  if (!split.ok() || split->empty() || consumed != batches.size()) {
    return kafka_error(ErrorCode::kCorruptMessage, "append: the input is not a sequence of whole batches");
  }
  if (static_cast<int64_t>(batches.size()) > settings_.segment_bytes) {
    return kafka_error(ErrorCode::kRecordListTooLarge, "a batch set of " + std::to_string(batches.size()) +
                                                           " bytes exceeds segment.bytes " +
                                                           std::to_string(settings_.segment_bytes));
  }
  std::vector<BatchSpan> spans = std::move(*split);
  AppendResult result;
  {
    AppendGuard lock(*this);
    SLUICE_TRY(check_appendable());  // closed or failed while this fiber waited for the lock
    const std::optional<int32_t> latest = epochs_.latest_epoch();
    if (options.leader_epoch.has_value() && latest.has_value() && *options.leader_epoch < *latest) {
      return Status(Code::kInvalidArgument,
                    dir_ + ": append in leader epoch " + std::to_string(*options.leader_epoch) +
                        ", below the log's latest epoch " + std::to_string(*latest),
                    static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower));
    }
    OutgoingBatches& outgoing = outgoing_;  // only the guard's holder uses it: its room serves every append
    outgoing.clear();
    result = assign_offsets(batches, spans, options, &outgoing);
    SLUICE_TRY(write_locked(outgoing.parts, spans, batches.size(), result));
  }
  return finish_append(std::move(result), options);
}

void PartitionLog::OutgoingBatches::clear() {
  constexpr size_t kKeptCopyBytes = 64 * 1024;  // a LogAppendTime copy of a large request is not kept per log
  copy.clear();
  if (copy.capacity() > kKeptCopyBytes) Bytes().swap(copy);
  base_offsets.clear();
  parts.clear();
}

// Under CreateTime only each batch's base offset changes, and it lies outside the CRC: the batches go to disk
// from the caller's buffer, each behind its 8 new bytes. LogAppendTime rewrites timestamps and the CRC too, so
// those batches are copied and edited.
AppendResult PartitionLog::assign_offsets(ByteView batches, std::vector<BatchSpan>& spans,
                                          const AppendOptions& options, OutgoingBatches* out) {
  AppendResult result;
  result.base_offset = log_end_offset_;
  if (options.log_append_time) {
    result.log_append_time_ms = to_unix_ms(env_.clock.wall_now());
    out->copy.assign(batches.begin(), batches.end());
    out->parts.push_back(ByteView(out->copy));
  } else {
    out->base_offsets.reserve(spans.size());  // no reallocation: parts view its elements
    out->parts.reserve(4 * spans.size());
  }
  const std::optional<int32_t> epoch = options.leader_epoch;
  if (epoch.has_value()) put_be(out->epoch.data(), static_cast<uint32_t>(*epoch), out->epoch.size());
  int64_t next = log_end_offset_;
  for (BatchSpan& span : spans) {
    const size_t size = span.header.size_bytes();
    if (options.log_append_time) {
      MutableByteView bytes(out->copy.data() + span.position, size);
      set_base_offset(bytes, next);
      if (epoch.has_value()) set_partition_leader_epoch(bytes, *epoch);
      set_log_append_time(bytes, result.log_append_time_ms);
      Result<BatchHeader> header = parse_batch_header(bytes);
      SLUICE_ASSERT(header.ok());
      span.header = *header;
    } else if (epoch.has_value()) {
      // base offset (new), batch length (kept), epoch (new), the rest (kept): one gathered write still.
      constexpr size_t kEpochAt = kBaseOffsetBytes + 4;
      out->base_offsets.push_back(encode_base_offset(next));
      out->parts.push_back(ByteView(out->base_offsets.back()));
      out->parts.push_back(batches.subspan(span.position + kBaseOffsetBytes, kEpochAt - kBaseOffsetBytes));
      out->parts.push_back(ByteView(out->epoch));
      out->parts.push_back(batches.subspan(span.position + kEpochAt + 4, size - kEpochAt - 4));
      span.header.base_offset = next;
      span.header.partition_leader_epoch = *epoch;
    } else {
      out->base_offsets.push_back(encode_base_offset(next));
      out->parts.push_back(ByteView(out->base_offsets.back()));
      out->parts.push_back(batches.subspan(span.position + kBaseOffsetBytes, size - kBaseOffsetBytes));
      span.header.base_offset = next;
    }
    SLUICE_ASSERT(!epoch.has_value() || span.header.partition_leader_epoch == *epoch);
    SLUICE_ASSERT(span.header.base_offset == next);
    next = span.header.last_offset() + 1;
  }
  result.last_offset = next - 1;
  SLUICE_ASSERT(result.last_offset >= result.base_offset);
  return result;
}

void PartitionLog::advance_high_watermark() {
  if (!settings_.high_watermark_follows_log_end) return;
  // Persisted: a consumer must not see what a power loss could still take back.
  const int64_t visible = settings_.persisted ? std::min(recovery_point_, log_end_offset_) : log_end_offset_;
  high_watermark_ = std::max(high_watermark_, visible);
  SLUICE_ASSERT(high_watermark_ <= log_end_offset_);
}

// storage-semantics.md §2, roll rules (a)-(d).
bool PartitionLog::should_roll(const Segment& segment, uint64_t incoming_bytes, int64_t incoming_max_timestamp,
                               int64_t last_offset) {
  // A roll at an odd moment: segment boundaries are no contract, and every reader, index, cleaner group and retention
  // pass must cope with a segment of any size (a few appends each).
  if (!segment.empty() && SLUICE_BUGGIFY_P(env_.buggify, "log.early-roll", kBuggifyEarlyRollChance)) return true;
  if (static_cast<int64_t>(segment.size_bytes()) > settings_.segment_bytes - static_cast<int64_t>(incoming_bytes)) {
    return true;
  }
  if (!segment.empty()) {  // an empty segment never rolls on time
    const int64_t first = segment.first_batch_max_timestamp();
    const int64_t waited =
        first >= 0
            ? incoming_max_timestamp - first
            : std::chrono::duration_cast<std::chrono::milliseconds>(env_.clock.now() - segment.created_at()).count();
    if (waited > settings_.segment_ms - segment.roll_jitter_ms()) {
      SLUICE_PROBE("partition_log.roll_by_time");
      return true;
    }
  }
  if (segment.indexes_full()) {
    SLUICE_PROBE("partition_log.roll_by_index_full");
    return true;
  }
  if (last_offset - segment.base_offset() > kMaxRelativeOffset) {
    SLUICE_PROBE("partition_log.roll_by_offset_overflow");
    return true;
  }
  return false;
}

// A `persisted` log syncs the old segment before the new one exists (at most one round's appends are unsynced).
// A `replicated` one leaves that to its background fiber, as Kafka flushes a rolled segment asynchronously:
// syncing a whole segment of page cache (about a second per GiB here) would stall every append behind the roll.
// Until that flush, the recovery point stays below the rolled segment's end, so recovery after a power loss
// scans it and may cut its torn tail (log_loader.cc); a closed segment below the recovery point is always whole,
// which is what lets recovery call damage there damage.
Status PartitionLog::roll_locked() {
  Segment& old = active();
  SLUICE_ASSERT(!old.empty());
  SLUICE_ASSERT(old.next_offset() == log_end_offset_);
  // A seal refused for space wrote nothing (the time index's last entry goes in after its write): the roll, and
  // the append that wanted it, are refused and the log stays as it was. A failed sync is final.
  Status sealed = old.seal();
  if (!sealed.ok()) return sealed.code() == Code::kNoSpace ? sealed : fail(sealed);
  const bool sync_now = settings_.persisted || background_ == nullptr;
  if (sync_now) sealed = old.flush();
  if (!sealed.ok()) return fail(sealed);
  const int64_t old_end = old.next_offset();
  // Every earlier segment was synced by its roll or by the flush that followed it.
  if (sync_now && roll_flush_pending_ == 0) recovery_point_ = std::max(recovery_point_, old_end);
  Result<std::unique_ptr<Segment>> created = Segment::create(env_, dir_, log_end_offset_, segment_config());
  if (!created.ok()) return created.status().code() == Code::kIoError ? fail(created.status()) : created.status();
  std::unique_ptr<Segment> next = std::move(created).value();
  const int64_t jitter = std::min(settings_.segment_jitter_ms, settings_.segment_ms);
  next->set_roll_jitter_ms(jitter > 0 ? static_cast<int64_t>(env_.random.uniform(jitter)) : 0);
  segments_.emplace(log_end_offset_, std::move(next));
  ++dir_changes_;
  old.release_files();  // sealed and no longer active: its reads go through the file cache from now on
  advance_high_watermark();
  SLUICE_TRY(write_state());  // syncs the directory: the new segment's entries are durable
  if (!sync_now) {
    // Only now: these small syncs would otherwise queue behind the segment's writeback (100 ms and more here).
    roll_flush_pending_ = old_end;
    background_->wake.notify_all();
  }
  verify_invariants();
  return Status();
}

Status PartitionLog::roll() {
  SLUICE_TRY(check_appendable());
  AppendGuard lock(*this);
  if (active().empty()) return Status();
  return roll_locked();
}

Status PartitionLog::record_recovery_point() {
  AppendGuard lock(*this);
  if (closed_) return Status();  // close() wrote the state itself
  SLUICE_TRY(failed_);
  return write_state();
}

Status PartitionLog::write_state() {
  SLUICE_ASSERT(recovery_point_ <= log_end_offset_);
  const uint64_t changes = dir_changes_;
  const int64_t recovery_point = recovery_point_;
  Status written = write_partition_state(env_.fs, dir_, PartitionState{log_start_offset_, recovery_point});
  // A failed sync (of the file or the directory) is final; a full disk before it changed nothing.
  if (!written.ok()) return written.code() == Code::kIoError ? fail(written) : written;
  recorded_recovery_point_ = recovery_point;
  dir_synced_ = std::max(dir_synced_, changes);
  return Status();
}

void PartitionLog::set_high_watermark(int64_t offset) {
  SLUICE_ASSERT(offset >= 0);
  SLUICE_ASSERT(offset <= log_end_offset_);
  high_watermark_ = offset;
}

Result<int64_t> PartitionLog::delete_records(int64_t offset, const LogStartMoved& on_moved) {
  const int64_t target = offset == -1 ? high_watermark_ : offset;
  if (target < 0 || target > high_watermark_) {
    return kafka_error(ErrorCode::kOffsetOutOfRange, dir_ + ": cannot delete records before offset " +
                                                         std::to_string(offset) + ", the high watermark is " +
                                                         std::to_string(high_watermark_));
  }
  SLUICE_TRY(advance_log_start(target, on_moved));
  return log_start_offset_;
}

Status PartitionLog::advance_log_start(int64_t offset, const LogStartMoved& on_moved) {
  SLUICE_ASSERT(offset <= high_watermark_);
  SLUICE_ASSERT(high_watermark_ <= log_end_offset_);
  SLUICE_TRY(check_appendable());
  AppendGuard lock(*this);
  if (offset <= log_start_offset_) return Status();
  const int64_t from = log_start_offset_;
  log_start_offset_ = offset;
  // Kafka's truncateFromStart. The file is not rewritten for it: an entry below the log start is dropped at open.
  epochs_.truncate_from_start(offset);
  if (on_moved) on_moved(from, offset);  // no suspension since the move: nobody has seen it yet
  return write_state();
}

Result<size_t> PartitionLog::remove_segments_below_log_start() {
  SLUICE_TRY(check_appendable());
  AppendGuard lock(*this);
  size_t removed = 0;
  while (segments_.size() > 1 && std::next(segments_.begin())->first <= log_start_offset_) {
    std::shared_ptr<Segment> segment = segments_.begin()->second;
    segments_.erase(segments_.begin());  // out of the map at once; readers holding it finish their read
    SLUICE_ASSERT(segment->next_offset() <= log_start_offset_);
    if (Status renamed = segment->rename_files(kDeletedSuffix); !renamed.ok()) {
      return renamed.code() == Code::kIoError ? fail(renamed) : renamed;
    }
    const Instant due = env_.clock.now() + ms(std::min(settings_.file_delete_delay_ms, kNeverMs));
    pending_deletes_.push_back(
        PendingDelete{due, {segment->log_path(), segment->index_path(), segment->time_index_path()}});
    ++removed;
  }
  if (removed > 0 && background_ != nullptr) background_->wake.notify_all();
  SLUICE_ASSERT(segments_.begin()->first <= log_start_offset_ || segments_.size() == 1);
  return removed;
}

Status PartitionLog::replace_segments(int64_t first_base, int64_t end_offset, ByteView cleaned) {
  SLUICE_TRY(check_appendable());
  AppendGuard lock(*this);
  std::vector<std::shared_ptr<Segment>> old;
  for (auto it = segments_.lower_bound(first_base); it != segments_.end() && it->first < end_offset; ++it)
    old.push_back(it->second);
  if (old.empty() || old.front()->base_offset() != first_base || segments_.rbegin()->first < end_offset) {
    // Only a replica's log changes outside the maintenance turn: its raft group restarted it at the leader's log
    // start, or dropped the segments below the leader's. The pass's result is moot; nothing is swapped.
    SLUICE_PROBE("partition_log.cleaned_segments_gone");
    SLUICE_ASSERT(!settings_.high_watermark_follows_log_end);
    return Status(Code::kInvalidArgument, dir_ + ": the segments a cleaner pass read changed under it");
  }
  SLUICE_ASSERT(!cleaned.empty() || first_base != segments_.begin()->first);
  // A cleaned segment may end short of the next one's base: above the recorded recovery point, recovery would cut
  // there as if a power loss took those batches. Synced below the next segment only: never the active one here.
  if (recorded_recovery_point_ < end_offset) {
    const int64_t next_base = segments_.lower_bound(end_offset)->first;
    SLUICE_TRY(sync_through(end_offset, /*below=*/next_base));
    SLUICE_TRY(write_state());
  }
  std::unique_ptr<Segment> fresh;
  const Status swapped = swap_in(first_base, old, cleaned, fresh);
  // Any I/O error here is final: a failed sync (fsyncgate), or a swap left half done on disk. A full disk while
  // the cleaned file was written changed nothing the log reads (swap_in reports a full disk after that as I/O).
  if (!swapped.ok()) return swapped.code() == Code::kNoSpace ? swapped : fail(swapped);
  const Instant due = env_.clock.now() + ms(std::min(settings_.file_delete_delay_ms, kNeverMs));
  for (const std::shared_ptr<Segment>& segment : old) {
    segments_.erase(segment->base_offset());  // with the insert below, one step for readers
    pending_deletes_.push_back(
        PendingDelete{due, {segment->log_path(), segment->index_path(), segment->time_index_path()}});
  }
  if (fresh != nullptr) segments_.emplace(first_base, std::move(fresh));
  return Status();
}

// replace_segments' work on the files: `cleaned` synced as `.cleaned`, renamed `.swap` (from then on recovery
// finishes the swap), the old segments renamed `.deleted`, the swap renamed `.log` and opened with rebuilt indexes.
Status PartitionLog::swap_in(int64_t first_base, const std::vector<std::shared_ptr<Segment>>& old, ByteView cleaned,
                             std::unique_ptr<Segment>& fresh) {
  const std::string log_name = join_path(dir_, segment_file_name(first_base, kLogSuffix));
  int64_t written_next = first_base;  // where the cleaned batches end, from the bytes in memory
  if (!cleaned.empty()) {
    size_t consumed = 0;
    Result<std::vector<BatchSpan>> batches = split_batches(cleaned, &consumed);
    SLUICE_ASSERT(batches.ok() && !batches->empty() && consumed == cleaned.size());  // the cleaner's own output
    written_next = batches->back().header.last_offset() + 1;
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file,
                            env_.fs.open(log_name + std::string(kCleanedSuffix), OpenMode::kCreateTruncate));
    SLUICE_TRY(file->append(cleaned));
    SLUICE_TRY(sync_failure(file->sync()));
    SLUICE_TRY(file->close());
    SLUICE_TRY(env_.fs.rename(log_name + std::string(kCleanedSuffix), log_name + std::string(kSwapSuffix)));
    SLUICE_TRY(sync_failure(env_.fs.sync_dir(dir_)));  // from here on recovery finishes the swap
  }
  // From here the swap is half done on disk whatever fails (the rebuilt indexes need space too): a full disk is
  // final like any other error, and recovery at the next start finishes the swap.
  const auto finish = [&]() -> Status {
    for (const std::shared_ptr<Segment>& segment : old) SLUICE_TRY(segment->rename_files(kDeletedSuffix));
    if (cleaned.empty()) return sync_failure(env_.fs.sync_dir(dir_));
    SLUICE_TRY(env_.fs.rename(log_name + std::string(kSwapSuffix), log_name));
    SLUICE_ASSIGN_OR_RETURN(fresh, Segment::open(env_, dir_, first_base, segment_config()));
    SLUICE_ASSIGN_OR_RETURN(SegmentScan scan, fresh->recover());  // rebuilds both indexes
    // The file was synced whole before the swap: a scan that finds damage, or ends elsewhere than the bytes written
    // (a base offset lies outside the batch CRC: read_corruption seed 53727 with BUGGIFY ended a cleaned segment at
    // offset 268436255), read a bad copy; read it again.
    const auto as_written = [&](const SegmentScan& s) {
      return s.clean() && s.valid_bytes == cleaned.size() && s.next_offset == written_next;
    };
    for (int scans = 1; !as_written(scan) && scans < 4; ++scans) {
      SLUICE_PROBE("partition_log.cleaned_segment_scanned_again");
      SLUICE_ASSIGN_OR_RETURN(scan, fresh->recover());
    }
    if (!scan.clean()) return Status(Code::kCorruption, log_name + ": cleaned segment: " + scan.problem);
    if (!as_written(scan)) {
      return Status(Code::kCorruption, log_name + ": cleaned segment: scanned to offset " +
                                           std::to_string(scan.next_offset) + ", written to " +
                                           std::to_string(written_next));
    }
    SLUICE_TRY(sync_failure(fresh->flush()));
    fresh->release_files();  // never the active segment
    return sync_failure(env_.fs.sync_dir(dir_));
  };
  Status finished = finish();
  if (finished.code() == Code::kNoSpace) {
    SLUICE_PROBE("partition_log.swap_out_of_space_past_its_point");
    return Status(Code::kIoError,
                  finished.message() + " (after the cleaner's swap point: the log stops until a restart finishes it)",
                  wire_code(ErrorCode::kKafkaStorageError));
  }
  return finished;
}

Status PartitionLog::delete_expired_files(Instant now) {
  for (auto it = pending_deletes_.begin(); it != pending_deletes_.end();) {
    if (it->due > now) {
      ++it;
      continue;
    }
    for (const std::string& path : it->paths) {
      Status removed = env_.fs.remove(path);
      if (!removed.ok() && removed.code() != Code::kNotFound) return removed;
    }
    it = pending_deletes_.erase(it);
  }
  return Status();
}

Status PartitionLog::run_housekeeping(Instant now) {
  SLUICE_TRY(delete_expired_files(now));
  SLUICE_TRY(flush_rolled_segments());
  if (settings_.flush_ms >= kNeverMs || now - last_flush_ < ms(settings_.flush_ms)) return Status();
  if (recovery_point_ == log_end_offset_) {
    last_flush_ = now;  // nothing to sync: the next check is flush.ms from now, not at once
    return Status();
  }
  SLUICE_PROBE("partition_log.flush_by_time");
  return flush();
}

std::optional<Instant> PartitionLog::next_housekeeping() const {
  if (roll_flush_pending_ != 0) return env_.clock.now();
  std::optional<Instant> due;
  for (const PendingDelete& pending : pending_deletes_) {
    if (!due.has_value() || pending.due < *due) due = pending.due;
  }
  if (settings_.flush_ms < kNeverMs && failed_.ok()) {  // an offline log never syncs again: nothing is due
    const Instant flush_due = last_flush_ + ms(settings_.flush_ms);
    if (!due.has_value() || flush_due < *due) due = flush_due;
  }
  return due;
}

void PartitionLog::start_background() {
  SLUICE_ASSERT(background_ == nullptr);
  background_ = std::make_shared<Background>(env_.scheduler);
  background_->log = this;
  std::shared_ptr<Background> shared = background_;
  Clock& clock = env_.clock;
  background_->fiber = env_.scheduler.spawn("log-housekeeping", [shared, &clock] {
    while (!shared->stop) {
      const std::optional<Instant> due = shared->log->next_housekeeping();
      if (due.has_value()) {
        shared->wake.wait_until(std::max(*due, clock.now()));
      } else {
        shared->wake.wait();
      }
      if (shared->stop) break;
      shared->busy = true;
      struct Idle {
        Background* background;
        ~Idle() { background->busy = false; }
      } idle{shared.get()};
      Status done = shared->log->run_housekeeping(clock.now());
      if (!done.ok()) shared->log->env_.log.warn("{}: housekeeping failed: {}", shared->log->dir_, done.message());
    }
  });
}

void PartitionLog::stop_background() {
  if (background_ == nullptr) return;
  background_->stop = true;
  background_->wake.notify_all();
  if (env_.scheduler.in_fiber() && !background_->fiber.done()) env_.scheduler.join(background_->fiber);
  background_->log = nullptr;
  background_.reset();
}

void PartitionLog::update_settings(const LogSettings& settings) {
  SLUICE_ASSERT(settings.segment_bytes > 0);
  SLUICE_ASSERT(settings.flush_messages > 0);
  settings_ = settings;
  for (const auto& [base, segment] : segments_) segment->set_config(segment_config());
  if (background_ != nullptr) background_->wake.notify_all();  // flush.ms or the delete delay may have changed
}

std::vector<SegmentInfo> PartitionLog::segments() const {
  std::vector<SegmentInfo> out;
  for (const auto& [base, s] : segments_) {
    const size_t in_memory = (s->offset_index().entries_loaded() ? s->offset_index().entry_count() : 0) +
                             (s->time_index().entries_loaded() ? s->time_index().entry_count() : 0);
    out.push_back(SegmentInfo{base, s->next_offset(), s->size_bytes(), s->max_timestamp(),
                              s->first_batch_max_timestamp(), in_memory});
  }
  return out;
}

std::vector<SegmentFiles> PartitionLog::segment_files() const {
  std::vector<SegmentFiles> out;
  for (const auto& [base, s] : segments_) out.push_back({s->log_path(), s->index_path(), s->time_index_path()});
  return out;
}

Status PartitionLog::close() {
  if (closed_) return closed(dir_ + ": the log is closed");
  stop_background();
  AppendGuard lock(*this);  // appends in flight finish first
  closed_ = true;
  SLUICE_TRY(failed_);  // no marker: the next open recovers
  while (syncing_) sync_done_.wait();
  Status sealed = active().seal();
  // The seal dirtied the active segment even when nothing else did; its indexes go too (the marker trusts them).
  if (sealed.ok()) sealed = sync_round(/*active_indexes=*/true);
  SLUICE_TRY(sealed);
  SLUICE_ASSERT(recovery_point_ == log_end_offset_);
  if (epochs_unsaved_ || epochs_file_missing_) SLUICE_TRY(save_leader_epochs(epochs_));
  SLUICE_TRY(write_state());
  const std::string marker = join_path(dir_, kCleanShutdownFileName);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env_.fs.open(marker, OpenMode::kCreateTruncate));
  SLUICE_TRY(file->append(encode_clean_shutdown(log_end_offset_)));
  SLUICE_TRY(file->sync());
  SLUICE_TRY(file->close());
  SLUICE_TRY(env_.fs.sync_dir(dir_));
  for (const auto& [base, segment] : segments_) SLUICE_TRY(segment->close());
  return Status();
}

Result<std::string> PartitionLog::repair(Env env, const std::string& dir) {
  return LogLoader::repair(env, dir, SegmentConfig{});
}

void PartitionLog::verify_invariants() const {
  SLUICE_ASSERT(log_start_offset_ <= log_end_offset_);
  SLUICE_ASSERT(high_watermark_ <= log_end_offset_);
  SLUICE_ASSERT(recovery_point_ <= log_end_offset_);
  SLUICE_ASSERT(active().next_offset() == log_end_offset_);
  SLUICE_ASSERT(epochs_.empty() || (epochs_.entries().front().start_offset >= log_start_offset_ &&
                                    epochs_.entries().back().start_offset <= log_end_offset_));
  SLUICE_VERIFY(([this] {
    int64_t previous_end = -1;
    for (const auto& [base, segment] : segments_) {
      if (segment->base_offset() != base || base < previous_end) return false;
      if (segment->next_offset() < base) return false;
      previous_end = segment->next_offset();
    }
    return true;
  }()));
}

}  // namespace sluice::storage
