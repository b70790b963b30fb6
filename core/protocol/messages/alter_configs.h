// AlterConfigs (key 33), v0-2; v2 is flexible. Schema: apache/kafka 3.9 AlterConfigsRequest.json /
// AlterConfigsResponse.json. v1 is v0. IncrementalAlterConfigs shares both layouts (only its config entry differs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

// AlterConfigs' and IncrementalAlterConfigs' request: resources, each with its config changes, and validate_only.
template <ApiKey kKey, MessageVersions kRange, class ConfigT>
struct BasicAlterConfigsRequest {
  static constexpr ApiKey kApiKey = kKey;
  static constexpr MessageVersions kVersions = kRange;
  using Config = ConfigT;

  struct Resource {
    int8_t resource_type = 0;
    std::string resource_name;
    std::vector<Config> configs;

    template <class Io>
    void serde(Io& io) {
      io.field("resource_type", resource_type);
      io.field("resource_name", resource_name);
      io.field("configs", configs);
    }
  };

  std::vector<Resource> resources;
  bool validate_only = false;

  template <class Io>
  void serde(Io& io) {
    io.field("resources", resources);
    io.field("validate_only", validate_only);
  }
};

// An AlterConfigs change: the resource's configs are the complete set of overrides, every other key reverts to
// its default.
struct AlterableConfig {
  std::string name;
  std::optional<std::string> value;

  template <class Io>
  void serde(Io& io) {
    io.field("name", name);
    io.field("value", value);
  }
};

inline constexpr MessageVersions kAlterConfigsVersions{0, 2};

using AlterConfigsRequest = BasicAlterConfigsRequest<ApiKey::kAlterConfigs, kAlterConfigsVersions, AlterableConfig>;

// AlterConfigs' and IncrementalAlterConfigs' response: one error per resource.
template <ApiKey kKey, MessageVersions kRange>
struct BasicAlterConfigsResponse {
  static constexpr ApiKey kApiKey = kKey;
  static constexpr MessageVersions kVersions = kRange;

  struct Resource {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("error_message", error_message);
      io.field("resource_type", resource_type);
      io.field("resource_name", resource_name);
    }
  };

  int32_t throttle_time_ms = 0;
  std::vector<Resource> responses;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("responses", responses);
  }
};

using AlterConfigsResponse = BasicAlterConfigsResponse<ApiKey::kAlterConfigs, kAlterConfigsVersions>;

}  // namespace sluice::protocol
