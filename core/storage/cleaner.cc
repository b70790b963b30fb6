#include "core/storage/cleaner.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/base/assert.h"
#include "core/env/buggify.h"
#include "core/storage/cleaner_batches.h"
#include "core/storage/key_offset_map.h"

namespace sluice::storage {
namespace {

// Per batch mapped, in a BUGGIFY run whose cut-short site is on: most passes get cut, after a few dozen batches.
constexpr double kBuggifyCutChance = 0.05;

// storage-semantics.md §3: the dirty section and the numbers its gate needs. The active segment never counts.
DirtyReport find_section(const std::vector<SegmentInfo>& segments, int64_t checkpoint, const LogBounds& log,
                         const CleanerOptions& options, int64_t now_ms) {
  SLUICE_ASSERT(!segments.empty());
  DirtyReport section;
  section.first_dirty = std::max(checkpoint, log.log_start_offset());
  int64_t limit = std::min(segments.back().base_offset, log.high_watermark());
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const SegmentInfo& segment = segments[i];
    if (segment.next_offset <= section.first_dirty || segment.base_offset >= limit) continue;
    if (segment.max_timestamp > now_ms - options.min_compaction_lag_ms) {
      limit = segment.base_offset;
      break;
    }
  }
  section.first_uncleanable = segments.front().base_offset;
  for (const SegmentInfo& segment : segments) {
    if (segment.base_offset <= limit) section.first_uncleanable = segment.base_offset;
  }
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const SegmentInfo& segment = segments[i];
    if (segment.base_offset >= section.first_uncleanable || segment.next_offset <= log.log_start_offset()) continue;
    if (segment.next_offset <= section.first_dirty) {
      section.clean_bytes += segment.size_bytes;
      continue;
    }
    section.dirty_bytes += segment.size_bytes;
    const int64_t first_ts = segment.first_batch_max_timestamp;
    if (first_ts >= 0 && now_ms - first_ts > options.max_compaction_lag_ms) section.max_lag_passed = true;
  }
  return section;
}

// The budget, or less when the dirty section cannot hold that many keys (one per offset at most): a small log's
// pass does not touch 128 MiB.
uint64_t map_bytes_for(const DirtyReport& section, const CleanerOptions& options) {
  const auto offsets = static_cast<double>(section.first_uncleanable - section.first_dirty);
  const auto slots_needed = static_cast<uint64_t>(offsets / options.load_factor) + 2;
  return std::min(options.map_memory_bytes, slots_needed * KeyOffsetMap::kSlotBytes);
}

// Maps every key of [from, to) to its latest offset. Returns true when the map filled up before `to`.
Result<bool> build_map(PartitionLog& log, int64_t from, int64_t to, KeyOffsetMap& map) {
  BatchStream stream(log, from, to);
  Bytes scratch;
  ByteView batch;
  BatchHeader header;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool more, stream.next(&batch, &header));
    if (!more) return false;
    SLUICE_ASSIGN_OR_RETURN(bool room, map_batch_keys(batch, header, from, to, map, scratch));
    if (!room) return true;
    // A pass cut short, as when a smaller map fills here: this pass cleans up to the last key mapped and a later one
    // goes on from there.
    if (map.size() > 0 && SLUICE_BUGGIFY_P(log.buggify(), "cleaner.pass-cut-short", kBuggifyCutChance)) return true;
  }
}

// What one pass rewrites with: the rules' filter and one buffer for every group, so that the pages a group's
// output touched are reused by the next group instead of being faulted in again.
struct Rewriter {
  explicit Rewriter(const CleanRules& rules) : filter(rules) {}
  BatchFilter filter;
  Bytes group;
};

// Cleans segments [first, end) into one: a swap replaces them all (recovery replaces the segments whose bases lie
// below the swap's end). An empty result drops them, except the log's first segment, which stays as it is (the
// log keeps a segment at its start).
Status rewrite_group(PartitionLog& log, const std::vector<SegmentInfo>& segments, size_t first, size_t end,
                     Rewriter& rewriter, CleanResult& result) {
  Bytes& group = rewriter.group;
  group.clear();
  // The input's size bounds the output but for a few bytes a rebuilt batch can gain: reserved (address space
  // only) so that the buffer does not grow by copying itself.
  uint64_t input_bytes = 0;
  for (size_t i = first; i < end; ++i) input_bytes += segments[i].size_bytes;
  group.reserve(input_bytes);
  FilterTally tally;
  tally.changed = end - first > 1;
  for (size_t i = first; i < end; ++i) {
    const int64_t from = std::max(segments[i].base_offset, log.log_start_offset());
    BatchStream stream(log, from, segments[i].next_offset);
    ByteView batch;
    BatchHeader header;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(bool more, stream.next(&batch, &header));
      if (!more) break;
      SLUICE_TRY(rewriter.filter.filter(batch, header, &group, &tally));
    }
  }
  if (!tally.changed || (group.empty() && first == 0)) return Status();
  SLUICE_TRY(log.replace_segments(segments[first].base_offset, segments[end - 1].base_offset + 1, group));
  result.records_removed += tally.removed;
  result.batches_rebuilt += tally.rebuilt;
  result.segments_replaced += end - first;
  return Status();
}

