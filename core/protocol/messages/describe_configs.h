// DescribeConfigs (key 32), v0-4; v4 is flexible. Schema: apache/kafka 3.9 DescribeConfigsRequest.json /
// DescribeConfigsResponse.json. v0 answers is_default where v1+ answer config_source; v1 adds synonyms, v3
// config_type and documentation. Also the resource types and config sources the three config APIs share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

// ConfigResource.Type ids.
enum class ConfigResourceType : int8_t { kUnknown = 0, kAny = 1, kTopic = 2, kBroker = 4, kBrokerLogger = 8 };

// DescribeConfigsResponse.ConfigSource ids.
enum class ConfigSourceId : int8_t {
  kUnknown = 0,
  kDynamicTopicConfig = 1,
  kDynamicBrokerConfig = 2,
  kDynamicDefaultBrokerConfig = 3,
  kStaticBrokerConfig = 4,
  kDefaultConfig = 5,
};

struct DescribeConfigsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeConfigs;
  static constexpr MessageVersions kVersions{0, 4};

  struct Resource {
    int8_t resource_type = 0;
    std::string resource_name;
    std::optional<std::vector<std::string>> configuration_keys;  // null: every key

    template <class Io>
    void serde(Io& io) {
      io.field("resource_type", resource_type);
      io.field("resource_name", resource_name);
      io.field("configuration_keys", configuration_keys);
    }
  };

  std::vector<Resource> resources;
  bool include_synonyms = false;       // v1+
  bool include_documentation = false;  // v3+

  template <class Io>
  void serde(Io& io) {
    io.field("resources", resources);
    io.field("include_synonyms", include_synonyms, {.since = 1});
    io.field("include_documentation", include_documentation, {.since = 3});
  }
};

struct DescribeConfigsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeConfigs;
  static constexpr MessageVersions kVersions{0, 4};

  struct Synonym {
    std::string name;
    std::optional<std::string> value;
    int8_t source = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("value", value);
      io.field("source", source);
    }
  };

  struct Config {
    std::string name;
    std::optional<std::string> value;
    bool read_only = false;
    bool is_default = false;    // v0 only
    int8_t config_source = -1;  // v1+
    bool is_sensitive = false;
    std::vector<Synonym> synonyms;             // v1+
    int8_t config_type = 0;                    // v3+
    std::optional<std::string> documentation;  // v3+

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("value", value);
      io.field("read_only", read_only);
      io.field("is_default", is_default, {.until = 0});
      io.field("config_source", config_source, {.since = 1});
      io.field("is_sensitive", is_sensitive);
      io.field("synonyms", synonyms, {.since = 1});
      io.field("config_type", config_type, {.since = 3});
      io.field("documentation", documentation, {.since = 3});
    }
  };

  struct ResourceResult {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;
    std::vector<Config> configs;

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("error_message", error_message);
      io.field("resource_type", resource_type);
      io.field("resource_name", resource_name);
      io.field("configs", configs);
    }
  };

  int32_t throttle_time_ms = 0;
  std::vector<ResourceResult> results;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("results", results);
  }
};

}  // namespace sluice::protocol
