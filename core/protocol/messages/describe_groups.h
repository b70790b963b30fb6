// DescribeGroups (key 15), v0-5; v5+ flexible. Schema: apache/kafka 3.9 DescribeGroupsRequest.json /
// DescribeGroupsResponse.json. Member metadata and assignment are the opaque bytes from JoinGroup and SyncGroup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/messages/metadata.h"  // kAuthorizedOperationsOmitted
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct DescribeGroupsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeGroups;
  static constexpr MessageVersions kVersions{0, 5};

  std::vector<std::string> groups;
  bool include_authorized_operations = false;  // v3+

  template <class Io>
  void serde(Io& io) {
    io.field("groups", groups);
    io.field("include_authorized_operations", include_authorized_operations, {.since = 3});
  }
};

struct DescribeGroupsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeGroups;
  static constexpr MessageVersions kVersions{0, 5};

  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v4+, nullable
    std::string client_id;
    std::string client_host;
    Bytes member_metadata;
    Bytes member_assignment;

    template <class Io>
    void serde(Io& io) {
      io.field("member_id", member_id);
      io.field("group_instance_id", group_instance_id, {.since = 4, .nullable_from = 4});
      io.field("client_id", client_id);
      io.field("client_host", client_host);
      io.field("member_metadata", member_metadata);
      io.field("member_assignment", member_assignment);
    }
  };

  struct Group {
    int16_t error_code = 0;
    std::string group_id;
    std::string group_state;
    std::string protocol_type;
    std::string protocol_data;  // the chosen protocol's name
    std::vector<Member> members;
    int32_t authorized_operations = kAuthorizedOperationsOmitted;  // v3+

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("group_id", group_id);
      io.field("group_state", group_state);
      io.field("protocol_type", protocol_type);
      io.field("protocol_data", protocol_data);
      io.field("members", members);
      io.field("authorized_operations", authorized_operations, {.since = 3});
    }
  };

  int32_t throttle_time_ms = 0;  // v1+
  std::vector<Group> groups;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("groups", groups);
  }
};

}  // namespace sluice::protocol
