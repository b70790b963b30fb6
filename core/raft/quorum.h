// Quorum arithmetic over a Membership: majorities of the voters, and of both sides of a joint configuration.
#pragma once

#include <functional>

#include "core/raft/types.h"

namespace sluice::raft {

// The largest index that a majority of the voters (of each side, when joint) has reached.
Index quorum_index(const Membership& membership, const std::function<Index(NodeId)>& reached);

enum class VoteResult : uint8_t { kPending, kWon, kLost };
// `vote(id)`: +1 granted, -1 refused, 0 not yet answered.
VoteResult tally(const Membership& membership, const std::function<int(NodeId)>& vote);

}  // namespace sluice::raft
