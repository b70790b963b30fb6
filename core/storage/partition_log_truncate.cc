// PartitionLog::truncate_to: a suffix truncation (Kafka's Log.truncateTo; raft's "delete the conflicting entry and
// all that follow it"), durable before it returns, because raft may overwrite the range with other entries at once.
//
// The order, and what a power loss at each point leaves (recovery as log_loader.h describes):
//  1. The new end becomes visible in memory (log end, high watermark, recovery point): nothing on disk changes.
//  2. The segments wholly above the cut are renamed `.deleted`, newest first, then the directory is synced. A
//     power loss keeps a prefix of the renames, so a suffix of those segments is gone and the rest is a prefix of
//     the old log: valid, with part of the old suffix. Never a hole: the segment holding the cut is not cut yet.
//  3. The segment holding the cut is cut (.log, offset index, time index). Until its sync the cut may be lost,
//     which again leaves a prefix of the old log. The directory sync of step 2 is what keeps a cut segment from
//     being followed by an old later one. Recovery scans this segment whatever partition.state says: it is the last.
//  4. In a gap that compaction left (the batch before the cut ends below it), an empty segment is created at the
//     cut, so that the log end stays there across a reopen; the cut segment is sealed and synced first, so that a
//     power loss cannot keep the new segment while losing the cut (that would be an overlap, refused at load).
//  5. One sync round over every dirty segment and the directory: from here the log ends at the cut after any
//     power loss, and everything below it is durable.
//  6. The epoch cache is cut and its file rewritten: entries above the cut that outlived a power loss before this
//     point lie above the recovered log end, and open() drops them.
//  7. partition.state records the recovery point (the cut).
// Steps 2-4 run as the group commit's flusher (syncing_), so no sync round starts or runs meanwhile: a round that
// began before the cut would otherwise record a recovery point above it.
#include <algorithm>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_format.h"
#include "core/storage/partition_log.h"
#include "core/storage/partition_log_internal.h"

namespace sluice::storage {

Status PartitionLog::truncated_error(int64_t end_offset) const {
  return kafka_error(ErrorCode::kNotLeaderOrFollower, dir_ + ": offsets below " + std::to_string(end_offset) +
                                                          " were truncated to " + std::to_string(log_end_offset_) +
                                                          " before they were synced");
}

Status PartitionLog::truncate_to(int64_t end_offset) {
  SLUICE_TRY(check_appendable());
  AppendGuard lock(*this);
  SLUICE_TRY(check_appendable());
  if (end_offset < log_start_offset_ || end_offset > log_end_offset_) {
    return Status(Code::kInvalidArgument,
                  dir_ + ": cannot truncate to offset " + std::to_string(end_offset) + ": outside [log start " +
                      std::to_string(log_start_offset_) + ", log end " + std::to_string(log_end_offset_) + "]",
                  static_cast<int16_t>(ErrorCode::kInvalidRequest));
  }
  if (end_offset == log_end_offset_) return Status();
  SLUICE_ASSIGN_OR_RETURN(const std::optional<BatchHeader> next, first_batch_ending_at_or_after(end_offset));
  if (next.has_value() && next->base_offset < end_offset) {
    return Status(Code::kInvalidArgument,
                  dir_ + ": cannot truncate to offset " + std::to_string(end_offset) + ": it lies inside the batch [" +
                      std::to_string(next->base_offset) + ", " + std::to_string(next->last_offset()) +
                      "]; a truncation keeps or removes whole batches (truncate to " +
                      std::to_string(next->base_offset) + " or " + std::to_string(next->last_offset() + 1) + ")",
                  static_cast<int16_t>(ErrorCode::kInvalidRequest));
  }
  SLUICE_PROBE("partition_log.truncate_to");
  while (syncing_) sync_done_.wait();  // a round that started before the cut finishes first
  SLUICE_TRY(check_appendable());      // and may have failed
  syncing_ = true;
  truncating_ = true;
  Status cut = cut_suffix(end_offset);
  syncing_ = false;  // the round below takes over at once (no suspension in between): nobody else starts one
  truncating_ = false;
  truncation_done_.notify_all();  // readers the cut failed retry against what it left
  if (!cut.ok()) {
    sync_done_.notify_all();
    return fail(cut);
  }
  SLUICE_TRY(sync_round(/*active_indexes=*/true));  // notifies the waiters; a failure took the log offline
  SLUICE_ASSERT(recovery_point_ == end_offset);
  roll_flush_pending_ = 0;  // everything is synced: a rolled segment's background sync has nothing left to do
  epochs_.truncate_from_end(end_offset);
  // Written even when nothing changed in memory: a failed earlier rewrite may have left entries above the cut.
  SLUICE_TRY(save_leader_epochs(epochs_));
  SLUICE_TRY(write_state());
  verify_invariants();
  return Status();
}

Status PartitionLog::cut_suffix(int64_t end_offset) {
  SLUICE_ASSERT(syncing_ && append_locked_);
  SLUICE_ASSERT(end_offset >= log_start_offset_ && end_offset < log_end_offset_);
  // 1. Readers and durability waiters see the new end from here on.
  log_end_offset_ = end_offset;
  high_watermark_ = std::min(high_watermark_, end_offset);
  recovery_point_ = std::min(recovery_point_, end_offset);
  // 2. The segments above the cut, newest first (a power loss keeps a prefix of directory operations).
  const Instant due = env_.clock.now() + std::chrono::milliseconds(std::min<int64_t>(settings_.file_delete_delay_ms,
                                                                                       int64_t{1} << 40));
  bool renamed = false;
  while (segments_.rbegin()->first > end_offset) {
    SLUICE_ASSERT(segments_.size() > 1);  // the first segment's base is at or below the log start
    std::shared_ptr<Segment> segment = segments_.rbegin()->second;
    segments_.erase(std::prev(segments_.end()));  // readers holding it finish their read from the renamed files
    SLUICE_TRY(segment->rename_files(kDeletedSuffix));
    pending_deletes_.push_back(
        PendingDelete{due, {segment->log_path(), segment->index_path(), segment->time_index_path()}});
    renamed = true;
  }
  if (renamed) {
    SLUICE_TRY(env_.fs.sync_dir(dir_));
    if (background_ != nullptr) background_->wake.notify_all();  // the delayed unlinks
  }
  // 3. The segment holding the cut.
  Segment& last = active();
  SLUICE_ASSERT(last.base_offset() <= end_offset);
  SLUICE_TRY(last.truncate_to(end_offset));
  SLUICE_ASSERT(last.next_offset() <= end_offset);
  // 4. A gap before the cut: an empty segment at the cut keeps the log end there.
  if (last.next_offset() < end_offset) {
    SLUICE_PROBE("partition_log.truncate_into_gap");
    SLUICE_TRY(last.seal());
    SLUICE_TRY(last.flush());
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Segment> fresh, Segment::create(env_, dir_, end_offset, segment_config()));
    segments_.emplace(end_offset, std::move(fresh));
    ++dir_changes_;
    last.release_files();
  }
  SLUICE_ASSERT(active().next_offset() == end_offset);
  return Status();
}

