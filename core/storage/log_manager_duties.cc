// LogManager's broker-wide duties: disk pressure on append, the retention check, and closing.
#include <algorithm>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_config.h"
#include "core/storage/log_manager.h"

namespace sluice::storage {

Result<AppendResult> LogManager::append(const TopicPartition& tp, ByteView batches, bool defer_sync) {
  return append_with(tp, batches, defer_sync, /*as_replica=*/false);
}

Result<AppendResult> LogManager::append_as_replica(const TopicPartition& tp, ByteView batches, bool defer_sync) {
  return append_with(tp, batches, defer_sync, /*as_replica=*/true);
}

Result<AppendResult> LogManager::append_with(const TopicPartition& tp, ByteView batches, bool defer_sync,
                                             bool as_replica) {
  if (closed_) return closed("log manager is closed");
  auto it = entries_.find(tp);
  if (it == entries_.end()) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string());
  const std::shared_ptr<PartitionLog> log = it->second.log;  // `it` may not survive the suspensions below
  AppendOptions options;
  // A replica keeps the leader's bytes, timestamps included.
  options.log_append_time =
      !as_replica && it->second.config.message_timestamp_type == MessageTimestampType::kLogAppendTime;
  options.defer_sync = defer_sync;
  SLUICE_TRY(check_disk_pressure(tp));
  Result<AppendResult> appended = as_replica ? log->append_as_replica(batches, options) : log->append(batches, options);
  if (appended.ok()) disk_usage_.appended_since += appended->disk_bytes;  // preallocation included
  if (!appended.ok() && appended.status().code() == Code::kNoSpace) {
    ++appends_refused_for_space_;
    env_.log.warn("{}: append refused, the disk is full: {}", tp.to_string(), appended.status().to_string());
    return kafka_error(ErrorCode::kKafkaStorageError, appended.status().message());
  }
  return appended;
}

Result<int64_t> LogManager::disk_used_percent(bool reread) {
  DiskUsageReading& last = disk_usage_;
  if (!reread && last.valid && env_.clock.now() - last.read_at < kDiskUsageRecheckInterval &&
      last.used_percent <= config_.log_disk_usage_max_percent) {
    // Conservative: the bytes that would take the usage from its reading (rounded down) to the threshold.
    const uint64_t headroom =
        static_cast<uint64_t>(config_.log_disk_usage_max_percent - last.used_percent) * (last.total_bytes / 100);
    if (last.appended_since < headroom) return last.used_percent;
  }
  SLUICE_ASSIGN_OR_RETURN(const DiskSpace disk, env_.fs.space(data_dir_));
  SLUICE_ASSERT(disk.free_bytes <= disk.total_bytes);
  const int64_t used =
      disk.total_bytes == 0 ? 0 : static_cast<int64_t>((disk.total_bytes - disk.free_bytes) * 100 / disk.total_bytes);
  last = DiskUsageReading{.valid = true, .read_at = env_.clock.now(), .used_percent = used,
                          .total_bytes = disk.total_bytes, .appended_since = 0};
  return used;
}

Status LogManager::check_disk_pressure(const TopicPartition& tp) {
  SLUICE_ASSIGN_OR_RETURN(int64_t used, disk_used_percent(/*reread=*/false));
  if (used <= config_.log_disk_usage_max_percent) return Status();
  if (config_.log_disk_pressure_policy == DiskPressurePolicy::kDeleteOldest) {
    LockGuard lock(maintenance_);
    SLUICE_TRY(free_oldest(tp));
    SLUICE_ASSIGN_OR_RETURN(used, disk_used_percent(/*reread=*/true));
    if (used <= config_.log_disk_usage_max_percent) return Status();
  }
  ++appends_refused_for_space_;
  SLUICE_PROBE("log_manager.append_refused_disk_pressure");
  const std::string why = "disk usage " + std::to_string(used) + "% is above log.disk.usage.max.percent=" +
                          std::to_string(config_.log_disk_usage_max_percent) +
                          ": appends are refused until space is freed; reads keep working";
  env_.log.warn("{}: {}", tp.to_string(), why);
  return kafka_error(ErrorCode::kKafkaStorageError, why);
}

// The opt-in delete-oldest policy: the partition whose oldest closed segment is the oldest loses that segment
// (its log start moves past it; offsets are never renumbered). Its files go after file.delete.delay.ms.
Status LogManager::free_oldest(const TopicPartition& requester) {
  PartitionLog* victim = nullptr;
  TopicPartition victim_tp;
  int64_t oldest = INT64_MAX;
  int64_t end = 0;
  for (auto& [tp, entry] : entries_) {
    const std::vector<SegmentInfo> segments = entry.log->segments();
    if (segments.size() < 2) continue;  // never the active segment
    const SegmentInfo& first = segments.front();
    if (first.next_offset > entry.log->high_watermark() || first.max_timestamp >= oldest) continue;
    oldest = first.max_timestamp;
    victim = entry.log.get();
    victim_tp = tp;
    end = first.next_offset;
  }
  if (victim == nullptr) return Status();
  SLUICE_PROBE("log_manager.deleted_oldest_for_disk_pressure");
  env_.log.warn("disk pressure (append to {}): deleting the oldest segment of {} (offsets below {})",
                requester.to_string(), victim_tp.to_string(), end);
  SLUICE_TRY(victim->advance_log_start(end, reporter(victim_tp, LogEffect::Reason::kDiskPressure, wall_ms())));
  return victim->remove_segments_below_log_start().status();
}

