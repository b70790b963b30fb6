// JoinGroup (key 11), v0-9; v6+ flexible. Schema: apache/kafka 3.9 JoinGroupRequest.json /
// JoinGroupResponse.json. v0 has no rebalance timeout (the session timeout stands in); v4+ answers a join without a
// member id with MEMBER_ID_REQUIRED and a fresh id; v5 adds static membership (GroupInstanceId); v7 answers the
// protocol type, and the protocol name becomes nullable; v8 adds a reason; v9 lets a returning static leader skip
// the assignment (SkipAssignment). Protocol metadata is opaque to the broker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct JoinGroupRequest {
  static constexpr ApiKey kApiKey = ApiKey::kJoinGroup;
  static constexpr MessageVersions kVersions{0, 9};

  struct Protocol {
    std::string name;
    Bytes metadata;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("metadata", metadata);
    }
  };

  std::string group_id;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = -1;              // v1+; absent: use the session timeout
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v5+, nullable
  std::string protocol_type;
  std::vector<Protocol> protocols;
  std::optional<std::string> reason;  // v8+, nullable

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("session_timeout_ms", session_timeout_ms);
    io.field("rebalance_timeout_ms", rebalance_timeout_ms, {.since = 1});
    io.field("member_id", member_id);
    io.field("group_instance_id", group_instance_id, {.since = 5, .nullable_from = 5});
    io.field("protocol_type", protocol_type);
    io.field("protocols", protocols);
    io.field("reason", reason, {.since = 8, .nullable_from = 8});
  }
};

struct JoinGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kJoinGroup;
  static constexpr MessageVersions kVersions{0, 9};

  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v5+, nullable
    Bytes metadata;

    template <class Io>
    void serde(Io& io) {
      io.field("member_id", member_id);
      io.field("group_instance_id", group_instance_id, {.since = 5, .nullable_from = 5});
      io.field("metadata", metadata);
    }
  };

  int32_t throttle_time_ms = 0;  // v2+
  int16_t error_code = 0;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;                  // v7+, nullable
  std::optional<std::string> protocol_name = std::string();  // nullable from v7 (before: "" for none)
  std::string leader;
  bool skip_assignment = false;  // v9+
  std::string member_id;
  std::vector<Member> members;  // the leader's answer only

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 2});
    io.field("error_code", error_code);
    io.field("generation_id", generation_id);
    io.field("protocol_type", protocol_type, {.since = 7, .nullable_from = 7});
    io.field("protocol_name", protocol_name, {.nullable_from = 7});
    io.field("leader", leader);
    io.field("skip_assignment", skip_assignment, {.since = 9});
    io.field("member_id", member_id);
    io.field("members", members);
  }
};

}  // namespace sluice::protocol
