// PartitionLog's replica side: the write path both appends share, the replica append (a leader's batches byte for
// byte), batch boundaries, and the leader epoch cache with its file (leader-epoch-checkpoint).
//
// Why the epoch file is written before the batches that start an epoch and after a truncation is durable: then the
// file never lacks an entry that a durable batch needs. What it may hold in excess — an epoch whose first batch a
// power loss took, entries a truncation cut before its rewrite reached the disk, entries below the log start (a log
// start move does not rewrite it) — lies above the recovered log end or below the log start, and open() drops it
// (Kafka's truncateFromEnd / truncateFromStart at load). A failed write leaves epochs_unsaved_, and the next write
// of batches rewrites the file first.
#include <algorithm>

#include "core/base/assert.h"
#include "core/storage/agreeing_reads.h"
#include "core/protocol/error_codes.h"
#include "core/storage/partition_log.h"
#include "core/storage/partition_log_internal.h"

namespace sluice::storage {
namespace {

Status replica_error(const std::string& dir, const std::string& what) {
  return Status(Code::kInvalidArgument, dir + ": replica append refused: " + what,
                static_cast<int16_t>(ErrorCode::kInvalidRequest));
}

}  // namespace

Status PartitionLog::write_locked(std::span<const ByteView> parts, std::span<const BatchSpan> spans, uint64_t bytes,
                                  AppendResult& result) {
  SLUICE_ASSERT(append_locked_);
  SLUICE_ASSERT(!spans.empty());
  SLUICE_ASSERT(spans.front().header.base_offset == result.base_offset);
  SLUICE_ASSERT(result.base_offset >= log_end_offset_);
  int64_t incoming_max_timestamp = -1;
  for (const BatchSpan& span : spans) {
    incoming_max_timestamp = std::max(incoming_max_timestamp, span.header.max_timestamp);
  }
  if (should_roll(active(), bytes, incoming_max_timestamp, result.last_offset)) SLUICE_TRY(roll_locked());
  // A new epoch starts at its first batch. Only epochs above the latest: a client's lower one (append() keeps what
  // clients send) must not rewrite history; append_as_replica and AppendOptions::leader_epoch refuse them.
  LeaderEpochCache epochs = epochs_;
  bool changed = false;
  for (const BatchSpan& span : spans) {
    const int32_t epoch = span.header.partition_leader_epoch;
    if (epoch >= 0 && (epochs.empty() || epoch > *epochs.latest_epoch())) {
      changed |= epochs.assign(epoch, span.header.base_offset);
    }
  }
  if (changed || epochs_unsaved_) SLUICE_TRY(save_leader_epochs(epochs));  // before the batches: top of file
  const uint64_t allocated_before = active().allocated_bytes();
  Status written = active().append(parts, spans, settings_.persisted ? kPersistedPreallocateBytes : 0);
  if (!written.ok()) {
    if (changed) epochs_unsaved_ = true;  // the file names an epoch no batch has
    return written.code() == Code::kIoError ? fail(written) : written;
  }
  result.disk_bytes = active().allocated_bytes() - allocated_before;
  log_end_offset_ = result.last_offset + 1;
  epochs_ = std::move(epochs);
  ++stats_.appends;
  advance_high_watermark();
  SLUICE_ASSERT(active().next_offset() == log_end_offset_);
  return Status();
}

Result<AppendResult> PartitionLog::finish_append(AppendResult result, const AppendOptions& options) {
  const bool sync_now = settings_.persisted ? !options.defer_sync
                                            : log_end_offset_ - recovery_point_ >= settings_.flush_messages;
  if (sync_now) SLUICE_TRY(sync_through(result.last_offset + 1));
  result.sync_deferred = !durable_through(result.last_offset + 1);
  SLUICE_ASSERT(!result.sync_deferred || options.defer_sync);
  result.log_start_offset = log_start_offset_;
  return result;
}

Status PartitionLog::check_replica_batches(ByteView batches, std::span<const BatchSpan> spans) const {
  SLUICE_ASSERT(!spans.empty());
  std::optional<int32_t> floor = epochs_.latest_epoch();
  int64_t expected = log_end_offset_;
  for (const BatchSpan& span : spans) {
    const BatchHeader& h = span.header;
    SLUICE_ASSERT(span.position + h.size_bytes() <= batches.size());
    if (h.base_offset != expected) {
      return replica_error(dir_, "a batch starts at offset " + std::to_string(h.base_offset) + ", expected " +
                                     std::to_string(expected) +
                                     (expected == log_end_offset_ ? " (the log end)" : " (after the previous batch)"));
    }
    if (floor.has_value() && h.partition_leader_epoch < *floor) {
      return replica_error(dir_, "the batch at offset " + std::to_string(h.base_offset) + " has leader epoch " +
                                     std::to_string(h.partition_leader_epoch) + ", below " + std::to_string(*floor));
    }
    if (h.partition_leader_epoch >= 0) floor = h.partition_leader_epoch;
    expected = h.last_offset() + 1;
  }
  return Status();
}

Result<AppendResult> PartitionLog::append_as_replica(ByteView batches, const AppendOptions& options) {
  SLUICE_ASSERT(!options.log_append_time);
  SLUICE_ASSERT(!options.leader_epoch.has_value());
  SLUICE_TRY(check_appendable());
  size_t consumed = 0;
  Result<std::vector<BatchSpan>> split = split_batches(batches, &consumed);
  if (!split.ok() || split->empty() || consumed != batches.size()) {
    return kafka_error(ErrorCode::kCorruptMessage, dir_ + ": replica append refused: not a sequence of whole batches");
  }
  if (static_cast<int64_t>(batches.size()) > settings_.segment_bytes) {
    return kafka_error(ErrorCode::kRecordListTooLarge, "a batch set of " + std::to_string(batches.size()) +
                                                           " bytes exceeds segment.bytes " +
                                                           std::to_string(settings_.segment_bytes));
  }
  const std::vector<BatchSpan> spans = std::move(*split);
  for (const BatchSpan& span : spans) {  // outside the lock: the bytes alone decide
    if (!batch_crc_ok(batches.subspan(span.position, span.header.size_bytes()), span.header)) {
      return kafka_error(ErrorCode::kCorruptMessage, dir_ + ": replica append refused: the batch at offset " +
                                                         std::to_string(span.header.base_offset) + " fails its CRC");
    }
  }
  AppendResult result;
  {
    AppendGuard lock(*this);
    SLUICE_TRY(check_appendable());
    SLUICE_TRY(check_replica_batches(batches, spans));  // against the log end and epoch as the lock found them
    result.base_offset = spans.front().header.base_offset;
    result.last_offset = spans.back().header.last_offset();
    const ByteView part[] = {batches};
    SLUICE_TRY(write_locked(part, spans, batches.size(), result));
  }
  SLUICE_PROBE("partition_log.replica_append");
  return finish_append(std::move(result), options);
}

// ---- batch boundaries ----

Result<std::optional<BatchHeader>> PartitionLog::first_batch_ending_at_or_after(int64_t offset, bool* cut) const {
  auto it = segments_.upper_bound(offset);
  if (it != segments_.begin()) --it;
  while (it != segments_.end()) {
    const std::shared_ptr<Segment> segment = it->second;  // alive across the reads
    const uint64_t generation = segment->cut_generation();
    const bool cutting = segment->cutting();
    Result<std::optional<BatchHeader>> found = read_again_on_damage(
        4, [&] { return segment->batch_header_at_or_after(offset); },
        [](const Status&) { SLUICE_PROBE("partition_log.batch_lookup_read_again_after_damage"); });
    if (cut != nullptr && (cutting || segment->cut_generation() != generation)) {
      *cut = true;
      return std::optional<BatchHeader>();
    }
    SLUICE_ASSIGN_OR_RETURN(std::optional<BatchHeader> header, std::move(found));
    if (header.has_value()) return header;
    it = segments_.upper_bound(segment->base_offset());  // a gap at its end; the map may have changed meanwhile
  }
  return std::optional<BatchHeader>();
}

// Called beside the raft driver too (an acks=all wait looks up its entry on the producer's fiber), while the driver
// truncates.
Result<int64_t> PartitionLog::batch_base_offset_containing(int64_t offset) {
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    if (offset < log_start_offset_ || offset >= log_end_offset_) {
      return kafka_error(ErrorCode::kOffsetOutOfRange, dir_ + ": offset " + std::to_string(offset) +
                                                           " is outside [" + std::to_string(log_start_offset_) +
                                                           ", " + std::to_string(log_end_offset_) + ")");
    }
    bool cut = false;
    SLUICE_ASSIGN_OR_RETURN(std::optional<BatchHeader> header, first_batch_ending_at_or_after(offset, &cut));
    if (!cut) {
      if (!header.has_value()) return log_end_offset_;  // a gap up to the log end (a cut that left one)
      SLUICE_ASSERT(header->last_offset() >= offset);
      SLUICE_ASSERT(header->base_offset < log_end_offset_);
      return header->base_offset;
    }
    SLUICE_ASSERT(!header.has_value());
    if (attempt == kAttempts) {
      return kafka_error(ErrorCode::kNotLeaderOrFollower, dir_ + ": truncations kept cutting the log under a lookup "
                                                                 "of offset " + std::to_string(offset));
    }
    SLUICE_PROBE("partition_log.batch_lookup_retried_after_cut");
    wait_for_cut();
  }
}

