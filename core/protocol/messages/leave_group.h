// LeaveGroup (key 13), v0-5; v4+ flexible. Schema: apache/kafka 3.9 LeaveGroupRequest.json /
// LeaveGroupResponse.json. v0-2 name one member (MemberId); v3+ (KIP-345) carry a batch of members, each answered
// with its own error code; v5 gives each leaving member a reason (KIP-800), which only Kafka's log lines use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct LeaveGroupRequest {
  static constexpr ApiKey kApiKey = ApiKey::kLeaveGroup;
  static constexpr MessageVersions kVersions{0, 5};

  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // nullable (v3+, like the array)
    std::optional<std::string> reason;             // v5+, nullable

    template <class Io>
    void serde(Io& io) {
      io.field("member_id", member_id);
      io.field("group_instance_id", group_instance_id, {.nullable_from = 3});
      io.field("reason", reason, {.since = 5, .nullable_from = 5});
    }
  };

  std::string group_id;
  std::string member_id;        // v0-2
  std::vector<Member> members;  // v3+

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("member_id", member_id, {.until = 2});
    io.field("members", members, {.since = 3});
  }
};

struct LeaveGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kLeaveGroup;
  static constexpr MessageVersions kVersions{0, 5};

  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // nullable (v3+, like the array)
    int16_t error_code = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("member_id", member_id);
      io.field("group_instance_id", group_instance_id, {.nullable_from = 3});
      io.field("error_code", error_code);
    }
  };

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::vector<Member> members;   // v3+

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("error_code", error_code);
    io.field("members", members, {.since = 3});
  }
};

}  // namespace sluice::protocol
