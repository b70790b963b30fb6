// DescribeCluster (key 60), v0-1; every version is flexible. Schema: apache/kafka 3.9 DescribeClusterRequest.json /
// DescribeClusterResponse.json. v1 adds the endpoint type (1 brokers, 2 controllers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

inline constexpr int8_t kEndpointTypeBrokers = 1;
inline constexpr int8_t kEndpointTypeControllers = 2;

struct DescribeClusterRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeCluster;
  static constexpr MessageVersions kVersions{0, 1};

  bool include_cluster_authorized_operations = false;
  int8_t endpoint_type = kEndpointTypeBrokers;  // v1+

  template <class Io>
  void serde(Io& io) {
    io.field("include_cluster_authorized_operations", include_cluster_authorized_operations);
    io.field("endpoint_type", endpoint_type, {.since = 1});
  }
};

struct DescribeClusterResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeCluster;
  static constexpr MessageVersions kVersions{0, 1};

  struct Broker {
    int32_t broker_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;

    template <class Io>
    void serde(Io& io) {
      io.field("broker_id", broker_id);
      io.field("host", host);
      io.field("port", port);
      io.field("rack", rack);
    }
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  int8_t endpoint_type = kEndpointTypeBrokers;  // v1+
  std::string cluster_id;
  int32_t controller_id = -1;
  std::vector<Broker> brokers;
  int32_t cluster_authorized_operations = kAuthorizedOperationsOmitted;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("error_code", error_code);
    io.field("error_message", error_message);
    io.field("endpoint_type", endpoint_type, {.since = 1});
    io.field("cluster_id", cluster_id);
    io.field("controller_id", controller_id);
    io.field("brokers", brokers);
    io.field("cluster_authorized_operations", cluster_authorized_operations);
  }
};

}  // namespace sluice::protocol
