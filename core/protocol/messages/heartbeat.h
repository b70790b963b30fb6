// Heartbeat (key 12), v0-4; v4+ flexible. Schema: apache/kafka 3.9 HeartbeatRequest.json / HeartbeatResponse.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct HeartbeatRequest {
  static constexpr ApiKey kApiKey = ApiKey::kHeartbeat;
  static constexpr MessageVersions kVersions{0, 4};

  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+, nullable

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("generation_id", generation_id);
    io.field("member_id", member_id);
    io.field("group_instance_id", group_instance_id, {.since = 3, .nullable_from = 3});
  }
};

struct HeartbeatResponse {
  static constexpr ApiKey kApiKey = ApiKey::kHeartbeat;
  static constexpr MessageVersions kVersions{0, 4};

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("error_code", error_code);
  }
};

}  // namespace sluice::protocol
