// PartitionLog's group commit (durability=persisted, flush.messages, flush.ms, flush()): one sync round at a
// time covers everything appended before it started, and appends go on while it runs. A round syncs the active
// segment's .log only: its indexes are derived data that recovery always rebuilds (the loader scans the segment
// holding the recovery point, and the active one is never below it), so an acknowledgement does not wait for
// them; a roll and a clean close sync them. Any other dirty segment's index files are synced beside the
// flusher's .log sync, by appenders waiting for it or on fibers of their own.
#include "core/storage/partition_log.h"

#include <algorithm>
#include <chrono>

#include "core/base/assert.h"
#include "core/env/buggify.h"

namespace sluice::storage {
namespace {

// How late BUGGIFY's "log.late-sync" starts a group-commit round, at most: as a busy device's queue would.
constexpr int64_t kMaxLateSyncMs = 30;

}  // namespace

// One index fdatasync of a sync round, handed to a waiting appender (or a fiber of its own) so that the round's
// fdatasyncs overlap instead of adding up. Shared: neither fiber's stack holds it.
struct PartitionLog::SyncJob {
  SyncJob(Scheduler& scheduler, std::shared_ptr<Segment> of, bool time)
      : segment(std::move(of)), time_index(time), finished(scheduler) {}
  std::shared_ptr<Segment> segment;
  bool time_index;     // else the offset index
  bool taken = false;  // by a waiting appender, its own fiber, or the flusher
  bool done = false;
  Status status;
  WaitQueue finished;

