// IncrementalAlterConfigs (key 44), v0-1; v1 is flexible. Schema: apache/kafka 3.9
// IncrementalAlterConfigsRequest.json / IncrementalAlterConfigsResponse.json. The response is AlterConfigs' layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/messages/alter_configs.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct IncrementalAlterableConfig {
  std::string name;
  int8_t config_operation = 0;  // 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT
  std::optional<std::string> value;

  template <class Io>
  void serde(Io& io) {
    io.field("name", name);
    io.field("config_operation", config_operation);
    io.field("value", value);
  }
};

inline constexpr MessageVersions kIncrementalAlterConfigsVersions{0, 1};

using IncrementalAlterConfigsRequest =
    BasicAlterConfigsRequest<ApiKey::kIncrementalAlterConfigs, kIncrementalAlterConfigsVersions,
                             IncrementalAlterableConfig>;
using IncrementalAlterConfigsResponse =
    BasicAlterConfigsResponse<ApiKey::kIncrementalAlterConfigs, kIncrementalAlterConfigsVersions>;

}  // namespace sluice::protocol