// ---- the epoch cache ----

std::optional<int32_t> PartitionLog::epoch_at(int64_t offset) const {
  if (offset < log_start_offset_ || offset >= log_end_offset_) return std::nullopt;
  return epochs_.epoch_for_offset(offset);
}

int64_t PartitionLog::last_offset_with_epoch_at_most(int64_t at_or_below_offset, int32_t epoch) const {
  if (log_end_offset_ == log_start_offset_) return -1;
  int64_t offset = std::min(at_or_below_offset, log_end_offset_ - 1);
  // Epochs never decrease along the log: the offsets with an epoch <= `epoch` are those below the first larger one.
  if (const std::optional<EpochEntry> later = epochs_.first_entry_after(std::max(epoch, kUndefinedEpoch))) {
    offset = std::min(offset, later->start_offset - 1);
  }
  return offset >= log_start_offset_ ? offset : -1;
}

Status PartitionLog::save_leader_epochs(const LeaderEpochCache& epochs) {
  Status written = write_leader_epoch_checkpoint(env_.fs, dir_, epochs.entries());
  if (written.ok()) {
    epochs_unsaved_ = false;
    epochs_file_missing_ = false;
    return Status();
  }
  epochs_unsaved_ = true;
  SLUICE_PROBE("partition_log.leader_epoch_checkpoint_failed");
  return written.code() == Code::kIoError ? fail(written) : written;
}

