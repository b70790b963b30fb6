// GroupMember: finding the coordinator, joining, the leader's range assignment and SyncGroup
// (group_member_state.h has the protocol).
#include <fmt/format.h>

#include <set>

#include "core/client/consumer_protocol.h"
#include "core/client/errors.h"
#include "core/client/group_member_state.h"

namespace sluice::client {

namespace {

// Join steps answered with these go again at once: the answer says what to change (the member id, the generation).
bool rejoin_at_once(const Status& status) {
  if (status.code() != Code::kInvalidArgument) return false;
  const int16_t error = status.protocol_error();
  return error == errc::kMemberIdRequired || error == errc::kUnknownMemberId || error == errc::kRebalanceInProgress ||
         error == errc::kIllegalGeneration;
}

Duration remaining(Env env, Instant deadline) {
  return std::max<Duration>(deadline - env.clock.now(), std::chrono::milliseconds(1));
}

}  // namespace

GroupMember::GroupMember(Client& client, GroupConfig config)
    : state_(std::make_shared<State>(client.core_, std::move(config))) {
  SLUICE_ASSERT(!state_->config.group_id.empty());
  SLUICE_ASSERT(state_->config.heartbeat_interval > Duration::zero());
}

GroupMember::~GroupMember() {
  state_->stopped = true;
  state_->wake.notify_all();
}

bool GroupMember::needs_rejoin() const { return state_->needs_rejoin; }
const std::vector<TopicPartitionId>& GroupMember::assignment() const { return state_->assignment; }
int32_t GroupMember::generation() const { return state_->generation; }
const std::string& GroupMember::member_id() const { return state_->member_id; }

Status GroupMember::join(Instant deadline) {
  const std::shared_ptr<State> state = state_;
  state->joining = true;
  struct Joined {  // also when a node kill unwinds the join
    State& state;
    ~Joined() { state.joining = false; }
  } joined{*state};
  Status last;
  for (int attempt = 1; state->env.clock.now() < deadline && !state->stopped; ++attempt) {
    last = state->join_once(deadline);
    if (last.ok()) {
      state->start_heartbeats();
      return last;
    }
    state->env.log.debug("group {}: join: {}", state->config.group_id, last.to_string());
    if (rejoin_at_once(last)) continue;
    if (!worth_retrying(last)) return last;
    state->env.scheduler.sleep_for(std::min(state->core->backoff(attempt), remaining(state->env, deadline)));
  }
  return timed_out(fmt::format("group {}: no generation joined before the deadline{}", state->config.group_id,
                               last.ok() ? "" : " (last: " + last.to_string() + ")"));
}

// ---- State ----

GroupMember::State::State(std::shared_ptr<detail::ClientCore> core_, GroupConfig config_)
    : core(std::move(core_)), env(core->env()), config(std::move(config_)), wake(env.scheduler) {}

MemberIdentity GroupMember::State::identity() const {
  return MemberIdentity{config.group_id, member_id, generation, config.group_instance_id};
}

void GroupMember::State::forget_coordinator_after(const Status& status) {
  const bool moved = status.code() == Code::kInvalidArgument && coordinator_moved(status.protocol_error());
  if (moved || status.code() == Code::kConnectionRefused || outcome_unknown(status)) coordinator = -1;
}

Status GroupMember::State::find_coordinator() {
  SLUICE_ASSIGN_OR_RETURN(
      protocol::FindCoordinatorResponse response,
      core->call_with_retries<protocol::FindCoordinatorResponse>(
          -1, [&](int16_t) { return find_coordinator_request(config.group_id); }, core->config().request_timeout));
  const Coordinator found = coordinator_answer(response);
  if (found.error_code != 0) return broker_error(found.error_code, "find the coordinator of " + config.group_id);
  core->remember_broker(found.broker);
  coordinator = found.broker.node_id;
  return Status();
}

// One JoinGroup and, when it admits the member, one SyncGroup. Ok once a generation and its assignment are held.
Status GroupMember::State::join_once(Instant deadline) {
  if (coordinator < 0) SLUICE_TRY(find_coordinator());
  // The coordinator holds a JoinGroup until every member rejoined, up to the rebalance timeout (and its initial
  // delay): the wait comes on top of the request timeout, as the Java consumer allows.
  const Duration timeout =
      std::min(remaining(env, deadline), config.rebalance_timeout + core->config().request_timeout);
  Result<protocol::JoinGroupResponse> joined = core->call<protocol::JoinGroupResponse>(
      coordinator, [&](int16_t) { return join_group_request(config, member_id, encode_subscription(config.topics)); },
      timeout);
  if (!joined.ok()) {
    forget_coordinator_after(joined.status());
    return joined.status();
  }
  const int16_t error = joined->error_code;
  if (error == errc::kMemberIdRequired) member_id = joined->member_id;  // join again with it
  if (error == errc::kUnknownMemberId) member_id.clear();
  if (error != 0) {
    const Status refused = broker_error(error, "JoinGroup " + config.group_id);
    forget_coordinator_after(refused);
    return refused;
  }
  member_id = joined->member_id;
  generation = joined->generation_id;
  std::map<std::string, Bytes> assignments;
  if (joined->leader == member_id) {
    SLUICE_ASSIGN_OR_RETURN(assignments, assign(joined->members));
  }
  return sync(timeout, assignments);
}

Status GroupMember::State::sync(Duration timeout, const std::map<std::string, Bytes>& assignments) {
  const int32_t sent_generation = generation;
  Result<protocol::SyncGroupResponse> synced = core->call<protocol::SyncGroupResponse>(
      coordinator, [&](int16_t) { return sync_group_request(identity(), assignments); }, timeout);
  if (!synced.ok()) {
    forget_coordinator_after(synced.status());
    return synced.status();
  }
  if (synced->error_code != 0) {
    if (synced->error_code == errc::kUnknownMemberId) member_id.clear();
    const Status refused = broker_error(synced->error_code, "SyncGroup " + config.group_id);
    forget_coordinator_after(refused);
    return refused;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<TopicPartitionId> partitions, decode_assignment(synced->assignment));
  SLUICE_ASSERT(generation == sent_generation);  // join() runs alone: nothing else changes the generation
  assignment = std::move(partitions);
  needs_rejoin = false;
  joined = true;
  env.log.debug("group {}: member {} holds generation {} with {} partitions", config.group_id, member_id, generation,
                assignment.size());
  return Status();
}

// The leader's step: every member's subscription, the topics' partition counts, then Kafka's range assignor.
Result<std::map<std::string, Bytes>> GroupMember::State::assign(
    const std::vector<protocol::JoinGroupResponse::Member>& members) {
  std::map<std::string, std::vector<std::string>> subscriptions;
  std::set<std::string> topics;
  for (const protocol::JoinGroupResponse::Member& member : members) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> subscribed, decode_subscription(member.metadata));
    topics.insert(subscribed.begin(), subscribed.end());
    subscriptions[member.member_id] = std::move(subscribed);
  }
  std::map<std::string, int32_t> partition_counts;
  if (!topics.empty()) {
    SLUICE_ASSIGN_OR_RETURN(ClusterInfo cluster, core->metadata({topics.begin(), topics.end()}, false));
    for (const auto& [name, topic] : cluster.topics) {
      if (topic.error_code == 0) partition_counts[name] = static_cast<int32_t>(topic.partitions.size());
    }
  }
  std::map<std::string, Bytes> assignments;
  for (const auto& [member, partitions] : range_assign(subscriptions, partition_counts)) {
    assignments[member] = encode_assignment(partitions);
  }
  return assignments;
}

}  // namespace sluice::client