Status PartitionLog::restart_at(int64_t offset, int32_t epoch) {
  SLUICE_ASSERT(epoch >= kUndefinedEpoch);
  SLUICE_TRY(check_appendable());
  AppendGuard lock(*this);
  SLUICE_TRY(check_appendable());
  SLUICE_ASSERT_MSG(offset >= log_start_offset_, "the log start only moves forward");
  SLUICE_PROBE("partition_log.restart_at");
  while (syncing_) sync_done_.wait();  // a round that started before the restart finishes first
  SLUICE_TRY(check_appendable());
  syncing_ = true;
  truncating_ = true;
  Status cut = [&]() -> Status {
    // Readers and durability waiters see the empty log from here on.
    log_start_offset_ = offset;
    log_end_offset_ = offset;
    high_watermark_ = offset;
    recovery_point_ = offset;
    const Instant due = env_.clock.now() + std::chrono::milliseconds(std::min<int64_t>(
                                               settings_.file_delete_delay_ms, int64_t{1} << 40));
    // Newest first, as truncate_to: a power loss keeps a prefix of the old log, then the directory sync makes it none.
    // The map keeps the old segments until the new one exists (their open files still read): other fibers (retention,
    // fetches) never see a log without a segment while this suspends.
    const std::vector<std::shared_ptr<Segment>> old = snapshot();
    for (auto it = old.rbegin(); it != old.rend(); ++it) {
      const std::shared_ptr<Segment>& segment = *it;
      SLUICE_TRY(segment->rename_files(kDeletedSuffix));
      pending_deletes_.push_back(
          PendingDelete{due, {segment->log_path(), segment->index_path(), segment->time_index_path()}});
    }
    SLUICE_TRY(env_.fs.sync_dir(dir_));
    if (background_ != nullptr) background_->wake.notify_all();  // the delayed unlinks
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Segment> fresh, Segment::create(env_, dir_, offset, segment_config()));
    segments_.clear();  // no suspension from here to the emplace
    segments_.emplace(offset, std::move(fresh));
    ++dir_changes_;
    return Status();
  }();
  syncing_ = false;
  truncating_ = false;
  truncation_done_.notify_all();
  sync_done_.notify_all();
  if (!cut.ok()) return fail(cut);
  roll_flush_pending_ = 0;
  epochs_ = epoch >= 0 ? LeaderEpochCache({EpochEntry{epoch, offset}}) : LeaderEpochCache();
  SLUICE_TRY(save_leader_epochs(epochs_));
  SLUICE_TRY(write_state());  // syncs the directory: the new segment is durable
  SLUICE_ASSERT(log_start_offset_ == offset && log_end_offset_ == offset && recovery_point_ == offset);
  verify_invariants();
  return Status();
}

}  // namespace sluice::storage
