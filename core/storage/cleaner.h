// The log cleaner: one compaction pass over one partition (storage-semantics.md §3, DESIGN.md §3).
//
// A pass finds the dirty section [first dirty, first uncleanable), gates on the dirty ratio (strictly greater than
// min.cleanable.dirty.ratio, or max.compaction.lag.ms passed, or forced), maps every key of the dirty section to
// its latest offset (a bounded map: a full map ends the pass early, at the last mapped offset + 1), then rewrites
// the closed segments below that end keeping, per key, only the records at or above the mapped offset. Unkeyed
// records go; tombstones get a KIP-534 delete horizon (now + delete.retention.ms) on the first pass that keeps
// them and go on the first pass at or after it. Offsets never change. Each rewritten group of segments is swapped
// in through PartitionLog::replace_segments (crash-safe: `.log.cleaned`, `.log.swap`).
//
// Fibers: call from a fiber of the node that opened the log; appends may run concurrently (only closed segments
// below the high watermark are rewritten).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/storage/partition_log.h"

namespace sluice::storage {

struct CleanerOptions {
  uint64_t map_memory_bytes = 128ull << 20;       // log.cleaner.dedupe.buffer.size (one thread)
  double load_factor = 0.9;                       // log.cleaner.io.buffer.load.factor
  int64_t delete_retention_ms = 86400000;         // delete.retention.ms
  double min_cleanable_dirty_ratio = 0.5;         // min.cleanable.dirty.ratio
  int64_t min_compaction_lag_ms = 0;              // min.compaction.lag.ms
  int64_t max_compaction_lag_ms = INT64_MAX;      // max.compaction.lag.ms
  // Planted bugs (core/base/mutations.h): compaction-drops-latest, tombstone-before-horizon.
  MutationSet mutations;
};

struct CleanResult {
  bool cleaned = false;             // false: nothing to clean, or gated by the dirty ratio
  int64_t first_dirty = 0;          // where the dirty section started
  int64_t first_uncleanable = 0;    // where it ended
  int64_t cleaned_end = 0;          // the pass covered [log start, cleaned_end): the next first dirty offset
  double dirty_ratio = 0;
  bool map_full = false;            // a partial pass
  int64_t records_removed = 0;
  int64_t batches_rebuilt = 0;
  size_t segments_replaced = 0;     // segments swapped out (groups of them become one)
};

// Where the dirty section lies and how dirty the log is, without cleaning (the cleaner's choice of log).
struct DirtyReport {
  int64_t first_dirty = 0;          // max(checkpoint, log start)
  int64_t first_uncleanable = 0;    // the active segment, the high watermark or the min.compaction.lag boundary
  uint64_t clean_bytes = 0;         // closed segments wholly below first_dirty
  uint64_t dirty_bytes = 0;         // closed segments in the dirty section
  bool max_lag_passed = false;      // max.compaction.lag.ms forces a pass
  double dirty_ratio() const;
  // Kafka's gate: cleanable bytes and (max lag passed, or the ratio strictly above min.cleanable.dirty.ratio).
  bool cleanable(const CleanerOptions& options) const;
};
DirtyReport measure_dirt(const PartitionLog& log, int64_t first_dirty_offset, const CleanerOptions& options,
                         int64_t now_ms);
// The same from a description of the segments (the offline inspector).
struct LogBounds {
  int64_t log_start = 0;
  int64_t high_water = 0;
  int64_t log_start_offset() const { return log_start; }
  int64_t high_watermark() const { return high_water; }
};
DirtyReport measure_dirt(const std::vector<SegmentInfo>& segments, const LogBounds& bounds,
                         int64_t first_dirty_offset, const CleanerOptions& options, int64_t now_ms);

// Told, once a pass knows the range it rewrites ([log start, cleaned end): first_dirty and cleaned_end set), before
// its first swap: from then on records of that range may vanish. Must not suspend.
using CleanStarting = std::function<void(int64_t from, const CleanResult& pass)>;

// One pass at wall time `now_ms`. `first_dirty_offset` is the cleaner checkpoint: read, and on a pass moved to
// the cleaned end.
Result<CleanResult> clean_once(PartitionLog& log, int64_t& first_dirty_offset, const CleanerOptions& options,
                               int64_t now_ms, bool force, const CleanStarting& on_start = {});

}  // namespace sluice::storage
