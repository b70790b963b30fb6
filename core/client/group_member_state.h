// The group member's insides (client.h: GroupMember), shared by group_member.cc (join, sync, the range assignment)
// and group_heartbeat.cc (the heartbeat fiber, commits, offset fetches, leave).
//
// The member follows Kafka's classic consumer protocol: FindCoordinator, JoinGroup (a v4+ coordinator answers a
// first join MEMBER_ID_REQUIRED with the id to join with), SyncGroup (the leader, the member the coordinator names,
// computes the range assignment from every member's subscription and the topics' partition counts), then a
// heartbeat every heartbeat_interval on a fiber of its own. A heartbeat or commit answered REBALANCE_IN_PROGRESS,
// ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID sets needs_rejoin; only REBALANCE_IN_PROGRESS keeps
// the heartbeats going (they keep the member's session alive while it rejoins, as Kafka's heartbeat thread does).
// An answer to a request made under an older generation than the current one is ignored.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/client/client_core.h"
#include "core/client/requests.h"
#include "core/env/sync.h"

namespace sluice::client {

struct GroupMember::State : std::enable_shared_from_this<GroupMember::State> {
  State(std::shared_ptr<detail::ClientCore> core, GroupConfig config);

  std::shared_ptr<detail::ClientCore> core;
  Env env;
  GroupConfig config;
  std::string member_id;
  int32_t generation = -1;
  std::vector<TopicPartitionId> assignment;
  bool needs_rejoin = false;
  bool joined = false;   // a generation is held: heartbeats go out
  bool joining = false;  // join() runs: heartbeats wait
  bool stopped = false;  // the GroupMember is gone
  bool heartbeat_running = false;
  int32_t coordinator = -1;
  WaitQueue wake;  // the heartbeat fiber's sleep, cut short by leave() and the destructor

  MemberIdentity identity() const;
  // ---- group_member.cc ----
  Status find_coordinator();
  Status join_once(Instant deadline);
  Result<std::map<std::string, Bytes>> assign(const std::vector<protocol::JoinGroupResponse::Member>& members);
  Status sync(Duration timeout, const std::map<std::string, Bytes>& assignments);
  // A transport failure, or a code saying so: the coordinator must be found again.
  void forget_coordinator_after(const Status& status);
  // ---- group_heartbeat.cc ----
  void start_heartbeats();
  void run_heartbeats();
  void heartbeat_once();
  // An answer `error` to a request made at `generation`: flags a rejoin when it says so.
  void note_group_error(int16_t error, int32_t sent_generation);
};

}  // namespace sluice::client
