#include "core/storage/retention.h"

#include <functional>

#include "core/base/assert.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {
namespace {

constexpr size_t kScanChunkBytes = 1 << 20;

// Walks whole batches from the one holding `from`, below `limit`, while `evict(header)` says yes. Returns the
// offset after the last evicted batch (or `from` when none was). Small batches are read a chunk at a time (their
// CRCs checked); a batch larger than a chunk is judged by its header alone (read twice), since a read serves it
// whole: a 32 MiB batch at the log start cost 140 ms of the loop at every check (bench/offload_bench.cc).
Result<int64_t> evict_leading_batches(PartitionLog& log, int64_t from, int64_t limit,
                                      const std::function<bool(const BatchHeader&)>& evict) {
  int64_t target = from;
  while (target < limit) {
    SLUICE_ASSIGN_OR_RETURN(const std::optional<BatchHeader> next, log.batch_header_containing(target));
    if (!next.has_value()) break;
    if (next->size_bytes() > kScanChunkBytes) {
      SLUICE_PROBE("retention.big_batch_judged_by_header");
      SLUICE_ASSERT(next->last_offset() >= target);
      if (next->last_offset() >= limit || !evict(*next)) return target;
      target = next->last_offset() + 1;
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(ReadResult chunk, log.read(target, kScanChunkBytes, limit));
    if (chunk.records.empty()) break;
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(std::vector<BatchSpan> spans, split_batches(chunk.records, &consumed));
    SLUICE_ASSERT(!spans.empty());
    for (const BatchSpan& span : spans) {
      const int64_t last = span.header.last_offset();
      SLUICE_ASSERT(last >= target);
      if (last >= limit || !evict(span.header)) return target;
      target = last + 1;
    }
  }
  return target;
}

// The first offset that is not expired: whole segments are skipped on their max timestamp, then the first
// segment holding live data is scanned batch by batch.
Result<int64_t> time_retention_target(PartitionLog& log, int64_t retention_ms, int64_t now_ms,
                                      const MutationSet& mutations) {
  SLUICE_ASSERT(retention_ms >= 0);
  if (mutations.has(Mutation::kRetentionEvictsUnexpired)) [[unlikely]] {
    SLUICE_PROBE("mutation.retention-evicts-unexpired");
    retention_ms /= 10;
  }
  const int64_t cutoff = now_ms - retention_ms;  // a batch whose max timestamp is below it has expired
  const int64_t limit = log.high_watermark();
  int64_t target = log.log_start_offset();
  for (const SegmentInfo& segment : log.segments()) {
    if (segment.next_offset <= target) continue;
    if (segment.base_offset >= limit) break;
    const bool all_expired = segment.max_timestamp >= 0 && segment.max_timestamp < cutoff;
    if (all_expired && segment.next_offset <= limit) {
      target = segment.next_offset;
      continue;
    }
    // Batches without timestamps (-1) never expire by time.
    const auto expired = [cutoff](const BatchHeader& header) {
      return header.max_timestamp >= 0 && header.max_timestamp < cutoff;
    };
    // Most checks evict nothing: the first batch's header (read twice, they must agree) says so without the scan's
    // chunk read, which read and checked up to a MiB of records at every check of every partition.
    SLUICE_ASSIGN_OR_RETURN(const std::optional<BatchHeader> first, log.batch_header_containing(target));
    if (!first.has_value() || first->last_offset() >= limit || !expired(*first)) {
      SLUICE_PROBE("retention.first_header_unexpired");
      return target;
    }
    return evict_leading_batches(log, target, limit, expired);
  }
  return target;
}

Result<int64_t> size_retention_target(PartitionLog& log, int64_t from, int64_t retention_bytes) {
  SLUICE_ASSERT(retention_bytes >= 0);
  SLUICE_ASSIGN_OR_RETURN(uint64_t size, log.size_from(from));
  if (size <= static_cast<uint64_t>(retention_bytes)) return from;
  const uint64_t excess = size - static_cast<uint64_t>(retention_bytes);
  uint64_t evicted = 0;
  return evict_leading_batches(log, from, log.high_watermark(), [&evicted, excess](const BatchHeader& header) {
    if (evicted >= excess) return false;
    evicted += header.size_bytes();
    return true;
  });
}

// Moves the log start and drops what is wholly behind it. An expired active segment is first replaced by an
// empty one at the log end, so that it can go too (storage-semantics.md R5).
Status apply_target(PartitionLog& log, int64_t target, const RetentionHooks& hooks, RetentionResult& result) {
  if (target > log.log_start_offset()) {
    const int64_t by_time = result.log_start_before + result.evicted_by_time;
    SLUICE_TRY(log.advance_log_start(target, [&hooks, by_time](int64_t from, int64_t to) {
      if (hooks.on_log_start_advanced) hooks.on_log_start_advanced(from, by_time, to);
    }));
  }
  const std::vector<SegmentInfo> segments = log.segments();
  SLUICE_ASSERT(!segments.empty());
  const SegmentInfo& active = segments.back();
  if (log.log_start_offset() == log.log_end_offset() && active.size_bytes > 0 &&
      active.base_offset < log.log_start_offset()) {
    SLUICE_PROBE("retention.rolled_expired_active_segment");
    SLUICE_TRY(log.roll());
    result.rolled_expired_active_segment = true;
  }
  SLUICE_ASSIGN_OR_RETURN(result.segments_removed, log.remove_segments_below_log_start());
  return Status();
}

}  // namespace

Result<RetentionResult> enforce_retention(PartitionLog& log, const RetentionLimits& limits, int64_t now_ms,
                                          const RetentionHooks& hooks) {
  RetentionResult result;
  result.log_start_before = log.log_start_offset();
  int64_t target = result.log_start_before;
  if (limits.retention_ms.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(target, time_retention_target(log, *limits.retention_ms, now_ms, hooks.mutations));
    result.evicted_by_time = target - result.log_start_before;
  }
  if (limits.retention_bytes.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(int64_t by_size, size_retention_target(log, target, *limits.retention_bytes));
    result.evicted_by_size = by_size - target;
    target = by_size;
  }
  SLUICE_ASSERT(target >= result.log_start_before);
  SLUICE_ASSERT(target <= log.high_watermark());
  SLUICE_TRY(apply_target(log, target, hooks, result));
  result.log_start_after = log.log_start_offset();
  if (result.log_start_after > result.log_start_before) {
    result.reason = "log start " + std::to_string(result.log_start_before) + " -> " +
                    std::to_string(result.log_start_after) + " (" + std::to_string(result.evicted_by_time) +
                    " offsets past retention.ms, " + std::to_string(result.evicted_by_size) +
                    " over retention.bytes)";
  }
  return result;
}

}  // namespace sluice::storage