Status LogManager::truncate_to(const TopicPartition& tp, int64_t end_offset) {
  if (closed_) return closed("log manager is closed");
  LockGuard lock(maintenance_);  // first: the lookup must not span a suspension
  auto it = entries_.find(tp);
  if (it == entries_.end()) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string());
  const std::shared_ptr<PartitionLog> log = it->second.log;
  SLUICE_TRY(log->truncate_to(end_offset));
  auto checkpoint = cleaner_checkpoints_.find(tp);
  const int64_t active_base = log->segments().back().base_offset;
  if (checkpoint != cleaner_checkpoints_.end() && checkpoint->second > active_base) {
    SLUICE_PROBE("log_manager.cleaner_checkpoint_truncated");
    checkpoint->second = active_base;
    SLUICE_TRY(save_cleaner_checkpoints(tp, *log));
  }
  return Status();
}

Result<int64_t> LogManager::delete_records(const TopicPartition& tp, int64_t offset) {
  if (closed_) return closed("log manager is closed");
  LockGuard lock(maintenance_);  // first: the lookup must not span a suspension
  auto it = entries_.find(tp);
  if (it == entries_.end()) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string());
  const std::shared_ptr<PartitionLog> log = it->second.log;
  return log->delete_records(offset, reporter(tp, LogEffect::Reason::kDeleteRecords, wall_ms()));
}

// Each part of a move is its own effect: by time first, then by size (enforce_retention's order).
RetentionHooks LogManager::retention_hooks(const TopicPartition& tp, int64_t now_ms) const {
  RetentionHooks hooks;
  hooks.mutations = config_.mutations;
  if (effects_ == nullptr) return hooks;
  const LogStartMoved by_time = reporter(tp, LogEffect::Reason::kRetentionTime, now_ms);
  const LogStartMoved by_size = reporter(tp, LogEffect::Reason::kRetentionBytes, now_ms);
  hooks.on_log_start_advanced = [by_time, by_size](int64_t from, int64_t time_end, int64_t to) {
    SLUICE_ASSERT(from <= time_end && time_end <= to);
    if (time_end > from) by_time(from, time_end);
    if (to > time_end) by_size(time_end, to);
  };
  return hooks;
}

Result<std::map<TopicPartition, RetentionResult>> LogManager::run_retention(int64_t now_ms) {
  if (closed_) return closed("log manager is closed");
  LockGuard lock(maintenance_);
  std::map<TopicPartition, RetentionResult> moved;
  for (auto& [tp, entry] : entries_) {
    const RetentionLimits limits = retention_limits_for(entry.config);
    if (!limits.retention_ms && !limits.retention_bytes) continue;
    Result<RetentionResult> result = enforce_retention(*entry.log, limits, now_ms, retention_hooks(tp, now_ms));
    if (!result.ok()) {
      env_.log.warn("{}: retention check failed: {}", tp.to_string(), result.status().to_string());
      continue;  // the other partitions still get their check
    }
    if (result->log_start_after == result->log_start_before) continue;
    env_.log.info("{}: retention: {}", tp.to_string(), result->reason);
    moved.emplace(tp, *result);
  }
  return moved;
}

void LogManager::start() {
  SLUICE_ASSERT(!started_);
  SLUICE_ASSERT(!closed_);
  started_ = true;
  retention_fiber_ = env_.scheduler.spawn("retention", [this] { retention_loop(); });
  if (config_.log_cleaner_enable) cleaner_fiber_ = env_.scheduler.spawn("cleaner", [this] { cleaner_loop(); });
}

// Retention every log.retention.check.interval.ms; between its checks, while a partition waits for space to load,
// another attempt every kLoadAgainInterval (the check interval is 5 minutes by default).
void LogManager::retention_loop() {
  const Duration interval = std::chrono::milliseconds(config_.log_retention_check_interval_ms);
  Instant next_check = env_.clock.now() + interval;
  for (;;) {
    const Duration until_check = std::max(next_check - env_.clock.now(), Duration::zero());
    if (stop_.wait_for(awaiting_space() ? std::min(until_check, kLoadAgainInterval) : until_check)) return;
    if (env_.clock.now() >= next_check) {
      Result<std::map<TopicPartition, RetentionResult>> moved = run_retention(to_unix_ms(env_.clock.wall_now()));
      SLUICE_ASSERT(moved.ok() || closed_);  // per-partition failures are logged inside
      if (!closed_) remove_retired_dirs();  // deleted partitions' files, in the background
      next_check = env_.clock.now() + interval;
    }
    if (!closed_ && !offline_.empty()) load_offline_again();
  }
}

bool LogManager::awaiting_space() const {
  return std::any_of(offline_.begin(), offline_.end(),
                     [](const auto& entry) { return entry.second.reason.code() == Code::kNoSpace; });
}

Status LogManager::close() {
  if (closed_) return closed("log manager is closed");
  closed_ = true;
  stop_.set();
  if (started_) env_.scheduler.join(retention_fiber_);
  if (cleaner_fiber_) env_.scheduler.join(cleaner_fiber_);
  LockGuard lock(maintenance_);  // an outside caller's pass (tests) finishes first
  Status first;
  for (auto& [tp, entry] : entries_) {
    Status status = entry.log->close();
    if (!status.ok() && first.ok()) first = status;
  }
  return first;
}

}  // namespace sluice::storage
