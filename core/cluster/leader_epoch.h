// Leader epochs while one epoch covers a partition's whole log: this node has led every partition since its
// creation, in kInitialLeaderEpoch. Kafka's per-partition epoch cache then holds one entry, (epoch, log start), and
// its checks (Partition.checkCurrentLeaderEpoch, LeaderEpochFileCache.endOffsetFor) reduce to the functions here.
// `cluster::Partition` answers them with its own epoch; the replication step replaces end_offset_for_epoch by a
// persisted epoch cache with one entry per leader change.
#pragma once

#include <cstdint>

#include "core/protocol/error_codes.h"

namespace sluice::cluster {

inline constexpr int32_t kInitialLeaderEpoch = 0;
inline constexpr int32_t kUndefinedEpoch = -1;
inline constexpr int64_t kUndefinedEpochOffset = -1;

// A request's CurrentLeaderEpoch against the partition's `current` one: -1 skips the check; older than ours is
// fenced (the client's metadata is stale), newer is unknown (ours is).
inline ErrorCode check_current_leader_epoch(int32_t requested, int32_t current) {
  if (requested == kUndefinedEpoch || requested == current) return ErrorCode::kNone;
  return requested > current ? ErrorCode::kUnknownLeaderEpoch : ErrorCode::kFencedLeaderEpoch;
}

struct EpochEndOffset {
  int32_t epoch = kUndefinedEpoch;
  int64_t end_offset = kUndefinedEpochOffset;
  bool operator==(const EpochEndOffset&) const = default;
};

// The end offset of the largest epoch <= `requested`, with that epoch, when `current` is the only epoch the log
// has known: the current epoch ends at the log end; an epoch newer than any known is undefined (-1, -1); an epoch
// older than the first known one is answered with itself and the first epoch's start offset (Kafka's "requested
// epoch is smaller than any known epoch" case).
inline EpochEndOffset end_offset_for_epoch(int32_t requested, int32_t current, int64_t log_start_offset,
                                           int64_t log_end_offset) {
  if (requested == kUndefinedEpoch || requested > current) return {};
  if (requested == current) return {current, log_end_offset};
  return {requested, log_start_offset};
}

}  // namespace sluice::cluster
