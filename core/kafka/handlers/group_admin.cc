// ListGroups (16), DescribeGroups (15), DeleteGroups (42) through the group coordinator (core/group).
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/messages/delete_groups.h"
#include "core/protocol/messages/describe_groups.h"
#include "core/protocol/messages/list_groups.h"

namespace sluice::kafka {
namespace {

using protocol::DeleteGroupsRequest;
using protocol::DeleteGroupsResponse;
using protocol::DescribeGroupsRequest;
using protocol::DescribeGroupsResponse;
using protocol::ListGroupsRequest;
using protocol::ListGroupsResponse;

Result<ListGroupsResponse> list_groups(RequestContext& ctx, const ListGroupsRequest& request) {
  const group::ListResult result = ctx.broker.groups().list(request.states_filter, request.types_filter);
  ListGroupsResponse response;
  response.error_code = wire_code(result.error);
  for (const group::GroupListing& g : result.groups) {
    response.groups.push_back({g.group_id, g.protocol_type, g.state, g.type});
  }
  return response;
}

Result<DescribeGroupsResponse> describe_groups(RequestContext& ctx, const DescribeGroupsRequest& request) {
  DescribeGroupsResponse response;
  for (const std::string& id : request.groups) {
    const group::GroupDescription d = ctx.broker.groups().describe(id);
    DescribeGroupsResponse::Group& out = response.groups.emplace_back();
    out.error_code = wire_code(d.error);
    out.group_id = id;
    out.group_state = d.state;
    out.protocol_type = d.protocol_type;
    out.protocol_data = d.protocol;
    for (const group::MemberDescription& m : d.members) {
      out.members.push_back({m.member_id, m.group_instance_id, m.client_id, m.client_host, m.metadata, m.assignment});
    }
  }
  return response;
}

Result<DeleteGroupsResponse> delete_groups(RequestContext& ctx, const DeleteGroupsRequest& request) {
  const std::vector<ErrorCode> errors = ctx.broker.groups().delete_groups(request.groups_names);
  DeleteGroupsResponse response;
  for (size_t i = 0; i < errors.size(); ++i) {
    response.results.push_back({request.groups_names[i], wire_code(errors[i])});
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_list_groups(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, list_groups);
}
Result<HandlerOutcome> handle_describe_groups(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, describe_groups);
}
Result<HandlerOutcome> handle_delete_groups(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, delete_groups);
}

}  // namespace sluice::kafka
