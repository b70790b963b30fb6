// ApiVersions (key 18), v0-4; v3+ is flexible. Schema: apache/kafka 3.9 ApiVersionsRequest.json / Response.json.
// v4 differs from v3 only in what a broker may list (a supported feature whose min version is 0, KAFKA-17011).
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

struct ApiVersionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kApiVersions;
  static constexpr MessageVersions kVersions{0, 4};

  std::string client_software_name;     // v3+, e.g. "librdkafka"
  std::string client_software_version;  // v3+

  template <class Io>
  void serde(Io& io) {
    io.field("client_software_name", client_software_name, {.since = 3});
    io.field("client_software_version", client_software_version, {.since = 3});
  }
};

struct ApiVersionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kApiVersions;
  static constexpr MessageVersions kVersions{0, 4};

  struct ApiVersion {
    int16_t api_key = 0;
    int16_t min_version = 0;
    int16_t max_version = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("api_key", api_key);
      io.field("min_version", min_version);
      io.field("max_version", max_version);
    }
  };

  struct SupportedFeature {
    std::string name;
    int16_t min_version = 0;
    int16_t max_version = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("min_version", min_version);
      io.field("max_version", max_version);
    }
  };

  struct FinalizedFeature {
    std::string name;
    int16_t max_version_level = 0;
    int16_t min_version_level = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("max_version_level", max_version_level);
      io.field("min_version_level", min_version_level);
    }
  };

  int16_t error_code = 0;
  std::vector<ApiVersion> api_keys;
  int32_t throttle_time_ms = 0;                                  // v1+
  std::optional<std::vector<SupportedFeature>> supported_features;  // tag 0
  std::optional<int64_t> finalized_features_epoch;                // tag 1 (absent: -1)
  std::optional<std::vector<FinalizedFeature>> finalized_features;  // tag 2
  std::optional<bool> zk_migration_ready;                         // tag 3 (absent: false)

  template <class Io>
  void serde(Io& io) {
    io.field("error_code", error_code);
    io.field("api_keys", api_keys);
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.tagged("supported_features", supported_features, 0, {.since = 3});
    io.tagged("finalized_features_epoch", finalized_features_epoch, 1, {.since = 3});
    io.tagged("finalized_features", finalized_features, 2, {.since = 3});
    io.tagged("zk_migration_ready", zk_migration_ready, 3, {.since = 3});
  }
};

// The answer to a supported ApiVersions request: every API of the table (api_table.h) with its advertised range.
ApiVersionsResponse api_versions_response();

// The whole frame answering an ApiVersions request at a version the broker does not support, as Kafka does
// (kafka-protocol.md §1 "ApiVersions dance", pitfall 2): response header v0, a v0 body with UNSUPPORTED_VERSION
// (35) and the ApiVersions range alone. The client then retries at a version it finds there; never close instead.
Bytes unsupported_api_versions_frame(int32_t correlation_id);

}  // namespace sluice::protocol