  void run() {
    SLUICE_ASSERT(!done);
    taken = true;
    status = time_index ? segment->sync_time_index() : segment->sync_offset_index();
    done = true;
    finished.notify_all();
  }
};

// Group commit: one fiber at a time runs a sync round that covers everything written before it started; the
// others wait for it and check whether it covered them, so N waiting appenders share one round, not N. While
// they wait, one of them syncs the round's indexes (help_).
Status PartitionLog::sync_through(int64_t offset, int64_t below) {
  SLUICE_ASSERT(offset <= below);
  bool ran = false;
  bool waited = false;
  bool yielded = false;
  while (recovery_point_ < offset) {
    SLUICE_TRY(failed_);
    // A truncate_to cut these offsets (before this call, or while this fiber waited): no round can cover them.
    if (offset > log_end_offset_) return truncated_error(offset);
    if (!syncing_ && !yielded) {
      // Before starting a round, let the appenders that are ready to run append first so the round covers them:
      // the writers the last round just acknowledged come back with their next append, and without this the
      // rounds alternate between two halves of the writers. Costs nothing when no one else is runnable.
      yielded = true;
      if (SLUICE_BUGGIFY(env_.buggify, "log.late-sync")) {  // a round started late: appends and a truncate go on
        env_.scheduler.sleep_for(std::chrono::milliseconds(env_.buggify.random().uniform_range(1, kMaxLateSyncMs)));
      } else {
        env_.scheduler.yield();
      }
      continue;
    }
    if (syncing_) {
      waited = true;
      if (!help_.empty()) {
        const std::shared_ptr<SyncJob> job = std::move(help_.front());
        help_.pop_front();
        if (!job->taken) {  // else its own fiber got there first
          job->run();
          ++stats_.helped_index_syncs;
        }
      } else {
        sync_done_.wait();
      }
      continue;
    }
    if (below != kWholeLog && segments_.count(below) == 0 && below > segments_.begin()->first) {
      below = kWholeLog;  // a truncate_to removed that segment while this fiber waited: sync all there is
    }
    SLUICE_TRY(sync_round(/*active_indexes=*/false, below));
    ran = true;
  }
  if (waited && !ran) {
    SLUICE_PROBE("partition_log.group_commit_shared_sync");
    ++stats_.shared_syncs;
  }
  return Status();
}

// Syncs the .log of every dirty segment while waiting appenders, or fibers of their own, sync the indexes.
Status PartitionLog::sync_segments(const std::vector<std::shared_ptr<Segment>>& dirty, bool active_indexes) {
  std::vector<std::shared_ptr<SyncJob>> jobs;
  for (const std::shared_ptr<Segment>& segment : dirty) {
    if (!active_indexes && segment.get() == &active()) continue;  // recovery rebuilds them (top of file)
    for (const bool time_index : {false, true}) {
      // An unchanged index needs no sync and no fiber: most rounds add no entry (one per index.interval.bytes).
      if (!(time_index ? segment->time_index_unsynced() : segment->offset_index_unsynced())) continue;
      std::shared_ptr<SyncJob> job = std::make_shared<SyncJob>(env_.scheduler, segment, time_index);
      jobs.push_back(job);
      // Offered to every appender that comes to wait for this round while the .log syncs, not only to those
      // already waiting: after a round, the appenders it did not cover come back to wait only once the next
      // round has started. A fiber of its own runs it if none has by the time that fiber is scheduled (one
      // connection's pipelined produces: the flusher is the only one waiting).
      help_.push_back(job);
      sync_done_.notify_one();
      env_.scheduler.spawn("partition_log.index_sync", [job, &stats = stats_] {
        if (job->taken) return;  // a waiter took it (the log may be gone by now: touch nothing else)
        ++stats.index_sync_fibers;
        job->run();
      });
    }
  }
  Status synced;
  for (const std::shared_ptr<Segment>& segment : dirty) {
    synced = segment->sync_log();
    if (!synced.ok()) break;
  }
  help_.clear();  // a waiter that has not run yet finds nothing: the flusher takes the rest back
  for (const std::shared_ptr<SyncJob>& job : jobs) {
    if (!job->taken) job->run();
  }
  for (const std::shared_ptr<SyncJob>& job : jobs) {
    while (!job->done) job->finished.wait();
    if (synced.ok()) synced = job->status;
  }
  return synced;
}

Status PartitionLog::sync_round(bool active_indexes, int64_t below) {
  SLUICE_ASSERT(!syncing_);
  SLUICE_ASSERT(below == kWholeLog || segments_.count(below) != 0 || below <= segments_.begin()->first);
  syncing_ = true;
  struct Done {
    PartitionLog* log;
    ~Done() {
      log->syncing_ = false;
      log->help_.clear();
      log->sync_done_.notify_all();
    }
  } done{this};
  const int64_t covered = std::min(log_end_offset_, below);
  const uint64_t changes = dir_changes_;
  std::vector<std::shared_ptr<Segment>> dirty;
  std::vector<uint64_t> writes;
  for (const auto& [base, segment] : segments_) {
    if (base >= below) break;
    const bool indexes_pending = active_indexes && segment.get() == &active() &&
                                 (segment->offset_index_unsynced() || segment->time_index_unsynced());
    if (!segment->dirty() && !indexes_pending) continue;
    if (settings_.mutations.has(Mutation::kSkipPersistedFsync)) [[unlikely]] {
      if (planted_skipped_sync(*segment, active_indexes)) continue;  // it stays dirty: a clean close syncs it
    }
    dirty.push_back(segment);
    writes.push_back(segment->writes());
  }
  Status synced = sync_segments(dirty, active_indexes);
  if (!synced.ok()) return fail(synced);  // fsyncgate: never retry a failed sync and call it durable
  for (size_t i = 0; i < dirty.size(); ++i) dirty[i]->mark_synced(writes[i]);
  if (changes != dir_synced_) {
    synced = env_.fs.sync_dir(dir_);
    if (!synced.ok()) return fail(synced);
    dir_synced_ = std::max(dir_synced_, changes);
  }
  recovery_point_ = std::max(recovery_point_, covered);
  last_flush_ = env_.clock.now();
  ++stats_.sync_rounds;
  advance_high_watermark();
  SLUICE_ASSERT(recovery_point_ <= log_end_offset_);
  return Status();
}

// The background half of a `replicated` roll: syncs the segments below the active one, then records the new
// recovery point so that recovery after a power loss rescans only the active segment.
Status PartitionLog::flush_rolled_segments() {
  if (roll_flush_pending_ == 0) return Status();
  const int64_t rolled_end = roll_flush_pending_;
  SLUICE_PROBE("partition_log.rolled_segment_flushed_in_background");
  // Only below the active segment, as Kafka's roll flushes: the active one's appends are not due.
  const Status synced = sync_through(rolled_end, /*below=*/rolled_end);
  // Done either way: a later roll that came meanwhile asked for a flush of its own, and a failure took the log
  // offline (never retried: fsyncgate).
  if (roll_flush_pending_ == rolled_end) roll_flush_pending_ = 0;
  if (!synced.ok() && failed_.ok() && rolled_end > log_end_offset_) {
    return Status();  // a truncate_to cut the rolled segment, and synced what it left
  }
  SLUICE_TRY(synced);
  return record_recovery_point();
}

Status PartitionLog::wait_for_durability(int64_t end_offset) {
  if (end_offset > log_end_offset_) return truncated_error(end_offset);  // truncate_to cut them
  if (durable_through(end_offset)) return Status();
  SLUICE_TRY(failed_);
  // A graceful close syncs everything first, so this is a deleted partition's close racing the wait.
  if (closed_) return closed(dir_ + ": the log was closed before the append was synced");
  SLUICE_TRY(sync_through(end_offset));
  SLUICE_ASSERT(durable_through(end_offset));
  return Status();
}

Status PartitionLog::flush() {
  SLUICE_TRY(failed_);
  return sync_through(log_end_offset_);
}

}  // namespace sluice::storage
