// The vocabulary of core/raft: ids, terms, indexes, entries, the hard state, membership and options.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/mutations.h"

namespace sluice::raft {

using NodeId = uint64_t;
using Term = uint64_t;
using Index = uint64_t;  // log indexes start at 1; index 0 is the empty prefix, whose term is 0

inline constexpr NodeId kNoNode = 0;

// The most indexes one entry may cover (a Kafka batch holds at most INT32_MAX records; the file log stores a u32).
inline constexpr Index kEntryCountMax = UINT32_MAX;

// One log entry. It covers `count` consecutive indexes, [first, first + count), where `first` is implied by its
// position (an append names the index where its first entry starts; each next entry starts where the previous one
// ends). A partition log is the raft log with index = Kafka offset + 1: one entry is one record batch, `count` its
// record count and `term` its partition leader epoch. Groups without such a log use count 1 throughout.
struct Entry {
  Term term = 0;
  Index count = 1;      // >= 1 and <= kEntryCountMax, always
  std::string payload;  // empty for the no-op a new leader appends
  bool operator==(const Entry&) const = default;
};

// The indexes the entries cover together (the sum of their counts).
Index span_of(std::span<const Entry> entries);

// What must survive a power loss before a node answers anything that depends on it (thesis §3.8).
struct HardState {
  Term term = 0;
  NodeId voted_for = kNoNode;  // in `term`
  // Raised at every start: a leader that sees a follower's incarnation grow knows the follower restarted and may have
  // lost an unsynced suffix it had acknowledged (in `replicated` mode), so it forgets that follower's match index.
  uint64_t incarnation = 0;
  bool operator==(const HardState&) const = default;
};

// When an entry counts toward commit on a node (the topic's `durability` setting).
enum class CommitMode : uint8_t {
  kReplicated,  // once appended to the node's log
  kPersisted,   // once synced there
};

enum class Role : uint8_t { kFollower, kPreCandidate, kCandidate, kLeader };
std::string_view role_name(Role role);

// Who is in the group. Static now, applied identically on every member by the caller; `voters_outgoing` is the old
// side of a joint configuration (thesis §4.3), empty until joint consensus lands, but quorums already honour it.
struct Membership {
  std::vector<NodeId> voters = {};
  std::vector<NodeId> voters_outgoing = {};
  std::vector<NodeId> learners = {};  // receive the log; never vote, campaign or count toward a quorum

  bool is_voter(NodeId id) const;
  bool is_learner(NodeId id) const;
  bool contains(NodeId id) const { return is_voter(id) || is_learner(id); }
  // Every member (voters of both sides and learners), sorted, without duplicates.
  std::vector<NodeId> members() const;
  // Voters non-empty, no kNoNode, no duplicates, nobody both voter and learner.
  bool valid() const;
};

struct Options {
  NodeId id = kNoNode;
  uint32_t election_ticks = 10;  // a follower campaigns after [election_ticks, 2 * election_ticks) silent ticks
  uint32_t heartbeat_ticks = 1;  // REQUIRES < election_ticks
  bool pre_vote = true;          // thesis §9.6: a partitioned node cannot raise the term on rejoining
  bool check_quorum = true;      // a leader that has not heard from a majority for election_ticks steps down
  CommitMode commit_mode = CommitMode::kPersisted;
  uint32_t max_inflight_appends = 4;     // per follower in the replicate state
  uint32_t max_entries_per_append = 64;  // per append message
  uint64_t max_bytes_per_append = 1 << 20;  // payload bytes per append message (always at least one entry)
  // This start follows an unclean stop (a crash or a power loss: no clean-shutdown marker), so a `replicated` log
  // may have lost an unsynced suffix this node had acknowledged. The node then neither votes nor campaigns until it
  // has caught up with a leader (README, "Commit modes and the power-loss rule"), or until
  // `unclean_election_timeouts` election timeouts passed without hearing one. Set per group by the host.
  bool unclean_start = false;
  uint32_t unclean_election_timeouts = 5;
  MutationSet mutations;                 // planted bugs; empty in the real world
};

}  // namespace sluice::raft
