// FindCoordinator (key 10), v0-6; v3+ flexible. Schema: apache/kafka 3.9 FindCoordinatorRequest.json /
// FindCoordinatorResponse.json. v4 (KIP-699) batches keys: CoordinatorKeys replaces Key, and the answer is a
// Coordinators array instead of the top-level node fields. v5 (KIP-890: TRANSACTION_ABORTABLE) and v6 (KIP-932:
// the share key type) keep v4's layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

inline constexpr int8_t kCoordinatorGroup = 0;
inline constexpr int8_t kCoordinatorTransaction = 1;
inline constexpr int8_t kCoordinatorShare = 2;  // v6+

struct FindCoordinatorRequest {
  static constexpr ApiKey kApiKey = ApiKey::kFindCoordinator;
  static constexpr MessageVersions kVersions{0, 6};

  std::string key;                            // v0-3
  int8_t key_type = kCoordinatorGroup;        // v1+
  std::vector<std::string> coordinator_keys;  // v4+

  template <class Io>
  void serde(Io& io) {
    io.field("key", key, {.until = 3});
    io.field("key_type", key_type, {.since = 1});
    io.field("coordinator_keys", coordinator_keys, {.since = 4});
  }
};

struct FindCoordinatorResponse {
  static constexpr ApiKey kApiKey = ApiKey::kFindCoordinator;
  static constexpr MessageVersions kVersions{0, 6};

  struct Coordinator {
    std::string key;
    int32_t node_id = -1;
    std::string host;
    int32_t port = -1;
    int16_t error_code = 0;
    std::optional<std::string> error_message;

    template <class Io>
    void serde(Io& io) {
      io.field("key", key);
      io.field("node_id", node_id);
      io.field("host", host);
      io.field("port", port);
      io.field("error_code", error_code);
      io.field("error_message", error_message, {.nullable_from = 0});
    }
  };

  int32_t throttle_time_ms = 0;               // v1+
  int16_t error_code = 0;                     // v0-3
  std::optional<std::string> error_message;   // v1-3
  int32_t node_id = -1;                       // v0-3
  std::string host;                           // v0-3
  int32_t port = -1;                          // v0-3
  std::vector<Coordinator> coordinators;      // v4+

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("error_code", error_code, {.until = 3});
    io.field("error_message", error_message, {.since = 1, .until = 3, .nullable_from = 1});
    io.field("node_id", node_id, {.until = 3});
    io.field("host", host, {.until = 3});
    io.field("port", port, {.until = 3});
    io.field("coordinators", coordinators, {.since = 4});
  }
};

}  // namespace sluice::protocol
