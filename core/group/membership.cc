// GroupCoordinator: SyncGroup, Heartbeat and LeaveGroup.
#include "core/group/coordinator.h"
#include "core/group/coordinator_internal.h"

namespace sluice::group {

using internal::sync_error;
using internal::Unpark;

// ---- SyncGroup ----

SyncResult GroupCoordinator::sync(const SyncRequest& request) {
  if (std::optional<ErrorCode> error = check_status(request.group_id, false)) {
    // The state of a rebalance in progress was lost with the load: the member must join again.
    return sync_error(*error == ErrorCode::kCoordinatorLoadInProgress ? ErrorCode::kRebalanceInProgress : *error);
  }
  const GroupPtr group = lookup(request.group_id);
  if (group == nullptr) return sync_error(ErrorCode::kUnknownMemberId);
  if (group->is(GroupState::kDead)) return sync_error(ErrorCode::kCoordinatorNotAvailable);
  if (std::optional<ErrorCode> error = validate_member(*group, request.member_id, request.group_instance_id)) {
    return sync_error(*error);
  }
  if (request.generation_id != group->generation) return sync_error(ErrorCode::kIllegalGeneration);
  if ((request.protocol_type.has_value() && request.protocol_type != group->protocol_type) ||
      (request.protocol_name.has_value() && request.protocol_name != group->protocol)) {
    return sync_error(ErrorCode::kInconsistentGroupProtocol);
  }
  Member& member = group->members.at(request.member_id);
  switch (group->state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return sync_error(ErrorCode::kUnknownMemberId);
    case GroupState::kPreparingRebalance:
      return sync_error(ErrorCode::kRebalanceInProgress);
    case GroupState::kStable:
      group->pending_sync.erase(request.member_id);
      schedule_session(group, member, member.session_timeout_ms);
      return SyncResult{ErrorCode::kNone, group->protocol_type, group->protocol, member.assignment};
    case GroupState::kCompletingRebalance:
      break;
  }
  Parked<SyncResult> parked(env_.scheduler);
  Unpark<SyncResult> unpark{group, parked, &Member::sync};
  answer_sync(member, sync_error(ErrorCode::kRebalanceInProgress));  // a duplicate SyncGroup replaces the first
  member.sync = &parked;
  group->pending_sync.erase(request.member_id);
  if (group->pending_sync.empty()) cancel_timer(group->sync_timer);
  if (group->leader == request.member_id) {
    std::map<std::string, Bytes> assignment;
    for (const auto& [id, bytes] : request.assignments) {
      if (group->has(id)) assignment[id] = bytes;
    }
    for (const auto& [id, m] : group->members) assignment.try_emplace(id);  // missing members get nothing
    complete_sync(group, group->generation, std::move(assignment));
  }
  while (!parked.result.has_value()) parked.done.wait();
  return *parked.result;
}

void GroupCoordinator::complete_sync(const GroupPtr& group, int32_t generation,
                                     std::map<std::string, Bytes> assignment) {
  const Status stored = store_group(group, &assignment);
  // Another member may have joined meanwhile: only the same generation, still completing, takes the assignment.
  if (!group->is(GroupState::kCompletingRebalance) || group->generation != generation) return;
  if (!stored.ok()) {
    env_.log.warn("group {}: storing the assignment failed: {}", group->id, stored.to_string());
    for (auto& [id, member] : group->members) member.assignment.clear();
    propagate_assignment(*group, ErrorCode::kCoordinatorNotAvailable);
    maybe_prepare_rebalance(group);
    return;
  }
  for (auto& [id, member] : group->members) member.assignment = assignment[id];
  propagate_assignment(*group, ErrorCode::kNone);
  transition(*group, GroupState::kStable);
}

void GroupCoordinator::propagate_assignment(Group& group, ErrorCode error) {
  const GroupPtr self = lookup(group.id);
  for (auto& [id, member] : group.members) {
    if (member.sync == nullptr) continue;
    SyncResult result;
    result.error = error;
    if (error == ErrorCode::kNone) {
      result.protocol_type = group.protocol_type;
      result.protocol_name = group.protocol;
      result.assignment = member.assignment;
    }
    answer_sync(member, std::move(result));
    if (self != nullptr) schedule_session(self, member, member.session_timeout_ms);
  }
}

// ---- Heartbeat and LeaveGroup ----

ErrorCode GroupCoordinator::heartbeat(const HeartbeatRequest& request) {
  if (std::optional<ErrorCode> error = check_status(request.group_id, false)) {
    return *error == ErrorCode::kCoordinatorLoadInProgress ? ErrorCode::kNone : *error;  // Kafka answers blindly
  }
  const GroupPtr group = lookup(request.group_id);
  if (group == nullptr) return ErrorCode::kUnknownMemberId;
  if (group->is(GroupState::kDead)) return ErrorCode::kCoordinatorNotAvailable;
  if (std::optional<ErrorCode> error = validate_member(*group, request.member_id, request.group_instance_id)) {
    return *error;
  }
  if (request.generation_id != group->generation) return ErrorCode::kIllegalGeneration;
  Member& member = group->members.at(request.member_id);
  switch (group->state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return ErrorCode::kUnknownMemberId;
    case GroupState::kPreparingRebalance:
      schedule_session(group, member, member.session_timeout_ms);
      return ErrorCode::kRebalanceInProgress;
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      schedule_session(group, member, member.session_timeout_ms);
      return ErrorCode::kNone;
  }
  return ErrorCode::kNone;
}

LeaveResult GroupCoordinator::leave(const std::string& group_id, const std::vector<LeavingMember>& members) {
  LeaveResult result;
  if (std::optional<ErrorCode> error = check_status(group_id, false)) {
    result.error = *error;
    return result;
  }
  const GroupPtr group = lookup(group_id);
  if (group != nullptr && group->is(GroupState::kDead)) {
    result.error = ErrorCode::kCoordinatorNotAvailable;
    return result;
  }
  for (const LeavingMember& leaving : members) {
    if (group == nullptr) {
      result.members.push_back(ErrorCode::kUnknownMemberId);
      continue;
    }
    std::string member_id = leaving.member_id;
    if (member_id.empty() && leaving.group_instance_id.has_value()) {  // an administrative removal by instance id
      member_id = group->static_member(*leaving.group_instance_id).value_or("");
    }
    if (group->pending_members.count(member_id) != 0) {
      remove_pending_member(group, member_id);
      result.members.push_back(ErrorCode::kNone);
      continue;
    }
    const std::optional<ErrorCode> error =
        member_id.empty() ? ErrorCode::kUnknownMemberId : validate_member(*group, member_id, leaving.group_instance_id);
    if (!error.has_value()) {
      env_.log.info("group {}: member {} left", group_id, member_id);
      remove_member(group, member_id);
    }
    result.members.push_back(error.value_or(ErrorCode::kNone));
  }
  return result;
}

}  // namespace sluice::group
