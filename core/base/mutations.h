// Mutations: known bugs the simulator can plant in the broker, to prove that its checkers can fail. A checker counts
// only once some scenario, run with one of these, has made it report a violation (and the same seeds pass without).
// They are a runtime set in the broker's configuration (kafka::BrokerConfig::mutations, copied into the storage and
// group configs; `sluice.mutations` in a properties file, so that a simulated node's file can carry it), but
// `sluice serve` refuses to start with any of them: the real world never runs them. Each site that plants one is
// marked with SLUICE_PROBE("mutation.<name>") and costs one well-predicted branch when the set is empty.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace sluice {

enum class Mutation : uint8_t {
  kAckBeforeAppend = 0,           // produce answers success before its records are appended (appended later)
  kSkipPersistedFsync = 1,        // a `persisted` topic's group-commit round acknowledges without syncing
  kCompactionDropsLatest = 2,     // the cleaner drops the latest value of some keys instead of the older ones
  kRetentionEvictsUnexpired = 3,  // time retention evicts batches younger than retention.ms
  kOffsetsReusedAfterRecovery = 4,  // a reopened log hands out offsets it already used (after any stop)
  kTombstoneBeforeHorizon = 5,    // the cleaner removes tombstones before their delete horizon
  kCommitWrongPartition = 6,      // OffsetCommit stores a partition's offset under another partition
  kRaftCommitOldTermByCount = 7,  // a raft leader commits an entry of an earlier term once a majority has it
  kRaftVoteWithoutLogCheck = 8,   // a raft node grants votes without the candidate's-log-is-up-to-date check
  kRaftAckBeforeSync = 9,         // a `persisted` raft follower acknowledges entries before they are durable
  kRaftIgnoreCheckQuorum = 10,    // a raft leader that no longer hears from a majority keeps leading
  kFollowerDropsAcks0 = 11,       // a cluster node drops an acks=0 produce it should forward to the leader
  kAcksAllBeforeQuorum = 12,      // a partition leader answers acks=all at its local append, before the quorum
  kHwAheadOfQuorum = 13,          // a partition leader's high watermark is its log end, not the quorum's commit
  kStaleLeaderServesFetch = 14,   // a replica that does not lead a partition still answers Fetch from its log
  kRaftUncleanNodeVotes = 15,     // a `replicated` raft node restarted after an unclean stop votes before catching up
  kCoordinatorCommitBeforeQuorum = 16,  // a group coordinator answers an offset commit after its local append
};
inline constexpr size_t kMutationCount = 17;

struct MutationInfo {
  Mutation mutation;
  std::string_view name;  // "ack-before-append": what `sluice sim --mutation` takes
  std::string_view what;  // one line for `sluice sim --list-mutations`
};
std::span<const MutationInfo> all_mutations();
std::string_view mutation_name(Mutation mutation);
std::optional<Mutation> parse_mutation(std::string_view name);
// Every name, comma-separated: what an error message offers.
std::string mutation_names();

// A set of mutations; empty in the real world.
class MutationSet {
 public:
  MutationSet() = default;
  void add(Mutation m) { bits_ |= bit(m); }
  bool has(Mutation m) const { return (bits_ & bit(m)) != 0; }
  bool empty() const { return bits_ == 0; }
  std::string to_string() const;  // "ack-before-append,skip-persisted-fsync"; "" when empty
  // The inverse of to_string (blanks around names allowed); an unknown name is refused with the valid ones.
  static Result<MutationSet> parse(std::string_view names);
  bool operator==(const MutationSet&) const = default;

 private:
  static uint32_t bit(Mutation m) { return uint32_t{1} << static_cast<uint8_t>(m); }
  uint32_t bits_ = 0;
};

}  // namespace sluice
