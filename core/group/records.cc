#include "core/group/records.h"

#include <fmt/format.h>

#include "core/protocol/serde.h"
#include "core/protocol/wire.h"

namespace sluice::group {
namespace {

// The wire descriptions, field for field the JSON schemas (versions as there).
struct OffsetKeyWire {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  template <class Io>
  void serde(Io& io) {
    io.field("group", group);
    io.field("topic", topic);
    io.field("partition", partition);
  }
};

struct OffsetValueWire {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp = -1;
  int64_t expire_timestamp = -1;
  template <class Io>
  void serde(Io& io) {
    io.field("offset", offset);
    io.field("leaderEpoch", leader_epoch, {.since = 3});
    io.field("metadata", metadata);
    io.field("commitTimestamp", commit_timestamp);
    io.field("expireTimestamp", expire_timestamp, {.since = 1, .until = 1});
  }
};

struct GroupKeyWire {
  std::string group;
  template <class Io>
  void serde(Io& io) {
    io.field("group", group);
  }
};

struct MemberWire {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout = -1;
  int32_t session_timeout = 0;
  Bytes subscription;
  Bytes assignment;
  template <class Io>
  void serde(Io& io) {
    io.field("memberId", member_id);
    io.field("groupInstanceId", group_instance_id, {.since = 3, .nullable_from = 3});
    io.field("clientId", client_id);
    io.field("clientHost", client_host);
    io.field("rebalanceTimeout", rebalance_timeout, {.since = 1});
    io.field("sessionTimeout", session_timeout);
    io.field("subscription", subscription);
    io.field("assignment", assignment);
  }
};

struct GroupValueWire {
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  int64_t current_state_timestamp = -1;
  std::vector<MemberWire> members;
  template <class Io>
  void serde(Io& io) {
    io.field("protocolType", protocol_type);
    io.field("generation", generation);
    io.field("protocol", protocol, {.nullable_from = 0});
    io.field("leader", leader, {.nullable_from = 0});
    io.field("currentStateTimestamp", current_state_timestamp, {.since = 2});
    io.field("members", members);
  }
};

constexpr int16_t kOffsetKeyVersion = 1;
constexpr int16_t kGroupKeyVersion = 2;
constexpr int16_t kGroupValueVersion = 3;
constexpr int16_t kMaxValueVersion = 4;  // the first flexible one

template <typename T>
Result<Bytes> encode_versioned(const T& wire, int16_t version) {
  Bytes out;
  protocol::Writer(&out).put_int16(version);
  SLUICE_TRY(protocol::encode(wire, version, version >= kMaxValueVersion, &out));
  return out;
}

// The int16 version prefix, then the body at that version.
template <typename T>
Result<int16_t> decode_versioned(ByteView bytes, T* wire, std::string_view what) {
  protocol::Reader reader(bytes);
  const int16_t version = reader.read_int16(what);
  SLUICE_TRY(reader.status());
  if (version < 0 || version > kMaxValueVersion) {
    return corruption(fmt::format("{} has unknown version {}", what, version));
  }
  SLUICE_TRY(protocol::decode(bytes.subspan(2), version, version >= kMaxValueVersion, wire));
  return version;
}

Result<CoordinatorRecord> decode_offset(ByteView key, const std::optional<ByteView>& value) {
  OffsetKeyWire k;
  SLUICE_TRY(protocol::decode(key.subspan(2), 0, false, &k));
  OffsetRecord record{k.group, k.topic, k.partition, std::nullopt};
  if (value.has_value()) {
    OffsetValueWire v;
    SLUICE_ASSIGN_OR_RETURN(int16_t version, decode_versioned(*value, &v, "offset commit value"));
    record.value = OffsetRecord::Value{v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, std::nullopt};
    if (version == 1 && v.expire_timestamp >= 0) record.value->expire_timestamp_ms = v.expire_timestamp;
  }
  return CoordinatorRecord(std::move(record));
}

Result<CoordinatorRecord> decode_group(ByteView key, const std::optional<ByteView>& value) {
  GroupKeyWire k;
  SLUICE_TRY(protocol::decode(key.subspan(2), 0, false, &k));
  GroupRecord record{k.group, std::nullopt};
  if (value.has_value()) {
    GroupValueWire v;
    SLUICE_TRY(decode_versioned(*value, &v, "group metadata value").status());
    GroupRecord::Value out{v.protocol_type, v.generation, v.protocol, v.leader, v.current_state_timestamp, {}};
    for (MemberWire& m : v.members) {
      out.members.push_back(GroupMemberRecord{m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                              m.rebalance_timeout, m.session_timeout, std::move(m.subscription),
                                              std::move(m.assignment)});
    }
    record.value = std::move(out);
  }
  return CoordinatorRecord(std::move(record));
}

}  // namespace

Result<EncodedRecord> encode_record(const OffsetRecord& record) {
  EncodedRecord out;
  const OffsetKeyWire key{record.group, record.topic, record.partition};
  SLUICE_ASSIGN_OR_RETURN(out.key, encode_versioned(key, kOffsetKeyVersion));
  if (!record.value.has_value()) return out;
  const OffsetRecord::Value& v = *record.value;
  OffsetValueWire wire{v.offset, v.leader_epoch, v.metadata, v.commit_timestamp_ms,
                       v.expire_timestamp_ms.value_or(-1)};
  SLUICE_ASSIGN_OR_RETURN(out.value, encode_versioned(wire, v.expire_timestamp_ms.has_value() ? 1 : 3));
  return out;
}

Result<EncodedRecord> encode_record(const GroupRecord& record) {
  EncodedRecord out;
  SLUICE_ASSIGN_OR_RETURN(out.key, encode_versioned(GroupKeyWire{record.group}, kGroupKeyVersion));
  if (!record.value.has_value()) return out;
  const GroupRecord::Value& v = *record.value;
  GroupValueWire wire{v.protocol_type, v.generation, v.protocol, v.leader, v.current_state_timestamp_ms, {}};
  for (const GroupMemberRecord& m : v.members) {
    wire.members.push_back(MemberWire{m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                      m.rebalance_timeout_ms, m.session_timeout_ms, m.subscription, m.assignment});
  }
  SLUICE_ASSIGN_OR_RETURN(out.value, encode_versioned(wire, kGroupValueVersion));
  return out;
}

Result<std::optional<CoordinatorRecord>> decode_record(ByteView key, const std::optional<ByteView>& value) {
  protocol::Reader reader(key);
  const int16_t version = reader.read_int16("record key version");
  SLUICE_TRY(reader.status());
  if (version == 0 || version == 1) {
    SLUICE_ASSIGN_OR_RETURN(CoordinatorRecord record, decode_offset(key, value));
    return std::optional<CoordinatorRecord>(std::move(record));
  }
  if (version == kGroupKeyVersion) {
    SLUICE_ASSIGN_OR_RETURN(CoordinatorRecord record, decode_group(key, value));
    return std::optional<CoordinatorRecord>(std::move(record));
  }
  return std::optional<CoordinatorRecord>();
}

}  // namespace sluice::group
