// Retention (cleanup.policy contains delete), DESIGN.md §3 and storage-semantics.md §2 with Sluice's departures:
// time retention evicts a PREFIX OF BATCHES — the log start moves past every leading batch whose max timestamp is
// older than now − retention.ms, the active segment included — so an expired record stops being readable at the
// next check, not when its whole segment expires. retention.bytes then evicts the oldest batches until the
// partition fits. Nothing at or above the high watermark is evicted; offsets are never renumbered; whole segments
// behind the new log start are removed (files unlinked after file.delete.delay.ms).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/storage/partition_log.h"

namespace sluice::storage {

struct RetentionLimits {
  std::optional<int64_t> retention_ms;     // nullopt: no time limit (retention.ms = -1)
  std::optional<int64_t> retention_bytes;  // nullopt: no size limit (retention.bytes < 0)
};

struct RetentionResult {
  int64_t log_start_before = 0;
  int64_t log_start_after = 0;
  int64_t evicted_by_time = 0;  // offsets
  int64_t evicted_by_size = 0;
  size_t segments_removed = 0;
  bool rolled_expired_active_segment = false;
  std::string reason;  // human-readable, for the log and `sluice log inspect`; empty when nothing moved
};

// What the log manager adds to a check: the planted bug and the report of the move.
struct RetentionHooks {
  MutationSet mutations;  // retention-evicts-unexpired (core/base/mutations.h)
  // Called right after the log start moved (PartitionLog's LogStartMoved): [from, by_time) went past retention.ms,
  // [by_time, to) over retention.bytes.
  std::function<void(int64_t from, int64_t by_time, int64_t to)> on_log_start_advanced;
};

// One retention check of one partition at wall time `now_ms`.
Result<RetentionResult> enforce_retention(PartitionLog& log, const RetentionLimits& limits, int64_t now_ms,
                                          const RetentionHooks& hooks = {});

}  // namespace sluice::storage
