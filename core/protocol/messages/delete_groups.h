// DeleteGroups (key 42), v0-2; v2+ flexible. Schema: apache/kafka 3.9 DeleteGroupsRequest.json /
// DeleteGroupsResponse.json. Only empty groups can be deleted (NON_EMPTY_GROUP otherwise).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct DeleteGroupsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteGroups;
  static constexpr MessageVersions kVersions{0, 2};

  std::vector<std::string> groups_names;

  template <class Io>
  void serde(Io& io) {
    io.field("groups_names", groups_names);
  }
};

struct DeleteGroupsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteGroups;
  static constexpr MessageVersions kVersions{0, 2};

  struct Result {
    std::string group_id;
    int16_t error_code = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("group_id", group_id);
      io.field("error_code", error_code);
    }
  };

  int32_t throttle_time_ms = 0;
  std::vector<Result> results;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("results", results);
  }
};

}  // namespace sluice::protocol