// Rewrites the closed segments below rules.cleaned_end, in Kafka's groups (groupSegmentsBySize): consecutive
// segments whose sizes add up to at most segment.bytes and whose offsets stay within int32 of the group's base
// become one segment, so compaction does not leave a trail of tiny segments.
Status rewrite_segments(PartitionLog& log, const CleanRules& rules, CleanResult& result) {
  Rewriter rewriter(rules);
  const std::vector<SegmentInfo> segments = log.segments();
  const auto max_bytes = static_cast<uint64_t>(log.settings().segment_bytes);
  size_t i = 0;
  while (i + 1 < segments.size() && segments[i].base_offset < rules.cleaned_end) {
    if (segments[i].next_offset <= log.log_start_offset()) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    uint64_t bytes = segments[i].size_bytes;
    while (end + 1 < segments.size() && segments[end].base_offset < rules.cleaned_end &&
           bytes + segments[end].size_bytes <= max_bytes &&
           segments[end].next_offset - 1 - segments[i].base_offset <= INT32_MAX) {
      bytes += segments[end].size_bytes;
      ++end;
    }
    SLUICE_TRY(rewrite_group(log, segments, i, end, rewriter, result));
    i = end;
  }
  return Status();
}

}  // namespace

double DirtyReport::dirty_ratio() const {
  const uint64_t total = clean_bytes + dirty_bytes;
  return total == 0 ? 0.0 : static_cast<double>(dirty_bytes) / static_cast<double>(total);
}

bool DirtyReport::cleanable(const CleanerOptions& options) const {
  if (first_dirty >= first_uncleanable || dirty_bytes == 0) return false;
  return max_lag_passed || dirty_ratio() > options.min_cleanable_dirty_ratio;
}

DirtyReport measure_dirt(const PartitionLog& log, int64_t first_dirty_offset, const CleanerOptions& options,
                         int64_t now_ms) {
  const LogBounds bounds{log.log_start_offset(), log.high_watermark()};
  return find_section(log.segments(), first_dirty_offset, bounds, options, now_ms);
}

DirtyReport measure_dirt(const std::vector<SegmentInfo>& segments, const LogBounds& bounds,
                         int64_t first_dirty_offset, const CleanerOptions& options, int64_t now_ms) {
  if (segments.empty()) return DirtyReport{bounds.log_start, bounds.log_start, 0, 0, false};
  return find_section(segments, first_dirty_offset, bounds, options, now_ms);
}

Result<CleanResult> clean_once(PartitionLog& log, int64_t& first_dirty_offset, const CleanerOptions& options,
                               int64_t now_ms, bool force, const CleanStarting& on_start) {
  const std::vector<SegmentInfo> segments = log.segments();
  const LogBounds bounds{log.log_start_offset(), log.high_watermark()};
  const DirtyReport section = find_section(segments, first_dirty_offset, bounds, options, now_ms);
  CleanResult result;
  result.first_dirty = section.first_dirty;
  result.first_uncleanable = section.first_uncleanable;
  result.cleaned_end = section.first_dirty;
  result.dirty_ratio = section.dirty_ratio();
  if (section.first_dirty >= section.first_uncleanable) return result;
  if (!force && !section.cleanable(options)) return result;
  KeyOffsetMap map(map_bytes_for(section, options), options.load_factor);
  SLUICE_ASSIGN_OR_RETURN(result.map_full, build_map(log, section.first_dirty, section.first_uncleanable, map));
  result.cleaned_end = result.map_full ? map.latest_offset() + 1 : section.first_uncleanable;
  SLUICE_ASSERT(result.cleaned_end > section.first_dirty);
  CleanRules rules;
  rules.map = &map;
  rules.cleaned_end = result.cleaned_end;
  rules.now_ms = now_ms;
  const int64_t retention = options.delete_retention_ms;
  rules.horizon_ms = retention > INT64_MAX - now_ms ? INT64_MAX : now_ms + retention;
  rules.drop_latest = options.mutations.has(Mutation::kCompactionDropsLatest);
  rules.ignore_delete_horizon = options.mutations.has(Mutation::kTombstoneBeforeHorizon);
  rules.keep_batch_ranges = !log.settings().high_watermark_follows_log_end;  // a replica's log
  if (on_start) on_start(log.log_start_offset(), result);
  SLUICE_TRY(rewrite_segments(log, rules, result));
  result.cleaned = true;
  first_dirty_offset = result.cleaned_end;
  return result;
}

}  // namespace sluice::storage
