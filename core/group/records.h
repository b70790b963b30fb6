// The records of `__consumer_offsets`, in Kafka's layouts so that Kafka's tools can read the topic: every key
// starts with an int16 key version, every value with an int16 value version (apache/kafka 3.9
// group-coordinator/src/main/resources/common/message/{OffsetCommit,GroupMetadata}{Key,Value}.json).
//   key v0/v1: OffsetCommitKey (group, topic, partition)     value: OffsetCommitValue v0-4 (we write v3, or v1
//                                                            when an explicit expire time was given, as Kafka does)
//   key v2:    GroupMetadataKey (group)                      value: GroupMetadataValue v0-4 (we write v3)
// A null value is a tombstone. Versions 4 of the values are flexible; we read them and never write them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"

namespace sluice::group {

inline constexpr std::string_view kOffsetsTopic = "__consumer_offsets";

struct OffsetRecord {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  // Absent for a tombstone.
  struct Value {
    int64_t offset = -1;
    int32_t leader_epoch = -1;
    std::string metadata;
    int64_t commit_timestamp_ms = -1;
    std::optional<int64_t> expire_timestamp_ms;  // only the v1 layout carries it
  };
  std::optional<Value> value;
};

struct GroupMemberRecord {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = -1;
  int32_t session_timeout_ms = 0;
  Bytes subscription;
  Bytes assignment;
};

struct GroupRecord {
  std::string group;
  struct Value {
    std::string protocol_type;
    int32_t generation = 0;
    std::optional<std::string> protocol;
    std::optional<std::string> leader;
    int64_t current_state_timestamp_ms = -1;
    std::vector<GroupMemberRecord> members;
  };
  std::optional<Value> value;  // absent for a tombstone
};

using CoordinatorRecord = std::variant<OffsetRecord, GroupRecord>;

struct EncodedRecord {
  Bytes key;
  std::optional<Bytes> value;
};

Result<EncodedRecord> encode_record(const OffsetRecord& record);
Result<EncodedRecord> encode_record(const GroupRecord& record);
// nullopt for a key version this coordinator does not know (Kafka skips those too); kCorruption for bytes that do
// not parse.
Result<std::optional<CoordinatorRecord>> decode_record(ByteView key, const std::optional<ByteView>& value);

}  // namespace sluice::group
