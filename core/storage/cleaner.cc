#include "core/storage/cleaner.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/base/assert.h"
#include "core/storage/key_offset_map.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {
namespace {

constexpr size_t kReadChunkBytes = size_t{1} << 20;

// Whole batches of the log from the one holding `from` up to (not including) the first one reaching `to`.
// REQUIRES: log start <= from.
Result<Bytes> read_range(PartitionLog& log, int64_t from, int64_t to) {
  Bytes out;
  int64_t next = from;
  while (next < to) {
    SLUICE_ASSIGN_OR_RETURN(ReadResult read, log.read(next, kReadChunkBytes, to));
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(std::vector<BatchSpan> spans, split_batches(read.records, &consumed));
    if (spans.empty()) break;
    out.insert(out.end(), read.records.begin(), read.records.begin() + static_cast<std::ptrdiff_t>(consumed));
    next = spans.back().header.last_offset() + 1;
  }
  return out;
}

ByteView batch_at(const Bytes& data, const BatchSpan& span) {
  return ByteView(data.data() + span.position, span.header.size_bytes());
}

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
  SLUICE_ASSIGN_OR_RETURN(Bytes data, read_range(log, from, to));
  size_t consumed = 0;
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchSpan> spans, split_batches(data, &consumed));
  for (const BatchSpan& span : spans) {
    if (span.header.control()) continue;
    SLUICE_ASSIGN_OR_RETURN(std::vector<Record> records, decode_records(batch_at(data, span)));
    for (const Record& record : records) {
      if (record.offset < from || record.offset >= to || !record.key.has_value()) continue;
      if (!map.put(*record.key, record.offset)) return true;
    }
  }
  return false;
}

struct Rules {
  const KeyOffsetMap* map = nullptr;
  int64_t cleaned_end = 0;
  int64_t now_ms = 0;
  int64_t horizon_ms = 0;  // what a newly retained tombstone's batch gets
};

struct Rewrite {
  Bytes data;
  bool changed = false;
  int64_t removed = 0;
  int64_t rebuilt = 0;
};

BatchOptions options_of(const BatchHeader& header) {
  BatchOptions options;
  options.compression = header.compression();
  options.producer_id = header.producer_id;
  options.producer_epoch = header.producer_epoch;
  options.base_sequence = header.base_sequence;
  options.partition_leader_epoch = header.partition_leader_epoch;
  options.transactional = header.transactional();
  options.log_append_time = header.log_append_time();
  return options;
}

// One batch through the retention rules; appends what remains of it to `out`.
Status clean_batch(ByteView batch, const BatchHeader& header, const Rules& rules, Rewrite& out) {
  if (header.control() || header.base_offset >= rules.cleaned_end) {
    out.data.insert(out.data.end(), batch.begin(), batch.end());
    return Status();
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<Record> records, decode_records(batch));
  const bool horizon_passed = header.has_delete_horizon() && rules.now_ms >= header.base_timestamp;
  std::vector<Record> kept;
  bool tombstone = false;
  for (Record& record : records) {
    bool keep = record.offset >= rules.cleaned_end;
    if (!keep && record.key.has_value()) {
      const std::optional<int64_t> latest = rules.map->get(*record.key);
      keep = (!latest.has_value() || record.offset >= *latest) && (record.value.has_value() || !horizon_passed);
      tombstone = tombstone || (keep && !record.value.has_value());
    }
    if (keep) kept.push_back(std::move(record));
  }
  out.removed += static_cast<int64_t>(records.size() - kept.size());
  const bool stamp = tombstone && !header.has_delete_horizon();
  if (kept.size() == records.size() && !stamp) {
    out.data.insert(out.data.end(), batch.begin(), batch.end());
    return Status();
  }
  out.changed = true;
  if (kept.empty()) return Status();
  BatchOptions options = options_of(header);
  if (header.has_delete_horizon()) {
    options.delete_horizon_ms = header.base_timestamp;
  } else if (stamp) {
    options.delete_horizon_ms = rules.horizon_ms;
  }
  SLUICE_ASSIGN_OR_RETURN(Bytes rebuilt, build_batch(kept, options));
  out.data.insert(out.data.end(), rebuilt.begin(), rebuilt.end());
  ++out.rebuilt;
  return Status();
}

Result<Rewrite> clean_segment(PartitionLog& log, const SegmentInfo& segment, const Rules& rules) {
  const int64_t from = std::max(segment.base_offset, log.log_start_offset());
  SLUICE_ASSIGN_OR_RETURN(Bytes data, read_range(log, from, segment.next_offset));
  size_t consumed = 0;
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchSpan> spans, split_batches(data, &consumed));
  SLUICE_ASSERT(consumed == data.size());
  Rewrite out;
  for (const BatchSpan& span : spans) SLUICE_TRY(clean_batch(batch_at(data, span), span.header, rules, out));
  return out;
}

// Cleans segments [first, end) into one: a swap replaces them all (recovery replaces the segments whose bases lie
// below the swap's end). An empty result drops them, except the log's first segment, which stays as it is (the
// log keeps a segment at its start).
Status rewrite_group(PartitionLog& log, const std::vector<SegmentInfo>& segments, size_t first, size_t end,
                     const Rules& rules, CleanResult& result) {
  Bytes group;
  bool changed = end - first > 1;
  int64_t removed = 0;
  int64_t rebuilt = 0;
  for (size_t i = first; i < end; ++i) {
    SLUICE_ASSIGN_OR_RETURN(Rewrite rewrite, clean_segment(log, segments[i], rules));
    removed += rewrite.removed;
    rebuilt += rewrite.rebuilt;
    changed = changed || rewrite.changed;
    group.insert(group.end(), rewrite.data.begin(), rewrite.data.end());
  }
  if (!changed || (group.empty() && first == 0)) return Status();
  SLUICE_TRY(log.replace_segments(segments[first].base_offset, segments[end - 1].base_offset + 1, group));
  result.records_removed += removed;
  result.batches_rebuilt += rebuilt;
  result.segments_replaced += end - first;
  return Status();
}

// Rewrites the closed segments below rules.cleaned_end, in Kafka's groups (groupSegmentsBySize): consecutive
// segments whose sizes add up to at most segment.bytes and whose offsets stay within int32 of the group's base
// become one segment, so compaction does not leave a trail of tiny segments.
Status rewrite_segments(PartitionLog& log, const Rules& rules, CleanResult& result) {
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
    SLUICE_TRY(rewrite_group(log, segments, i, end, rules, result));
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
                               int64_t now_ms, bool force) {
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
  Rules rules;
  rules.map = &map;
  rules.cleaned_end = result.cleaned_end;
  rules.now_ms = now_ms;
  const int64_t retention = options.delete_retention_ms;
  rules.horizon_ms = retention > INT64_MAX - now_ms ? INT64_MAX : now_ms + retention;
  SLUICE_TRY(rewrite_segments(log, rules, result));
  result.cleaned = true;
  first_dirty_offset = result.cleaned_end;
  return result;
}

}  // namespace sluice::storage
