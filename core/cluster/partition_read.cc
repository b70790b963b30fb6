// Partition's read side: fetch reads, ListOffsets lookups, OffsetForLeaderEpoch, and DeleteRecords. Consumers
// never see past the high watermark: reads stop there, "latest" is the high watermark, and storage's timestamp
// lookups look only below it.
#include <algorithm>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/cluster/partition.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/list_offsets.h"

namespace sluice::cluster {
namespace {

// A log closed under a call was removed meanwhile (DeleteTopics): the partition is gone.
Status removed_if_closed(const Status& status, const storage::TopicPartition& tp) {
  if (status.code() != Code::kClosed) return status;
  return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string() + " was deleted: " + status.message());
}

Status leader_epoch_error(ErrorCode error, int32_t requested, int32_t current, const storage::TopicPartition& tp) {
  return kafka_error(error, fmt::format("{}: the request's current leader epoch is {}, the partition's {}",
                                        tp.to_string(), requested, current));
}

// A LeaderChange control batch: raft's no-op at the start of each partition leader's term (producer id -1; a
// transaction marker has its producer's id).
bool is_leader_change(const storage::BatchHeader& header) { return header.control() && header.producer_id < 0; }

// Takes the LeaderChange batches out of a consumer's read (see Partition::high_watermark()). A read that held only
// such batches goes on after them, so that a small partition_max_bytes still makes progress up to the next data batch.
Status drop_leader_changes(storage::PartitionLog& log, storage::ReadResult& data, size_t max_bytes) {
  while (!data.records.empty()) {
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(std::vector<storage::BatchSpan> spans, storage::split_batches(data.records, &consumed));
    const bool any = std::any_of(spans.begin(), spans.end(),
                                 [](const storage::BatchSpan& span) { return is_leader_change(span.header); });
    if (!any) return Status();
    Bytes kept;
    for (const storage::BatchSpan& span : spans) {
      if (is_leader_change(span.header)) continue;
      const auto* begin = data.records.data() + span.position;
      kept.insert(kept.end(), begin, begin + span.header.size_bytes());
    }
    // A partial batch at the end (max_bytes cut it) stays, as the log returned it.
    kept.insert(kept.end(), data.records.begin() + static_cast<std::ptrdiff_t>(consumed), data.records.end());
    if (!kept.empty() || spans.empty()) {
      data.records = std::move(kept);
      return Status();
    }
    const int64_t next = spans.back().header.last_offset() + 1;
    if (next >= log.high_watermark()) {
      data.records.clear();
      return Status();
    }
    SLUICE_ASSIGN_OR_RETURN(data, log.read(next, max_bytes, log.high_watermark()));
  }
  return Status();
}

}  // namespace

// The end offset of the largest epoch <= `requested`: from the log's leader-epoch cache on a replica, from the one
// epoch a single node has known otherwise.
EpochEndOffset Partition::epoch_end_offset(int32_t requested) const {
  if (!replicated()) return end_offset_for_epoch(requested, leader_epoch_, log_start_offset(), log_end_offset());
  const storage::EpochEndOffset found = log_->end_offset_for_epoch(requested);
  return EpochEndOffset{found.epoch, found.end_offset};
}

Result<EpochEndOffset> Partition::last_offset_for_leader_epoch(int32_t current_leader_epoch, int32_t epoch) const {
  if (!is_leader()) return not_leader();
  if (const ErrorCode fenced = check_leader_epoch(current_leader_epoch); fenced != ErrorCode::kNone) {
    return leader_epoch_error(fenced, current_leader_epoch, leader_epoch_, tp_);
  }
  return epoch_end_offset(epoch);
}

