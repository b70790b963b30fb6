// LogLoader: turns a partition directory into loaded segments at open, after a clean or an unclean stop
// (storage-semantics.md §4, with Sluice's refusal of interior damage, departure 2). Also the explicit repair and
// the partition.state file.
//
// Recovery, in order:
//  1. The clean-shutdown marker is read and removed at once (and the directory synced), so that a crash while
//     loading counts as unclean.
//  2. Temporary files: `.cleaned`, `.deleted`, `partition.state.tmp` and `leader-epoch-checkpoint.tmp` are
//     removed; a `.log.swap` whose batches all verify replaces the segments it covers (the cleaner syncs it before
//     giving it that name), an invalid one is removed (undone). Index files without a `.log` are removed.
//  (After the load, PartitionLog::open brings the leader epoch cache in line with what recovery kept.)
//  3. Clean: every segment is trusted (no scan; an index is rebuilt only when missing or damaged). Unclean:
//     segments below the one holding the recovery point are trusted; from that one on every batch is checked.
//     A bad batch in the LAST segment is a torn tail: the segment is cut there. In any other segment it is
//     damage: the partition is refused with a message naming the file, the position, the offset and the repair.
//     A partition.state that does not verify refuses the load too (read_partition_state).
//  4. The log start is max(partition.state's, first segment's base); if the log end is below it every segment
//     goes. Segments wholly below the log start (deleted before the stop) are removed.
//  5. Recovered segments are synced, so the recovery point becomes the log end.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/base/result.h"
#include "core/env/env.h"
#include "core/storage/log_format.h"
#include "core/storage/partition_log.h"
#include "core/storage/segment.h"

namespace sluice::storage {

struct LoadedLog {
  std::map<int64_t, std::shared_ptr<Segment>> segments;  // may be empty: the caller creates the active one
  int64_t log_start_offset = 0;
  int64_t recovery_point = 0;
  LoadStats stats;
};

class LogLoader {
 public:
  static Result<LoadedLog> load(Env env, const std::string& dir, const SegmentConfig& config);
  static Result<std::string> repair(Env env, const std::string& dir, const SegmentConfig& config);
};

// partition.state, written atomically: a temporary file, sync, rename, sync_dir. A failed sync is kIoError
// (replace_file_durably): final, the caller's log goes offline.
Status write_partition_state(FileSystem& fs, const std::string& dir, const PartitionState& state);
// nullopt when there is none (then the log start is the first segment's base and every segment is scanned). One
// that does not verify refuses the load (kCorruption, KAFKA_STORAGE_ERROR, naming `sluice log repair`, which
// removes it): it holds the log start offset, and ignoring it would serve deleted records again.
Result<std::optional<PartitionState>> read_partition_state(FileSystem& fs, const std::string& dir);

}  // namespace sluice::storage
