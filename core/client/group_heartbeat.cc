// GroupMember: the heartbeat fiber, commits, committed-offset lookups and leaving (group_member_state.h).
#include <fmt/format.h>

#include "core/client/errors.h"
#include "core/client/group_member_state.h"

namespace sluice::client {

void GroupMember::State::start_heartbeats() {
  if (heartbeat_running) return;
  heartbeat_running = true;
  env.scheduler.spawn("group.heartbeat " + config.group_id, [self = shared_from_this()] { self->run_heartbeats(); });
}

void GroupMember::State::run_heartbeats() {
  while (!stopped && joined) {
    wake.wait_until(env.clock.now() + config.heartbeat_interval);
    if (stopped || !joined) break;
    if (joining) continue;  // join() speaks for the member meanwhile
    heartbeat_once();
  }
  heartbeat_running = false;
}

void GroupMember::State::heartbeat_once() {
  if (coordinator < 0 && !find_coordinator().ok()) return;  // tried again at the next beat
  const int32_t sent_generation = generation;
  Result<protocol::HeartbeatResponse> answer = core->call<protocol::HeartbeatResponse>(
      coordinator, [&](int16_t) { return heartbeat_request(identity()); }, core->config().request_timeout);
  if (!answer.ok()) {
    env.log.debug("group {}: heartbeat: {}", config.group_id, answer.status().to_string());
    forget_coordinator_after(answer.status());
    return;
  }
  note_group_error(answer->error_code, sent_generation);
}

void GroupMember::State::note_group_error(int16_t error, int32_t sent_generation) {
  if (error == 0 || joining || sent_generation != generation) return;  // none, or about an older generation
  if (coordinator_moved(error)) coordinator = -1;
  if (!requires_rejoin(error)) return;
  needs_rejoin = true;
  // Only a rebalance in progress leaves the generation standing: the heartbeats keep the session meanwhile.
  if (error != errc::kRebalanceInProgress) joined = false;
  if (error == errc::kUnknownMemberId) member_id.clear();
  env.log.debug("group {}: member {} must rejoin: {}", config.group_id, member_id, error_label(error));
}

Status GroupMember::commit(const std::map<TopicPartitionId, int64_t>& offsets) {
  const std::shared_ptr<State> state = state_;
  detail::ClientCore& core = *state->core;
  // Committing the same offsets twice is committing them once: safe to repeat after a lost answer. But an attempt
  // whose fate is unknown (no answer, or an answer Kafka's coordinator gives when its append's fate is unknown) may
  // have been written, so a later attempt's refusal does not settle the commit: it ends unknown, not failed.
  bool may_have_landed = false;
  const Status result = core.retry([&]() -> Status {
    if (state->coordinator < 0) SLUICE_TRY(state->find_coordinator());
    const MemberIdentity member = state->identity();
    Result<protocol::OffsetCommitResponse> answer = core.call<protocol::OffsetCommitResponse>(
        state->coordinator, [&](int16_t) { return offset_commit_request(member, offsets); },
        core.config().request_timeout);
    if (!answer.ok()) {
      if (outcome_unknown(answer.status())) may_have_landed = true;
      state->forget_coordinator_after(answer.status());
      return answer.status();
    }
    const int16_t error = offset_commit_error(*answer);
    if (error == 0) return Status();
    if (error == errc::kNotCoordinator || error == errc::kCoordinatorNotAvailable || error == errc::kRequestTimedOut) {
      may_have_landed = true;
    }
    state->note_group_error(error, member.generation);
    const Status refused = broker_error(error, "OffsetCommit " + member.group_id);
    state->forget_coordinator_after(refused);
    return refused;
  });
  if (result.ok() || !may_have_landed || outcome_unknown(result)) return result;
  return Status(Code::kTimedOut, fmt::format("OffsetCommit {}: outcome unknown (an earlier attempt may have been "
                                             "written); the last attempt: {}",
                                             state->config.group_id, result.to_string()));
}

Result<std::map<TopicPartitionId, int64_t>> GroupMember::committed(const std::vector<TopicPartitionId>& partitions) {
  const std::shared_ptr<State> state = state_;
  detail::ClientCore& core = *state->core;
  return core.retry([&]() -> Result<std::map<TopicPartitionId, int64_t>> {
    if (state->coordinator < 0) SLUICE_TRY(state->find_coordinator());
    Result<protocol::OffsetFetchResponse> answer = core.call<protocol::OffsetFetchResponse>(
        state->coordinator,
        [&](int16_t version) { return offset_fetch_request(state->config.group_id, partitions, version); },
        core.config().request_timeout);
    if (!answer.ok()) {
      state->forget_coordinator_after(answer.status());
      return answer.status();
    }
    Result<std::map<TopicPartitionId, int64_t>> offsets = offset_fetch_answer(*answer);
    if (!offsets.ok()) state->forget_coordinator_after(offsets.status());
    if (!offsets.ok()) return offsets;
    for (const TopicPartitionId& tp : partitions) offsets->try_emplace(tp, -1);  // asked, nothing committed
    return offsets;
  });
}

Status GroupMember::leave() {
  const std::shared_ptr<State> state = state_;
  const MemberIdentity member = state->identity();
  // Whatever the answer, this member is out: its heartbeats stop and a later join starts afresh.
  state->joined = false;
  state->needs_rejoin = false;
  state->generation = -1;
  state->member_id.clear();
  state->assignment.clear();
  state->wake.notify_all();
  if (member.member_id.empty()) return Status();  // never admitted: nothing to leave
  if (state->coordinator < 0) SLUICE_TRY(state->find_coordinator());
  SLUICE_ASSIGN_OR_RETURN(protocol::LeaveGroupResponse answer,
                          state->core->call<protocol::LeaveGroupResponse>(
                              state->coordinator, [&](int16_t) { return leave_group_request(member); },
                              state->core->config().request_timeout));
  int16_t error = answer.error_code;
  for (const protocol::LeaveGroupResponse::Member& left : answer.members) {
    if (error == 0) error = left.error_code;
  }
  return error == 0 ? Status() : broker_error(error, "LeaveGroup " + member.group_id);
}

}  // namespace sluice::client