Result<PartitionRead> Partition::read(const FetchPosition& position, size_t max_bytes, bool min_one_batch) {
  // Consumers fetch from the leader (Kafka 3.9 without a replica selector, KIP-392).
  if (!is_leader()) {
    if (!replicated() || !context_.mutations.has(Mutation::kStaleLeaderServesFetch)) return not_leader();
    // Planted bug: a replica that does not lead answers from its own log, up to its end (past its high watermark).
    PartitionRead stale;
    SLUICE_ASSIGN_OR_RETURN(stale.data, log_->read(position.offset, max_bytes, log_->log_end_offset()));
    stale.data.high_watermark = high_watermark();  // what Fetch's long poll compares (fetch.cc: stale())
    return stale;
  }
  if (const ErrorCode fenced = check_leader_epoch(position.current_leader_epoch); fenced != ErrorCode::kNone) {
    return leader_epoch_error(fenced, position.current_leader_epoch, leader_epoch_, tp_);
  }
  // v12 LastFetchedEpoch (Partition.readRecords): the fetch must not run past the end of the epoch the fetcher
  // last saw, else the answer names the epoch and end offset it diverged at, with no records.
  if (position.last_fetched_epoch >= 0) {
    const int64_t log_start = log_start_offset();
    const EpochEndOffset end = epoch_end_offset(position.last_fetched_epoch);
    if (end.epoch == kUndefinedEpoch || end.end_offset == kUndefinedEpochOffset || position.offset < log_start) {
      return kafka_error(ErrorCode::kOffsetOutOfRange,
                         fmt::format("{}: no end offset for the last fetched epoch {} at offset {}", tp_.to_string(),
                                     position.last_fetched_epoch, position.offset));
    }
    if (end.epoch < position.last_fetched_epoch || end.end_offset < position.offset) {
      PartitionRead diverged;
      diverged.data = storage::ReadResult{Bytes(), high_watermark(), log_start, log_end_offset()};
      diverged.diverging = end;
      return diverged;
    }
  }
  Result<PartitionRead> read = read_up_to_high_watermark(position.offset, max_bytes, min_one_batch);
  if (!read.ok()) return removed_if_closed(read.status(), tp_);
  return read;
}

