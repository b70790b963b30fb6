// LeaderEpochCache: which leader epoch wrote which offsets of a partition log, one entry per epoch (Kafka 3.9's
// LeaderEpochFileCache): (epoch, start offset), the first offset written in that epoch. Entries are strictly
// increasing in both fields; an epoch covers the offsets from its start up to the next entry's start (the last one
// up to the log end). With raft, the epoch is the term of the entries (record batches) it covers.
//
// This class is the pure part: the entries and Kafka's rules for changing and asking them, plus the codec and the
// atomic write of `leader-epoch-checkpoint` (docs/formats.md). PartitionLog owns one and keeps it in step with its
// batches (partition_log_replica.cc); it is no second copy of the log: a few entries per partition, never one per
// batch.
//
// Fibers: none of its own; the owning log changes it under its append lock. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/file_system.h"
#include "core/storage/log_format.h"

namespace sluice::storage {

inline constexpr int32_t kUndefinedEpoch = -1;         // Kafka's UNDEFINED_EPOCH (and a batch without an epoch)
inline constexpr int64_t kUndefinedEpochOffset = -1;   // Kafka's UNDEFINED_EPOCH_OFFSET

inline constexpr int kLeaderEpochFileVersion = 0;  // the file's name is in log_format.h

struct EpochEntry {
  int32_t epoch = 0;
  int64_t start_offset = 0;
  bool operator==(const EpochEntry&) const = default;
};

// OffsetForLeaderEpoch's answer: the largest epoch <= the requested one and where it ends; (-1, -1) when undefined.
struct EpochEndOffset {
  int32_t epoch = kUndefinedEpoch;
  int64_t end_offset = kUndefinedEpochOffset;
  bool operator==(const EpochEndOffset&) const = default;
};

class LeaderEpochCache {
 public:
  LeaderEpochCache() = default;
  // REQUIRES: `entries` strictly increasing in epoch and start offset, every epoch and start >= 0
  // (valid_epoch_entries).
  explicit LeaderEpochCache(std::vector<EpochEntry> entries);

  // Kafka's assign: records that `epoch` wrote from `start_offset` on. No change when `epoch` is the latest and starts
  // at or before `start_offset`. Otherwise every entry whose epoch >= `epoch` or whose start >= `start_offset` is
  // dropped from the end first (a non-monotonic assignment replaces what it contradicts), then the entry is added.
  // REQUIRES: epoch >= 0, start_offset >= 0. True when the entries changed.
  bool assign(int32_t epoch, int64_t start_offset);
  // Kafka's truncateFromEnd: drops every entry starting at or above `end_offset` (a suffix truncation of the log).
  // No-op for a negative offset. True when the entries changed.
  bool truncate_from_end(int64_t end_offset);
  // Kafka's truncateFromStart: the log start moved to `start_offset`; entries starting at or below it go, except
  // that the last of them comes back starting at `start_offset` (it covers the new log start). No-op for a
  // negative offset. True when the entries changed.
  bool truncate_from_start(int64_t start_offset);

  std::optional<int32_t> latest_epoch() const;
  // The epoch of the entry covering `offset` (the last one starting at or below it); nullopt below the first entry.
  // The caller bounds `offset` by the log.
  std::optional<int32_t> epoch_for_offset(int64_t offset) const;
  // Kafka 3.9's LeaderEpochFileCache.endOffsetFor. `requested` == -1: (-1, -1). `requested` is the latest epoch:
  // (it, log_end_offset). Otherwise, with H the first entry of a larger epoch: none, (-1, -1) (newer than any known,
  // or the cache is empty); else the entry F of the largest epoch <= requested answers (F's epoch, H's start), and
  // with no such F (older than any known) the answer is (requested, H's start).
  EpochEndOffset end_offset_for(int32_t requested, int64_t log_end_offset) const;
  // The first entry whose epoch is larger than `epoch`; nullopt when none is.
  std::optional<EpochEntry> first_entry_after(int32_t epoch) const;

  const std::vector<EpochEntry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<EpochEntry> entries_;  // strictly increasing in both fields
};

// True when `entries` are strictly increasing in epoch and start offset, all >= 0.
bool valid_epoch_entries(const std::vector<EpochEntry>& entries);

// Kafka's text layout: "0\n<count>\n" then "<epoch> <start offset>\n" per entry.
std::string encode_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries);
// kCorruption on a wrong version, a count that disagrees with the lines, a malformed line, or entries that are not
// strictly increasing.
Result<std::vector<EpochEntry>> decode_leader_epoch_checkpoint(std::string_view text);

// `<dir>/leader-epoch-checkpoint`, atomically (temporary file, sync, rename, directory sync).
Status write_leader_epoch_checkpoint(FileSystem& fs, const std::string& dir, const std::vector<EpochEntry>& entries);
// nullopt when the file is missing; kCorruption when it does not decode; other errors as the disk gives them.
Result<std::optional<std::vector<EpochEntry>>> read_leader_epoch_checkpoint(FileSystem& fs, const std::string& dir);

}  // namespace sluice::storage
