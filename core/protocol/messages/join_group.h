// JoinGroup (key 11), v2-6 served; v6+ flexible. Schema: apache/kafka 3.9 JoinGroupRequest.json /
// JoinGroupResponse.json. v4+ answers a join without a member id with MEMBER_ID_REQUIRED and a fresh id; v5 adds
// static membership (GroupInstanceId). Protocol metadata is opaque to the broker.
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
  static constexpr MessageVersions kVersions{2, 6};

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

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("session_timeout_ms", session_timeout_ms);
    io.field("rebalance_timeout_ms", rebalance_timeout_ms, {.since = 1});
    io.field("member_id", member_id);
    io.field("group_instance_id", group_instance_id, {.since = 5, .nullable_from = 5});
    io.field("protocol_type", protocol_type);
    io.field("protocols", protocols);
  }
};

struct JoinGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kJoinGroup;
  static constexpr MessageVersions kVersions{2, 6};

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
  std::string protocol_name;
  std::string leader;
  std::string member_id;
  std::vector<Member> members;  // the leader's answer only

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 2});
    io.field("error_code", error_code);
    io.field("generation_id", generation_id);
    io.field("protocol_name", protocol_name);
    io.field("leader", leader);
    io.field("member_id", member_id);
    io.field("members", members);
  }
};

}  // namespace sluice::protocol
