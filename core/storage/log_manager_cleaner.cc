// LogManager's cleaner duty: pick the filthiest compacted partition, run one pass, save the checkpoint.
#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/storage/log_config.h"
#include "core/storage/log_manager.h"

namespace sluice::storage {

int64_t LogManager::cleaner_checkpoint(const TopicPartition& tp) const {
  auto it = cleaner_checkpoints_.find(tp);
  return it == cleaner_checkpoints_.end() ? 0 : it->second;
}

// Kafka's grabFilthiestCompactedLog: among the compacted partitions past their gate (max lag passed, or the
// dirty ratio strictly above min.cleanable.dirty.ratio), the highest dirty ratio.
std::optional<TopicPartition> LogManager::filthiest(int64_t now_ms) const {
  std::optional<TopicPartition> best;
  double best_ratio = -1;
  for (const auto& [tp, entry] : entries_) {
    if (!entry.config.compacted() || uncleanable_.count(tp) != 0) continue;
    const CleanerOptions options = cleaner_options_for(entry.config, config_);
    const DirtyReport dirt = measure_dirt(*entry.log, cleaner_checkpoint(tp), options, now_ms);
    if (!dirt.cleanable(options) || dirt.dirty_ratio() <= best_ratio) continue;
    best = tp;
    best_ratio = dirt.dirty_ratio();
  }
  return best;
}

Result<std::optional<LogManager::Cleaned>> LogManager::run_cleaner_once(int64_t now_ms) {
  if (closed_) return closed("log manager is closed");
  LockGuard lock(maintenance_);
  const std::optional<TopicPartition> tp = filthiest(now_ms);
  if (!tp.has_value()) return std::optional<Cleaned>();
  Entry& entry = entries_.at(*tp);
  int64_t checkpoint = cleaner_checkpoint(*tp);
  const CleanerOptions options = cleaner_options_for(entry.config, config_);
  const TopicPartition cleaned_tp = *tp;
  auto on_start = [this, &cleaned_tp, &options, now_ms](int64_t from, const CleanResult& pass) {
    LogEffect effect;
    effect.kind = LogEffect::Kind::kCompacted;
    effect.tp = cleaned_tp;
    effect.from = from;
    effect.to = pass.cleaned_end;
    effect.now_ms = now_ms;
    effect.delete_retention_ms = options.delete_retention_ms;
    report(effect);
  };
  Result<CleanResult> result = clean_once(*entry.log, checkpoint, options, now_ms, /*force=*/false, on_start);
  if (!result.ok()) {
    uncleanable_.insert(*tp);
    env_.log.error("{}: cleaning failed, the partition is skipped until restart: {}", tp->to_string(),
                   result.status().to_string());
    return result.status();
  }
  SLUICE_ASSERT(!result->cleaned || checkpoint == result->cleaned_end);
  if (result->cleaned) {
    cleaner_checkpoints_[*tp] = checkpoint;
    SLUICE_TRY(save_cleaner_checkpoints(*tp, *entry.log));
    env_.log.info("{}: cleaned [{}, {}) at dirty ratio {:.3f}{}: {} records removed, {} segments rewritten",
                  tp->to_string(), result->first_dirty, result->cleaned_end, result->dirty_ratio,
                  result->map_full ? " (partial: the key map filled up)" : "", result->records_removed,
                  result->segments_replaced);
  }
  return std::optional<Cleaned>(Cleaned{*tp, *result});
}

// A failed sync of the checkpoint is final for the log whose progress it recorded (fsyncgate): that log goes
// offline, as a failed sync of its own files takes it, and is not cleaned again before a restart. A full disk
// changed nothing: the old checkpoint stands and only costs a repeated pass.
Status LogManager::save_cleaner_checkpoints(const TopicPartition& tp, PartitionLog& log) {
  const Status saved = write_cleaner_checkpoints(env_.fs, data_dir_, cleaner_checkpoints_);
  if (saved.ok()) return saved;
  uncleanable_.insert(tp);
  if (saved.code() == Code::kIoError) log.take_offline(saved);
  env_.log.error("{}: saving the cleaner checkpoint failed: {}", tp.to_string(), saved.to_string());
  return saved;
}

// Cleans back to back while some partition needs it, then looks again every log.cleaner.backoff.ms.
void LogManager::cleaner_loop() {
  const Duration backoff = std::chrono::milliseconds(config_.log_cleaner_backoff_ms);
  while (!stop_.is_set()) {
    Result<std::optional<Cleaned>> cleaned = run_cleaner_once(to_unix_ms(env_.clock.wall_now()));
    if (cleaned.ok() && cleaned->has_value() && (*cleaned)->result.cleaned) {
      env_.scheduler.yield();
      continue;
    }
    if (stop_.wait_for(backoff)) break;
  }
}

}  // namespace sluice::storage
