// JoinGroup (11), SyncGroup (14), Heartbeat (12), LeaveGroup (13): each version translated to and from the group
// coordinator's plain requests (core/group). JoinGroup and SyncGroup park this connection's fiber until the
// rebalance step completes, as Kafka's purgatory holds the response. The reasons of JoinGroup v8+ and LeaveGroup
// v5+ are decoded and dropped: Kafka only writes them into its log lines.
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/sync_group.h"

namespace sluice::kafka {
namespace {

using protocol::HeartbeatRequest;
using protocol::HeartbeatResponse;
using protocol::JoinGroupRequest;
using protocol::JoinGroupResponse;
using protocol::LeaveGroupRequest;
using protocol::LeaveGroupResponse;
using protocol::SyncGroupRequest;
using protocol::SyncGroupResponse;

Result<JoinGroupResponse> join_group(RequestContext& ctx, const JoinGroupRequest& request) {
  group::JoinRequest join;
  join.group_id = request.group_id;
  join.member_id = request.member_id;
  join.group_instance_id = request.group_instance_id;
  join.client_id = ctx.header.client_id.value_or("");
  join.client_host = "/" + ctx.peer.host;  // Kafka reports the InetAddress: "/10.0.0.1"
  join.session_timeout_ms = request.session_timeout_ms;
  join.rebalance_timeout_ms = ctx.version() >= 1 ? request.rebalance_timeout_ms : request.session_timeout_ms;
  join.protocol_type = request.protocol_type;
  for (const JoinGroupRequest::Protocol& p : request.protocols) join.protocols.push_back({p.name, p.metadata});
  join.require_known_member_id = ctx.version() >= 4;
  join.supports_skip_assignment = ctx.version() >= 9;
  const group::JoinResult result = ctx.broker.groups().join(join);
  JoinGroupResponse response;
  response.error_code = wire_code(result.error);
  response.generation_id = result.generation_id;
  response.protocol_type = result.protocol_type;
  // No protocol is "" before v7 and null from v7 (Kafka's JoinGroupResponse normalizes both ways).
  response.protocol_name = result.protocol_name.value_or("");
  if (ctx.version() >= 7 && response.protocol_name->empty()) response.protocol_name.reset();
  response.leader = result.leader_id;
  response.skip_assignment = result.skip_assignment;
  response.member_id = result.member_id;
  for (const group::JoinMember& m : result.members) {
    response.members.push_back({m.member_id, m.group_instance_id, m.metadata});
  }
  return response;
}

Result<SyncGroupResponse> sync_group(RequestContext& ctx, const SyncGroupRequest& request) {
  SyncGroupResponse response;
  if (ctx.version() >= 5 && (!request.protocol_type.has_value() || !request.protocol_name.has_value())) {
    // Mandatory from v5 although nullable in the schema: Kafka refuses the request before the coordinator sees it.
    response.error_code = wire_code(ErrorCode::kInconsistentGroupProtocol);
    return response;
  }
  group::SyncRequest sync;
  sync.group_id = request.group_id;
  sync.generation_id = request.generation_id;
  sync.member_id = request.member_id;
  sync.group_instance_id = request.group_instance_id;
  sync.protocol_type = request.protocol_type;
  sync.protocol_name = request.protocol_name;
  for (const SyncGroupRequest::Assignment& a : request.assignments) {
    sync.assignments.emplace_back(a.member_id, a.assignment);
  }
  const group::SyncResult result = ctx.broker.groups().sync(sync);
  response.error_code = wire_code(result.error);
  response.protocol_type = result.protocol_type;
  response.protocol_name = result.protocol_name;
  response.assignment = result.assignment;
  return response;
}

Result<HeartbeatResponse> heartbeat(RequestContext& ctx, const HeartbeatRequest& request) {
  HeartbeatResponse response;
  response.error_code = wire_code(ctx.broker.groups().heartbeat(
      {request.group_id, request.generation_id, request.member_id, request.group_instance_id}));
  return response;
}

Result<LeaveGroupResponse> leave_group(RequestContext& ctx, const LeaveGroupRequest& request) {
  std::vector<group::LeavingMember> leaving;
  if (ctx.version() >= 3) {
    for (const LeaveGroupRequest::Member& m : request.members) leaving.push_back({m.member_id, m.group_instance_id});
  } else {
    leaving.push_back({request.member_id, std::nullopt});
  }
  const group::LeaveResult result = ctx.broker.groups().leave(request.group_id, leaving);
  LeaveGroupResponse response;
  response.error_code = wire_code(result.error);
  if (ctx.version() < 3) {
    // One member, one error: the member's becomes the top-level one (Kafka's LeaveGroupResponse does the same).
    if (result.error == ErrorCode::kNone && !result.members.empty()) response.error_code = wire_code(result.members[0]);
    return response;
  }
  for (size_t i = 0; i < result.members.size(); ++i) {
    response.members.push_back({leaving[i].member_id, leaving[i].group_instance_id, wire_code(result.members[i])});
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_join_group(RequestContext& ctx, ByteView body) { return typed(ctx, body, join_group); }
Result<HandlerOutcome> handle_sync_group(RequestContext& ctx, ByteView body) { return typed(ctx, body, sync_group); }
Result<HandlerOutcome> handle_heartbeat(RequestContext& ctx, ByteView body) { return typed(ctx, body, heartbeat); }
Result<HandlerOutcome> handle_leave_group(RequestContext& ctx, ByteView body) { return typed(ctx, body, leave_group); }

}  // namespace sluice::kafka
