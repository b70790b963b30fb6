#include "core/raft/types.h"

#include <algorithm>

#include "core/base/assert.h"

namespace sluice::raft {
namespace {

bool has(const std::vector<NodeId>& ids, NodeId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

bool unique_and_named(std::vector<NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  if (!ids.empty() && ids.front() == kNoNode) return false;
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

}  // namespace

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kFollower: return "follower";
    case Role::kPreCandidate: return "pre-candidate";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  SLUICE_UNREACHABLE();
}

Index span_of(std::span<const Entry> entries) {
  Index span = 0;
  for (const Entry& entry : entries) {
    SLUICE_ASSERT(entry.count >= 1);
    SLUICE_ASSERT(entry.count <= kEntryCountMax);
    span += entry.count;
  }
  SLUICE_ASSERT(span >= entries.size());
  return span;
}

bool Membership::is_voter(NodeId id) const { return has(voters, id) || has(voters_outgoing, id); }

bool Membership::is_learner(NodeId id) const { return has(learners, id); }

std::vector<NodeId> Membership::members() const {
  std::vector<NodeId> all = voters;
  all.insert(all.end(), voters_outgoing.begin(), voters_outgoing.end());
  all.insert(all.end(), learners.begin(), learners.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

bool Membership::valid() const {
  if (voters.empty()) return false;
  if (!unique_and_named(voters) || !unique_and_named(voters_outgoing) || !unique_and_named(learners)) return false;
  for (NodeId learner : learners) {
    if (is_voter(learner)) return false;
  }
  return true;
}

}  // namespace sluice::raft
