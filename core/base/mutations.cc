#include "core/base/mutations.h"

#include <array>

#include "core/base/assert.h"

namespace sluice {
namespace {

// Indexed by the enumerator's value (checked below).
constexpr std::array<MutationInfo, kMutationCount> kMutations = {{
    {Mutation::kAckBeforeAppend, "ack-before-append",
     "produce answers success before its records are appended; they are appended a little later"},
    {Mutation::kSkipPersistedFsync, "skip-persisted-fsync",
     "a persisted topic's group-commit round acknowledges without syncing the active segment"},
    {Mutation::kCompactionDropsLatest, "compaction-drops-latest",
     "the cleaner drops the latest value of some keys and keeps their older ones"},
    {Mutation::kRetentionEvictsUnexpired, "retention-evicts-unexpired",
     "time retention judges batches against retention.ms / 10"},
    {Mutation::kOffsetsReusedAfterRecovery, "offsets-reused-after-recovery",
     "a reopened log hands out its last batch's offsets again (that batch is cut)"},
    {Mutation::kTombstoneBeforeHorizon, "tombstone-before-horizon",
     "the cleaner removes tombstones on their first pass, ignoring delete.retention.ms"},
    {Mutation::kCommitWrongPartition, "commit-wrong-partition",
     "OffsetCommit stores partition p's offset under partition p+1 of the same topic"},
    {Mutation::kRaftCommitOldTermByCount, "raft-commit-old-term-by-count",
     "a raft leader commits an entry of an earlier term as soon as a majority has it (Raft paper, figure 8)"},
    {Mutation::kRaftVoteWithoutLogCheck, "raft-vote-without-log-check",
     "raft nodes grant votes without checking that the candidate's log is at least as up to date"},
    {Mutation::kRaftAckBeforeSync, "raft-ack-before-sync",
     "a persisted raft follower acknowledges appended entries before syncing them"},
    {Mutation::kRaftIgnoreCheckQuorum, "raft-ignore-check-quorum",
     "a raft leader that has not heard from a majority for an election timeout keeps leading"},
    {Mutation::kFollowerDropsAcks0, "follower-drops-acks0",
     "a node that does not lead a partition silently drops an acks=0 produce instead of forwarding it to the leader"},
    {Mutation::kAcksAllBeforeQuorum, "acks-all-before-quorum",
     "a partition leader answers acks=all once its own log has the records, before a quorum of replicas has them"},
    {Mutation::kHwAheadOfQuorum, "hw-ahead-of-quorum",
     "a partition leader's high watermark is its log end offset, so consumers read records a failover can remove"},
    {Mutation::kStaleLeaderServesFetch, "stale-leader-serves-fetch",
     "a replica that no longer leads (or never led) a partition answers Fetch from its own log up to its log end"},
    {Mutation::kRaftUncleanNodeVotes, "raft-unclean-node-votes",
     "a replicated raft node restarted after an unclean stop votes and campaigns before catching up with a leader"},
    {Mutation::kCoordinatorCommitBeforeQuorum, "coordinator-commit-before-quorum",
     "a group coordinator on a cluster answers an offset commit once its own __consumer_offsets log has it, before a "
     "quorum of replicas has it"},
}};

constexpr bool indexed_by_value() {
  for (size_t i = 0; i < kMutations.size(); ++i) {
    if (static_cast<size_t>(kMutations[i].mutation) != i) return false;
  }
  return true;
}
static_assert(indexed_by_value());

std::string_view trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

}  // namespace

std::span<const MutationInfo> all_mutations() { return kMutations; }

std::string_view mutation_name(Mutation mutation) {
  const auto index = static_cast<size_t>(mutation);
  SLUICE_ASSERT(index < kMutationCount);
  return kMutations[index].name;
}

std::optional<Mutation> parse_mutation(std::string_view name) {
  for (const MutationInfo& info : kMutations) {
    if (info.name == name) return info.mutation;
  }
  return std::nullopt;
}

std::string mutation_names() {
  std::string out;
  for (const MutationInfo& info : kMutations) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

std::string MutationSet::to_string() const {
  std::string out;
  for (const MutationInfo& info : kMutations) {
    if (!has(info.mutation)) continue;
    if (!out.empty()) out += ",";
    out += info.name;
  }
  return out;
}

Result<MutationSet> MutationSet::parse(std::string_view names) {
  MutationSet set;
  while (!trim(names).empty()) {
    const size_t comma = names.find(',');
    const std::string_view name = trim(names.substr(0, comma));
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    if (name.empty()) continue;
    const std::optional<Mutation> mutation = parse_mutation(name);
    if (!mutation.has_value()) {
      return invalid_argument("unknown mutation '" + std::string(name) + "'; the mutations are " + mutation_names());
    }
    set.add(*mutation);
  }
  return set;
}

}  // namespace sluice