Result<bool> PartitionLog::leader_epochs_agree_with_last_batch() const {
  for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) {
    const Segment& segment = *it->second;
    if (segment.empty()) continue;
    if (segment.next_offset() <= log_start_offset_) return true;  // no batch at or above the log start
    SLUICE_ASSIGN_OR_RETURN(std::optional<BatchHeader> last,
                            segment.batch_header_at_or_after(segment.next_offset() - 1));
    if (!last.has_value()) return corruption(segment.log_path() + ": no batch holds its last offset");
    if (last->partition_leader_epoch < 0) return true;  // a batch without an epoch says nothing
    return epochs_.epoch_for_offset(std::max(last->base_offset, log_start_offset_)) == last->partition_leader_epoch;
  }
  return true;
}

// Headers carry no CRC over their epoch or base offset: the cache is rebuilt from a walk that a second one agrees
// with (a device can hand back one bad copy of good bytes).
Status PartitionLog::rebuild_leader_epochs() {
  SLUICE_ASSIGN_OR_RETURN(
      LeaderEpochCache rebuilt,
      read_until_two_agree<LeaderEpochCache>(
          4, dir_ + ": the walk of the batch epochs", [this] { return walk_leader_epochs(); },
          [] { SLUICE_PROBE("partition_log.leader_epoch_walks_disagreed"); },
          [](const LeaderEpochCache& a, const LeaderEpochCache& b) { return a.entries() == b.entries(); }));
  epochs_ = std::move(rebuilt);
  return Status();
}

