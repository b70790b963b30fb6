#include "core/kafka/dispatch.h"

#include <algorithm>
#include <array>

#include "core/kafka/handlers/handlers.h"

namespace sluice::kafka {
namespace {

using protocol::ApiKey;

// Ordered by key.
constexpr std::array kHandlers = {
    HandlerEntry{ApiKey::kProduce, handle_produce},
    HandlerEntry{ApiKey::kFetch, handle_fetch},
    HandlerEntry{ApiKey::kListOffsets, handle_list_offsets},
    HandlerEntry{ApiKey::kMetadata, handle_metadata},
    HandlerEntry{ApiKey::kOffsetCommit, handle_offset_commit},
    HandlerEntry{ApiKey::kOffsetFetch, handle_offset_fetch},
    HandlerEntry{ApiKey::kFindCoordinator, handle_find_coordinator},
    HandlerEntry{ApiKey::kJoinGroup, handle_join_group},
    HandlerEntry{ApiKey::kHeartbeat, handle_heartbeat},
    HandlerEntry{ApiKey::kLeaveGroup, handle_leave_group},
    HandlerEntry{ApiKey::kSyncGroup, handle_sync_group},
    HandlerEntry{ApiKey::kDescribeGroups, handle_describe_groups},
    HandlerEntry{ApiKey::kListGroups, handle_list_groups},
    HandlerEntry{ApiKey::kApiVersions, handle_api_versions},
    HandlerEntry{ApiKey::kCreateTopics, handle_create_topics},
    HandlerEntry{ApiKey::kDeleteTopics, handle_delete_topics},
    HandlerEntry{ApiKey::kDeleteRecords, handle_delete_records},
    HandlerEntry{ApiKey::kInitProducerId, handle_init_producer_id},
    HandlerEntry{ApiKey::kOffsetForLeaderEpoch, handle_offset_for_leader_epoch},
    HandlerEntry{ApiKey::kDescribeConfigs, handle_describe_configs},
    HandlerEntry{ApiKey::kAlterConfigs, handle_alter_configs},
    HandlerEntry{ApiKey::kCreatePartitions, handle_create_partitions},
    HandlerEntry{ApiKey::kDeleteGroups, handle_delete_groups},
    HandlerEntry{ApiKey::kIncrementalAlterConfigs, handle_incremental_alter_configs},
    HandlerEntry{ApiKey::kOffsetDelete, handle_offset_delete},
    HandlerEntry{ApiKey::kDescribeQuorum, handle_describe_quorum},
    HandlerEntry{ApiKey::kDescribeCluster, handle_describe_cluster},
};

}  // namespace

std::span<const HandlerEntry> handler_table() { return kHandlers; }

const HandlerEntry* find_handler(int16_t key) {
  auto it = std::find_if(kHandlers.begin(), kHandlers.end(),
                         [key](const HandlerEntry& e) { return static_cast<int16_t>(e.key) == key; });
  return it == kHandlers.end() ? nullptr : &*it;
}

}  // namespace sluice::kafka
