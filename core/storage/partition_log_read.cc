// PartitionLog's read side: reads by offset (retried after a truncation's cut), sizes and timestamp lookups. None
// takes the append lock; each holds the segments it reads (shared_ptr) across its I/O.
#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/storage/agreeing_reads.h"
#include "core/storage/partition_log.h"

namespace sluice::storage {

// A cut of a segment (truncate_to, a rollback) while a read of it is suspended fails that read
// (Segment::cut_during_read): it starts over against the log as the cut left it, after a running truncate_to, a
// few times. Damage a read reports (a CRC, a header, an offset where the index placed it) is read again before it
// is believed: a device or its path can hand back a bad copy of good bytes once, and refusing a good batch, or
// serving the bad copy, would both be wrong. Lasting damage fails every attempt and is refused.
Result<ReadResult> PartitionLog::read(int64_t offset, size_t max_bytes, int64_t upper_bound_offset) {
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    Result<std::optional<ReadResult>> result = read_once(offset, max_bytes, upper_bound_offset);
    if (!result.ok() && result.status().code() == Code::kCorruption && attempt < kAttempts) {
      SLUICE_PROBE("partition_log.read_again_after_damage");
      continue;
    }
    if (!result.ok()) return std::move(result).take_status();
    if (result->has_value()) return std::move(**result);
    if (attempt == kAttempts) {
      return kafka_error(ErrorCode::kNotLeaderOrFollower,
                         dir_ + ": truncations kept cutting the log under a read at offset " + std::to_string(offset));
    }
    SLUICE_PROBE("partition_log.read_retried_after_cut");
    wait_for_cut();
  }
}

void PartitionLog::wait_for_cut() {
  if (truncating_) {
    while (truncating_) truncation_done_.wait();
  } else {
    // A rollback's or seal's cut, finished by its fiber once its I/O is (a yield would not let time advance).
    env_.scheduler.sleep_for(std::chrono::milliseconds(1));
  }
}

// nullopt: a cut under the read; try again.
Result<std::optional<ReadResult>> PartitionLog::read_once(int64_t offset, size_t max_bytes,
                                                          int64_t upper_bound_offset) {
  if (offset < log_start_offset_ || offset > log_end_offset_) {
    return kafka_error(ErrorCode::kOffsetOutOfRange, dir_ + ": offset " + std::to_string(offset) + " is outside [" +
                                                         std::to_string(log_start_offset_) + ", " +
                                                         std::to_string(log_end_offset_) + "]");
  }
  ReadResult result{Bytes(), high_watermark_, log_start_offset_, log_end_offset_};
  if (offset >= log_end_offset_ || offset >= upper_bound_offset) return std::optional<ReadResult>(std::move(result));
  auto it = segments_.upper_bound(offset);
  SLUICE_ASSERT(it != segments_.begin());
  --it;
  while (it != segments_.end()) {
    std::shared_ptr<Segment> segment = it->second;  // alive across the suspensions below
    const uint64_t generation = segment->cut_generation();
    const bool cutting = segment->cutting();
    Result<std::optional<Bytes>> records = segment->read_from(offset, max_bytes, upper_bound_offset);
    if (cutting || segment->cut_generation() != generation) return std::optional<ReadResult>();
    SLUICE_TRY(records.status());
    if (records->has_value()) {
      result.records = std::move(**records);
      return std::optional<ReadResult>(std::move(result));
    }
    // A gap at the end of this segment: the answer is the next segment's first batch. The map may have
    // changed while this fiber was suspended, so look it up again.
    it = segments_.upper_bound(segment->base_offset());
  }
  return std::optional<ReadResult>(std::move(result));
}

Result<uint64_t> PartitionLog::size_from(int64_t offset) {
  SLUICE_ASSERT(offset >= log_start_offset_);
  SLUICE_ASSERT(offset <= log_end_offset_);
  uint64_t total = 0;
  for (const std::shared_ptr<Segment>& segment : snapshot()) {
    if (segment->next_offset() <= offset) continue;
    uint64_t position = 0;
    if (segment->base_offset() < offset) {
      SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> found, segment->find_position(offset));
      position = found.value_or(segment->size_bytes());
    }
    SLUICE_ASSERT(position <= segment->size_bytes());
    total += segment->size_bytes() - position;
  }
  return total;
}

std::vector<std::shared_ptr<Segment>> PartitionLog::snapshot() const {
  std::vector<std::shared_ptr<Segment>> out;
  out.reserve(segments_.size());
  for (const auto& [base, segment] : segments_) out.push_back(segment);
  return out;
}

// The search walks batch headers without their CRCs (a skipped batch is never read whole): a bad copy of one could
// step over the batch that holds the answer, so the answer is believed once two searches agree.
Result<std::optional<OffsetAndTimestamp>> PartitionLog::offset_for_timestamp(int64_t timestamp) {
  const auto search = [this, timestamp]() -> Result<std::optional<OffsetAndTimestamp>> {
    const int64_t log_start = log_start_offset_;
    const int64_t high_watermark = high_watermark_;
    for (const std::shared_ptr<Segment>& segment : snapshot()) {
      if (segment->max_timestamp() < timestamp || segment->next_offset() <= log_start) continue;
      SLUICE_ASSIGN_OR_RETURN(std::optional<TimestampOffset> found,
                              segment->find_offset_for_timestamp(timestamp, log_start));
      if (!found.has_value()) continue;
      if (found->offset >= high_watermark) break;  // Kafka answers -1 / -1 for a match at or above the HW
      return std::optional<OffsetAndTimestamp>(OffsetAndTimestamp{found->offset, found->timestamp});
    }
    return std::optional<OffsetAndTimestamp>();
  };
  return read_until_two_agree<std::optional<OffsetAndTimestamp>>(
      4, dir_ + ": the search for timestamp " + std::to_string(timestamp), search,
      [] { SLUICE_PROBE("partition_log.timestamp_searches_disagreed"); });
}

Result<std::optional<OffsetAndTimestamp>> PartitionLog::max_timestamp() {
  int64_t max = -1;
  for (const std::shared_ptr<Segment>& segment : snapshot()) {
    if (segment->next_offset() > log_start_offset_) max = std::max(max, segment->max_timestamp());
  }
  if (max < 0) return std::optional<OffsetAndTimestamp>();
  // The first record carrying the max timestamp is the first one at or above it.
  return offset_for_timestamp(max);
}

}  // namespace sluice::storage
