// SyncGroup (key 14), v0-5; v4+ flexible. Schema: apache/kafka 3.9 SyncGroupRequest.json / SyncGroupResponse.json.
// The leader's request carries every member's assignment; each member gets its own back. Assignments are opaque.
// v5 (KIP-559) names the protocol type and name both ways; the broker checks them against the group's.
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

struct SyncGroupRequest {
  static constexpr ApiKey kApiKey = ApiKey::kSyncGroup;
  static constexpr MessageVersions kVersions{0, 5};

  struct Assignment {
    std::string member_id;
    Bytes assignment;

    template <class Io>
    void serde(Io& io) {
      io.field("member_id", member_id);
      io.field("assignment", assignment);
    }
  };

  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+, nullable
  std::optional<std::string> protocol_type;      // v5+, nullable (but required by the broker)
  std::optional<std::string> protocol_name;      // v5+, nullable (but required by the broker)
  std::vector<Assignment> assignments;           // empty from followers

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("generation_id", generation_id);
    io.field("member_id", member_id);
    io.field("group_instance_id", group_instance_id, {.since = 3, .nullable_from = 3});
    io.field("protocol_type", protocol_type, {.since = 5, .nullable_from = 5});
    io.field("protocol_name", protocol_name, {.since = 5, .nullable_from = 5});
    io.field("assignments", assignments);
  }
};

struct SyncGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kSyncGroup;
  static constexpr MessageVersions kVersions{0, 5};

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::optional<std::string> protocol_type;  // v5+, nullable
  std::optional<std::string> protocol_name;  // v5+, nullable
  Bytes assignment;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("error_code", error_code);
    io.field("protocol_type", protocol_type, {.since = 5, .nullable_from = 5});
    io.field("protocol_name", protocol_name, {.since = 5, .nullable_from = 5});
    io.field("assignment", assignment);
  }
};

}  // namespace sluice::protocol
