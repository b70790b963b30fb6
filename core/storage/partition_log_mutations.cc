// PartitionLog's planted bugs (core/base/mutations.h), each reached only when its mutation is set.
#include "core/base/assert.h"
#include "core/storage/partition_log.h"

namespace sluice::storage {

// skip-persisted-fsync: a round that acknowledges appends leaves the active .log unsynced, yet moves the recovery
// point past it. Not a clean close's round (active_indexes): its marker makes the next open trust the files. A roll
// still syncs the segment it closes, so a power loss only tears the last segment, which recovery cuts.
bool PartitionLog::planted_skipped_sync(const Segment& segment, bool active_indexes) const {
  if (!settings_.persisted || active_indexes || &segment != &active()) return false;
  SLUICE_PROBE("mutation.skip-persisted-fsync");
  return true;
}

// offsets-reused-after-recovery: the active segment's last batch is cut at open, so its offsets go to the next
// append again while the client that wrote it holds an acknowledgement for them. Synced, so that a power loss
// cannot bring the old batch back behind the new one.
Status PartitionLog::planted_offset_reuse() {
  if (segments_.empty() || active().empty()) return Status();
  Segment& segment = active();
  SLUICE_ASSIGN_OR_RETURN(std::optional<uint64_t> position, segment.find_position(segment.next_offset() - 1));
  if (!position.has_value()) return Status();
  SLUICE_ASSIGN_OR_RETURN(Bytes last, segment.read(*position, 1, INT64_MAX));
  SLUICE_ASSIGN_OR_RETURN(BatchHeader header, parse_batch_header(last));
  if (header.base_offset < log_start_offset_) return Status();  // the cut would pass the log start
  SLUICE_PROBE("mutation.offsets-reused-after-recovery");
  SLUICE_TRY(segment.truncate_to(header.base_offset));
  return segment.flush();
}

}  // namespace sluice::storage
