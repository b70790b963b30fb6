#include "core/raft/quorum.h"

#include <algorithm>
#include <limits>

#include "core/base/assert.h"

namespace sluice::raft {
namespace {

Index majority_index(const std::vector<NodeId>& voters, const std::function<Index(NodeId)>& reached) {
  if (voters.empty()) return std::numeric_limits<Index>::max();  // an empty side agrees to anything
  std::vector<Index> indexes;
  indexes.reserve(voters.size());
  for (NodeId id : voters) indexes.push_back(reached(id));
  std::sort(indexes.begin(), indexes.end(), std::greater<>());
  // With n voters, the (n/2 + 1)-th largest is reached by a majority.
  const size_t majority = voters.size() / 2 + 1;
  SLUICE_ASSERT(majority <= indexes.size());
  return indexes[majority - 1];
}

VoteResult majority_vote(const std::vector<NodeId>& voters, const std::function<int(NodeId)>& vote) {
  if (voters.empty()) return VoteResult::kWon;
  size_t granted = 0;
  size_t refused = 0;
  for (NodeId id : voters) {
    const int v = vote(id);
    SLUICE_ASSERT(v >= -1 && v <= 1);
    if (v > 0) ++granted;
    if (v < 0) ++refused;
  }
  const size_t majority = voters.size() / 2 + 1;
  if (granted >= majority) return VoteResult::kWon;
  if (refused > voters.size() - majority) return VoteResult::kLost;
  return VoteResult::kPending;
}

}  // namespace

Index quorum_index(const Membership& membership, const std::function<Index(NodeId)>& reached) {
  SLUICE_ASSERT(!membership.voters.empty());
  return std::min(majority_index(membership.voters, reached), majority_index(membership.voters_outgoing, reached));
}

VoteResult tally(const Membership& membership, const std::function<int(NodeId)>& vote) {
  SLUICE_ASSERT(!membership.voters.empty());
  const VoteResult incoming = majority_vote(membership.voters, vote);
  const VoteResult outgoing = majority_vote(membership.voters_outgoing, vote);
  if (incoming == VoteResult::kLost || outgoing == VoteResult::kLost) return VoteResult::kLost;
  if (incoming == VoteResult::kWon && outgoing == VoteResult::kWon) return VoteResult::kWon;
  return VoteResult::kPending;
}

}  // namespace sluice::raft
