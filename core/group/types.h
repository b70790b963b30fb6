// The coordinator's requests and results: plain C++ structs, not wire types. The handlers in core/kafka translate
// each API version to and from these.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/mutations.h"
#include "core/protocol/error_codes.h"
#include "core/storage/topic_partition.h"

namespace sluice::group {

enum class GroupState : uint8_t { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };

// Kafka's names: "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead".
std::string_view state_name(GroupState state);

struct CoordinatorConfig {
  int32_t initial_rebalance_delay_ms = 3000;                   // group.initial.rebalance.delay.ms
  int32_t min_session_timeout_ms = 6000;                       // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;                    // group.max.session.timeout.ms
  int32_t max_size = INT32_MAX;                                // group.max.size
  int32_t offsets_topic_partitions = 50;                       // offsets.topic.num.partitions
  int16_t offsets_topic_replication_factor = 3;                // offsets.topic.replication.factor (cluster mode)
  int64_t offsets_retention_ms = int64_t{10080} * 60 * 1000;   // offsets.retention.minutes
  int64_t offsets_retention_check_interval_ms = 600000;        // offsets.retention.check.interval.ms
  int32_t offset_metadata_max_bytes = 4096;                    // offset.metadata.max.bytes
  int32_t offsets_topic_segment_bytes = 104857600;             // offsets.topic.segment.bytes
  MutationSet mutations;  // planted bugs (core/base/mutations.h), copied from kafka::BrokerConfig::mutations
};

struct Protocol {
  std::string name;
  Bytes metadata;
  bool operator==(const Protocol&) const = default;
};

struct JoinRequest {
  std::string group_id;
  std::string member_id;  // "" for a new member
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;  // v0 has none: the handler passes the session timeout
  std::string protocol_type;
  std::vector<Protocol> protocols;
  bool require_known_member_id = false;  // JoinGroup v4+: a new member first gets MEMBER_ID_REQUIRED
  bool supports_skip_assignment = false;  // JoinGroup v9+: a returning static leader may be told to skip assigning
};

struct JoinMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  Bytes metadata;
};

struct JoinResult {
  ErrorCode error = ErrorCode::kNone;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader_id;
  std::string member_id;
  std::vector<JoinMember> members;  // the leader's answer only
  bool skip_assignment = false;     // the leader keeps the Stable group's assignment instead of computing one
};

struct SyncRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> protocol_type;  // v5+
  std::optional<std::string> protocol_name;  // v5+
  std::vector<std::pair<std::string, Bytes>> assignments;  // the leader's
};

struct SyncResult {
  ErrorCode error = ErrorCode::kNone;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  Bytes assignment;
};

struct HeartbeatRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

struct LeavingMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

struct LeaveResult {
  ErrorCode error = ErrorCode::kNone;
  std::vector<ErrorCode> members;  // one per leaving member, in order (empty with a top-level error)
};

struct OffsetToCommit {
  storage::TopicPartition tp;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;  // null is stored as ""
  int64_t commit_timestamp_ms = -1;     // -1: now
  std::optional<int64_t> expire_timestamp_ms;
};

struct CommitRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<OffsetToCommit> offsets;
};

struct FetchedOffset {
  storage::TopicPartition tp;
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  ErrorCode error = ErrorCode::kNone;
};

struct FetchResult {
  ErrorCode error = ErrorCode::kNone;
  std::vector<FetchedOffset> partitions;
};

struct OffsetDeleteResult {
  ErrorCode error = ErrorCode::kNone;
  std::vector<ErrorCode> partitions;  // in request order (empty with a group error)
};

// The type of every group this coordinator keeps (Kafka's GroupType.CLASSIC): it runs no KIP-848 groups.
inline constexpr std::string_view kClassicGroupType = "classic";

struct GroupListing {
  std::string group_id;
  std::string protocol_type;
  std::string state;
  std::string type;
};

struct ListResult {
  ErrorCode error = ErrorCode::kNone;
  std::vector<GroupListing> groups;
};

struct MemberDescription {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  Bytes metadata;    // of the group's protocol; empty unless Stable
  Bytes assignment;  // empty unless Stable
};

struct GroupDescription {
  ErrorCode error = ErrorCode::kNone;
  std::string group_id;
  std::string state;
  std::string protocol_type;
  std::string protocol;
  std::vector<MemberDescription> members;
};

}  // namespace sluice::group