Result<PartitionRead> Partition::read_up_to_high_watermark(int64_t offset, size_t max_bytes, bool min_one_batch) {
  PartitionRead out;
  if (!min_one_batch && max_bytes == 0) {
    // No bytes left for this partition: the range check and the offsets, without reading.
    SLUICE_ASSIGN_OR_RETURN(out.data, log_->read(offset, 0, offset));
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(out.data, log_->read(offset, max_bytes, log_->high_watermark()));
  if (replicated()) {
    SLUICE_TRY(drop_leader_changes(*log_, out.data, max_bytes));
    out.data.high_watermark = high_watermark();
  }
  SLUICE_ASSERT(out.data.log_start_offset <= out.data.high_watermark);
  SLUICE_ASSERT(out.data.high_watermark <= out.data.log_end_offset);
  // The log returns at least one batch; past the first partition with data, one over the limit is dropped whole
  // rather than cut (a partial batch is legal, but never one spilling into the next partition).
  if (!min_one_batch && !out.data.records.empty()) {
    storage::BatchHeader first;
    const bool parsed = storage::parse_valid_batch_header(out.data.records, &first);
    if (!parsed || first.size_bytes() > max_bytes) out.data.records.clear();
  }
  SLUICE_VERIFY(([&] {
    if (out.data.records.empty()) return true;
    int64_t last = -1;
    const Status walked = storage::for_each_batch(out.data.records, nullptr, [&](const storage::BatchSpan& span) {
      last = span.header.last_offset();
      return Status();
    });
    return walked.ok() && last < out.data.high_watermark;
  }()));
  return out;
}

Result<std::optional<TimestampAndOffset>> Partition::offset_for_timestamp(int64_t timestamp, ReadUpTo up_to,
                                                                          int32_t current_leader_epoch) {
  if (!is_leader()) return not_leader();
  if (const ErrorCode fenced = check_leader_epoch(current_leader_epoch); fenced != ErrorCode::kNone) {
    return leader_epoch_error(fenced, current_leader_epoch, leader_epoch_, tp_);
  }
  std::optional<TimestampAndOffset> out(std::in_place);
  out->leader_epoch = leader_epoch_;
  switch (timestamp) {
    case protocol::kEarliestTimestamp:
    case protocol::kEarliestLocalTimestamp: out->offset = log_start_offset(); return out;
    // Kafka: a consumer sees up to the high watermark (read_uncommitted) or the last stable offset
    // (read_committed), equal here with no transactions; other replica ids see the log end.
    case protocol::kLatestTimestamp:
      out->offset = up_to == ReadUpTo::kHighWatermark ? high_watermark() : log_end_offset();
      return out;
    case protocol::kLatestTieredTimestamp:
      out->leader_epoch = kUndefinedEpoch;  // offset and timestamp stay -1: nothing is tiered
      return out;
    default: break;
  }
  Result<std::optional<storage::OffsetAndTimestamp>> found =
      timestamp == protocol::kMaxTimestamp ? log_->max_timestamp() : log_->offset_for_timestamp(timestamp);
  if (!found.ok()) return removed_if_closed(found.status(), tp_);
  // Nothing, or only a LeaderChange batch at the tail that consumers do not see yet (high_watermark()).
  if (!found->has_value() || (*found)->offset >= high_watermark()) return std::optional<TimestampAndOffset>();
  SLUICE_ASSERT((*found)->offset < log_->high_watermark());
  out->offset = (*found)->offset;
  out->timestamp = (*found)->timestamp;
  return out;
}

// UnifiedLog.legacyFetchOffsetsBefore: a list of entries, one per segment (its base offset, raised to the log start,
// with its time) and the log end at now when the active segment holds data; the answer is the offsets of the last
// entry dated at or before `timestamp` (-1: the last entry, -2: the first) and of the entries before it, newest
// first, at most `max_offsets`. Kafka dates a segment by its file's modification time, which the Env does not
// offer: here a segment is dated by its largest record timestamp, and never before the segment ahead of it
// (appends come in order, and so do modification times).
std::vector<int64_t> Partition::legacy_offsets_before(int64_t timestamp, int32_t max_offsets, ReadUpTo up_to) const {
  struct Entry {
    int64_t offset;
    int64_t time_ms;
  };
  const std::vector<storage::SegmentInfo> segments = log_->segments();
  const int64_t log_start = log_start_offset();
  std::vector<Entry> entries;
  int64_t time_ms = -1;
  for (const storage::SegmentInfo& segment : segments) {
    time_ms = std::max(time_ms, segment.max_timestamp);
    entries.push_back({std::max(segment.base_offset, log_start), time_ms});
  }
  if (!segments.empty() && segments.back().size_bytes > 0) {
    entries.push_back({log_end_offset(), to_unix_ms(context_.env.clock.wall_now())});
  }
  auto last = static_cast<std::ptrdiff_t>(entries.size()) - 1;
  if (timestamp == protocol::kEarliestTimestamp) {
    last = std::min<std::ptrdiff_t>(last, 0);
  } else if (timestamp != protocol::kLatestTimestamp) {
    while (last >= 0 && entries[static_cast<size_t>(last)].time_ms > timestamp) --last;
  }
  std::vector<int64_t> offsets;
  for (std::ptrdiff_t i = last; i >= 0 && std::ssize(offsets) < max_offsets; --i) {
    offsets.push_back(entries[static_cast<size_t>(i)].offset);
  }
  std::stable_sort(offsets.begin(), offsets.end(), std::greater<>());
  // A consumer sees nothing past the high watermark, which takes the place of the offsets beyond it.
  const int64_t visible_end = high_watermark();
  if (up_to == ReadUpTo::kHighWatermark && !offsets.empty() && offsets.front() > visible_end) {
    std::erase_if(offsets, [&](int64_t offset) { return offset > visible_end; });
    offsets.insert(offsets.begin(), visible_end);
  }
  return offsets;
}

Result<int64_t> Partition::delete_records(int64_t offset, Instant deadline) {
  if (!config_.retention_enabled()) {
    return kafka_error(ErrorCode::kPolicyViolation,
                       fmt::format("Records of partition {} can not be deleted due to the configured policy "
                                   "(cleanup.policy={})",
                                   tp_.to_string(), config_.value_of("cleanup.policy").value_or("")));
  }
  if (offset < -1) {
    return kafka_error(ErrorCode::kOffsetOutOfRange,
                       fmt::format("The offset {} for partition {} is not valid", offset, tp_.to_string()));
  }
  SLUICE_TRY(check_not_removed());
  if (!is_leader()) return not_leader();
  const int32_t epoch = leader_epoch_;
  if (replicated()) {
    // The consumers' high watermark, which stops below the LeaderChange batches at the committed tail: the log start
    // never passes what a consumer may read up to.
    const int64_t visible = high_watermark();
    if (offset > visible) {
      return kafka_error(ErrorCode::kOffsetOutOfRange,
                         fmt::format("{}: cannot delete records before offset {}, the high watermark is {}",
                                     tp_.to_string(), offset, visible));
    }
    if (offset == -1) offset = visible;
  }
  // The log manager moves the start under its maintenance mutex (no retention or cleaner pass meanwhile) and
  // declares the effect; the log refuses an offset above the high watermark.
  SLUICE_ASSIGN_OR_RETURN(const int64_t log_start, context_.logs.delete_records(tp_, offset));
  SLUICE_ASSERT(log_start <= log_->high_watermark());
  if (!replicated()) return log_start;
  return wait_followers_log_start(log_start, epoch, deadline);
}

}  // namespace sluice::cluster