Result<LeaderEpochCache> PartitionLog::walk_leader_epochs() const {
  LeaderEpochCache rebuilt;
  for (const auto& [base, segment] : segments_) {
    SLUICE_TRY(segment->for_each_batch_header([&rebuilt](const BatchHeader& header) {
      const int32_t epoch = header.partition_leader_epoch;
      if (epoch >= 0 && (rebuilt.empty() || epoch > *rebuilt.latest_epoch())) rebuilt.assign(epoch, header.base_offset);
      return Status();
    }));
  }
  rebuilt.truncate_from_start(log_start_offset_);
  rebuilt.truncate_from_end(log_end_offset_);
  return rebuilt;
}

// At open, once recovery has cut what it cut and the log start and end are known.
Status PartitionLog::load_leader_epochs() {
  Result<std::optional<std::vector<EpochEntry>>> file = read_leader_epoch_checkpoint(env_.fs, dir_);
  if (!file.ok() && file.status().code() != Code::kCorruption) return std::move(file).take_status();
  if (file.ok() && !file->has_value()) {
    // No file: a new partition, or one written before the file existed; the batches say it all. An empty log's
    // file follows with its first epoch or at close, so that creating a partition costs no extra syncs.
    SLUICE_TRY(rebuild_leader_epochs());
    if (log_end_offset_ > log_start_offset_ || !epochs_.empty()) return save_leader_epochs(epochs_);
    epochs_file_missing_ = true;
    return Status();
  }
  bool rebuild = !file.ok();
  if (rebuild) {
    SLUICE_PROBE("partition_log.leader_epoch_checkpoint_damaged");
    env_.log.warn("{}: rebuilding the leader epoch cache from the batches: {}", dir_, file.status().message());
  } else {
    std::vector<EpochEntry> on_disk = std::move(**file);
    epochs_ = LeaderEpochCache(on_disk);
    // Entries at or above the log end: a torn tail, or a truncation's rewrite that did not land. The file must lose
    // them before a batch is written there. Except, in a log with no batch, the entry at its start: the epoch of the
    // offset before it (retention or restart_at kept it there), which raft needs as the empty log's last term. (After
    // a torn first append it may name that append's epoch: a real leader's, whose log ended there, so a bound that
    // elections may use.)
    const bool empty = log_end_offset_ == log_start_offset_;
    const bool cut = epochs_.truncate_from_end(empty ? log_end_offset_ + 1 : log_end_offset_);
    epochs_.truncate_from_start(log_start_offset_);  // a log start move (never written for it: harmless)
    SLUICE_ASSIGN_OR_RETURN(const bool agree, leader_epochs_agree_with_last_batch());
    if (!agree) {
      SLUICE_PROBE("partition_log.leader_epoch_checkpoint_disagrees");
      env_.log.warn("{}: the leader epoch cache disagrees with the last batch's epoch: rebuilding it", dir_);
      rebuild = true;
    } else if (!cut) {
      return Status();
    }
  }
  if (rebuild) SLUICE_TRY(rebuild_leader_epochs());
  return save_leader_epochs(epochs_);
}

}  // namespace sluice::storage
