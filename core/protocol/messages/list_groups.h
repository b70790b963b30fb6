// ListGroups (key 16), v0-5; v3+ flexible. Schema: apache/kafka 3.9 ListGroupsRequest.json /
// ListGroupsResponse.json. v4 (KIP-518) filters by state and reports each group's state; v5 (KIP-848) by type, and
// reports each group's type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct ListGroupsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kListGroups;
  static constexpr MessageVersions kVersions{0, 5};

  std::vector<std::string> states_filter;  // v4+; empty: every state
  std::vector<std::string> types_filter;   // v5+; empty: every type

  template <class Io>
  void serde(Io& io) {
    io.field("states_filter", states_filter, {.since = 4});
    io.field("types_filter", types_filter, {.since = 5});
  }
};

struct ListGroupsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kListGroups;
  static constexpr MessageVersions kVersions{0, 5};

  struct Group {
    std::string group_id;
    std::string protocol_type;
    std::string group_state;  // v4+
    std::string group_type;   // v5+

    template <class Io>
    void serde(Io& io) {
      io.field("group_id", group_id);
      io.field("protocol_type", protocol_type);
      io.field("group_state", group_state, {.since = 4});
      io.field("group_type", group_type, {.since = 5});
    }
  };

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::vector<Group> groups;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("error_code", error_code);
    io.field("groups", groups);
  }
};

}  // namespace sluice::protocol
