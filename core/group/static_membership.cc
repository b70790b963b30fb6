// GroupCoordinator: who may join. Static members (group.instance.id, KIP-345): one that restarts joins without its
// member id and takes over the member its instance id names, under a new member id, keeping that member's
// assignment; the old id is fenced. In a Stable group whose protocol does not change that costs no rebalance.
// And group.max.size.
#include "core/base/assert.h"
#include "core/group/coordinator.h"
#include "core/group/coordinator_internal.h"

namespace sluice::group {

using internal::join_error;
using internal::sync_error;

void GroupCoordinator::join_static_member(const GroupPtr& group, const JoinRequest& request,
                                          const std::string& new_id, Parked<JoinResult>& parked) {
  SLUICE_ASSERT(request.group_instance_id.has_value());
  const std::optional<std::string> old_id = group->static_member(*request.group_instance_id);
  if (!old_id.has_value()) {
    add_member_and_rebalance(group, request, new_id, parked);
    return;
  }
  env_.log.info("group {}: static member {} rejoined as {} in place of {}", group->id, *request.group_instance_id,
                new_id, *old_id);
  replace_static_member(group, *old_id, new_id, request, parked);
}

void GroupCoordinator::replace_static_member(const GroupPtr& group, const std::string& old_id,
                                             const std::string& new_id, const JoinRequest& request,
                                             Parked<JoinResult>& parked) {
  const std::optional<std::string> old_leader = group->leader;
  Member& member = rename_member(group, old_id, new_id);
  const std::vector<Protocol> old_protocols = member.protocols;
  const int32_t old_session_timeout_ms = member.session_timeout_ms;
  const int32_t old_rebalance_timeout_ms = member.rebalance_timeout_ms;
  member.protocols = request.protocols;
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = request.rebalance_timeout_ms;
  schedule_session(group, member, member.session_timeout_ms);
  switch (group->state) {
    case GroupState::kStable: {
      if (group->protocol != group->select_protocol()) {
        member.join = &parked;
        maybe_prepare_rebalance(group);
        return;
      }
      // The same generation goes on: record the new member id, then hand it the generation as it stands.
      const Status stored = store_group(group, nullptr);
      const std::optional<std::string> holder = group->static_member(*request.group_instance_id);
      if (!stored.ok()) {
        env_.log.warn("group {}: storing static member {} failed: {}", group->id, new_id, stored.to_string());
        if (holder == new_id) {  // nobody took the instance id meanwhile: the old member comes back as it was
          Member& restored = rename_member(group, new_id, old_id);
          restored.protocols = old_protocols;
          restored.session_timeout_ms = old_session_timeout_ms;
          restored.rebalance_timeout_ms = old_rebalance_timeout_ms;
          schedule_session(group, restored, restored.session_timeout_ms);
        }
        parked.result = join_error(ErrorCode::kCoordinatorNotAvailable, "");
        return;
      }
      if (holder != new_id) {  // fenced while the write was in flight
        parked.result = join_error(ErrorCode::kFencedInstanceId, new_id);
        return;
      }
      const bool leader = group->leader == new_id;
      if (request.supports_skip_assignment) {
        // JoinGroup v9+: the leader learns it leads (and the members, to watch their metadata) but keeps the
        // assignment the Stable group has; SyncGroup hands it its own part.
        JoinResult answer = current_generation_answer(*group, new_id, leader);
        answer.skip_assignment = leader;
        parked.result = std::move(answer);
        return;
      }
      JoinResult answer = current_generation_answer(*group, new_id, false);
      // Before v9 a returning leader must not assign for a Stable group: it is told the old leader id, so it acts
      // as a follower and SyncGroup hands it its assignment.
      answer.leader_id = old_leader.value_or("");
      parked.result = std::move(answer);
      return;
    }
    case GroupState::kCompletingRebalance:
      // The leader may already be assigning for the old id: run the rebalance again.
      member.join = &parked;
      prepare_rebalance(group);
      return;
    case GroupState::kPreparingRebalance:
      member.join = &parked;  // answered when the join completes
      return;
    case GroupState::kEmpty:  // a group holding a member is not Empty, and join_new_member turns Dead away
    case GroupState::kDead:
      SLUICE_UNREACHABLE();
  }
}

bool GroupCoordinator::accepts_joining_member(const Group& group, const JoinRequest& request) const {
  // Unlike Kafka, a restarted static member is never turned away: it takes its own place and adds nobody.
  if (request.group_instance_id.has_value() && group.static_member(*request.group_instance_id).has_value()) {
    return true;
  }
  const std::string& member_id = request.member_id;
  const auto max_size = static_cast<size_t>(config_.max_size);
  switch (group.state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return true;
    case GroupState::kPreparingRebalance: {
      // Counting those already rejoined (not the members) turns away the last to rejoin of a group over the limit.
      auto it = group.members.find(member_id);
      return (it != group.members.end() && it->second.join != nullptr) || group.awaiting_join() < max_size;
    }
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      return group.has(member_id) || group.members.size() < max_size;
  }
  return false;
}

Member& GroupCoordinator::rename_member(const GroupPtr& group, const std::string& old_id, const std::string& new_id) {
  auto node = group->members.extract(old_id);
  SLUICE_ASSERT(!node.empty());
  Member& moving = node.mapped();
  answer_join(moving, join_error(ErrorCode::kFencedInstanceId, old_id));
  answer_sync(moving, sync_error(ErrorCode::kFencedInstanceId));
  cancel_timer(moving.session_timer);
  moving.id = new_id;
  node.key() = new_id;
  auto inserted = group->members.insert(std::move(node));
  SLUICE_ASSERT(inserted.inserted);
  if (group->leader == old_id) group->leader = new_id;
  if (group->pending_sync.erase(old_id) != 0) group->pending_sync.insert(new_id);
  return inserted.position->second;
}

}  // namespace sluice::group
