// One classic consumer group as the coordinator keeps it in memory: its state, generation, members (with the
// JoinGroup / SyncGroup requests parked on them) and committed offsets. Plain data with small queries; the
// transitions live in GroupCoordinator (coordinator.h), which owns every Group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/env/sync.h"
#include "core/group/types.h"
#include "core/storage/topic_partition.h"

namespace sluice::group {

// A timer of the coordinator's timer fiber: (due, sequence).
using TimerKey = std::pair<Instant, uint64_t>;

// A JoinGroup or SyncGroup request parked until the rebalance step it waits for completes. It lives on the waiting
// fiber's stack; the member points to it, and it unlinks itself if that fiber unwinds first.
template <typename R>
struct Parked {
  explicit Parked(Scheduler& scheduler) : done(scheduler) {}
  std::optional<R> result;
  WaitQueue done;
};

struct Member {
  std::string id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<Protocol> protocols;  // in the member's order of preference
  Bytes assignment;
  bool is_new = false;  // joined during the current rebalance
  bool heartbeat_satisfied = false;
  Parked<JoinResult>* join = nullptr;
  Parked<SyncResult>* sync = nullptr;
  std::optional<TimerKey> session_timer;

  const Bytes* metadata_for(const std::string& protocol) const;
  // The same protocols, in the same order, with the same metadata.
  bool matches(const std::vector<Protocol>& other) const;
};

struct CommittedOffset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = -1;
  std::optional<int64_t> expire_timestamp_ms;
};

struct Group {
  Group(std::string group_id, Scheduler& scheduler) : id(std::move(group_id)), writes(scheduler) {}

  std::string id;
  GroupState state = GroupState::kEmpty;
  int32_t generation = 0;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  std::map<std::string, Member> members;
  std::map<std::string, std::optional<TimerKey>> pending_members;  // MEMBER_ID_REQUIRED ids, each with its expiry
  std::set<std::string> pending_sync;  // joined this generation, SyncGroup not seen yet
  bool new_member_added = false;       // during the initial delay: extend it
  bool initial_delay = false;          // join_timer is the initial delay (which nothing completes early)
  int64_t state_timestamp_ms = -1;     // wall time of the last transition
  std::optional<TimerKey> join_timer;  // the rebalance deadline (or the initial delay)
  std::optional<TimerKey> sync_timer;  // the pending-sync deadline
  std::map<storage::TopicPartition, CommittedOffset> offsets;
  // Appends of this group's records take turns, so that the log holds them in the order memory applied them.
  Mutex writes;

  bool is(GroupState s) const { return state == s; }
  bool has(const std::string& member_id) const { return members.count(member_id) != 0; }
  bool can_rebalance() const;
  // Kafka's supportsProtocols: an empty group takes any non-empty type and protocol list; otherwise the type must
  // match and one protocol must be supported by every member.
  bool supports(const std::string& type, const std::vector<Protocol>& protocols) const;
  // The vote: every member names its most preferred protocol among those all members support; most votes wins
  // (ties: the leader's preference order).
  std::string select_protocol() const;
  size_t awaiting_join() const;
  // The id of the member holding this group.instance.id (a static member), if any.
  std::optional<std::string> static_member(const std::string& instance_id) const;
  bool all_joined() const { return awaiting_join() == members.size() && pending_members.empty(); }
  int32_t rebalance_timeout_ms() const;
  // The topics the members subscribe to, from the consumer protocol's metadata; nullopt when unknown (another
  // protocol type, no protocol yet, or metadata that does not parse).
  std::optional<std::set<std::string>> subscribed_topics() const;
  bool subscribed_to(const std::string& topic) const;
};

}  // namespace sluice::group
