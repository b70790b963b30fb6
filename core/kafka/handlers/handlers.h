// One handler per API key; each lives in handlers/<api>.cc and is listed in dispatch.cc.
#pragma once

#include "core/kafka/handler.h"

namespace sluice::kafka {

Result<HandlerOutcome> handle_api_versions(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_metadata(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_find_coordinator(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_fetch(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_list_offsets(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_offset_for_leader_epoch(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_produce(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_init_producer_id(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_create_topics(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_delete_topics(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_delete_records(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_describe_configs(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_alter_configs(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_create_partitions(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_incremental_alter_configs(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_describe_cluster(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_describe_quorum(RequestContext& ctx, ByteView body);
// Consumer groups (group_membership.cc, group_offsets.cc, group_admin.cc).
Result<HandlerOutcome> handle_join_group(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_sync_group(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_heartbeat(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_leave_group(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_offset_commit(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_offset_fetch(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_offset_delete(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_list_groups(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_describe_groups(RequestContext& ctx, ByteView body);
Result<HandlerOutcome> handle_delete_groups(RequestContext& ctx, ByteView body);

}  // namespace sluice::kafka
