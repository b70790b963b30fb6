// Leader epochs on a single node: this broker has led every partition since its creation, in epoch 0 (Metadata
// answers leader_epoch 0). Kafka's per-partition epoch cache therefore holds one entry, epoch 0 from the log start,
// and its checks (Partition.getLocalLog, LeaderEpochFileCache.endOffsetFor) reduce to the functions here. Fetch,
// ListOffsets and OffsetForLeaderEpoch share them.
#pragma once

#include <cstdint>

#include "core/protocol/error_codes.h"

namespace sluice::kafka {

inline constexpr int32_t kCurrentLeaderEpoch = 0;
inline constexpr int32_t kUndefinedEpoch = -1;
inline constexpr int64_t kUndefinedEpochOffset = -1;

// A request's CurrentLeaderEpoch: -1 skips the check; older than ours is fenced (the client's metadata is stale),
// newer is unknown (ours is). Returns the partition's error code, 0 when the epoch matches.
inline int16_t check_current_leader_epoch(int32_t requested) {
  if (requested == kUndefinedEpoch || requested == kCurrentLeaderEpoch) return 0;
  const ErrorCode error =
      requested > kCurrentLeaderEpoch ? ErrorCode::kUnknownLeaderEpoch : ErrorCode::kFencedLeaderEpoch;
  return static_cast<int16_t>(error);
}

struct EpochEndOffset {
  int32_t epoch = kUndefinedEpoch;
  int64_t end_offset = kUndefinedEpochOffset;
};

// The end offset of the largest epoch <= `requested`, with that epoch: the current epoch ends at the log end; an
// epoch newer than any known is undefined (-1, -1); an epoch older than the first known one is answered with itself
// and the first epoch's start offset (Kafka's "requested epoch is smaller than any known epoch" case).
inline EpochEndOffset end_offset_for_epoch(int32_t requested, int64_t log_start_offset, int64_t log_end_offset) {
  if (requested == kUndefinedEpoch || requested > kCurrentLeaderEpoch) return {};
  if (requested == kCurrentLeaderEpoch) return {kCurrentLeaderEpoch, log_end_offset};
  return {requested, log_start_offset};
}

}  // namespace sluice::kafka
