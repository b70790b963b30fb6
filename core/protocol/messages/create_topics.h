// CreateTopics (key 19), v0-7; v5+ is flexible. Schema: apache/kafka 3.9 CreateTopicsRequest.json /
// CreateTopicsResponse.json. v1 adds validate_only and the error message, v2 the throttle time, v5 the resulting
// configs, partition count and replication factor, v7 the topic id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {

struct CreateTopicsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kCreateTopics;
  static constexpr MessageVersions kVersions{0, 7};

  struct Assignment {
    int32_t partition_index = 0;
    std::vector<int32_t> broker_ids;

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("broker_ids", broker_ids);
    }
  };

  struct Config {
    std::string name;
    std::optional<std::string> value;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("value", value);
    }
  };

  struct Topic {
    std::string name;
    int32_t num_partitions = -1;      // -1: the broker default (or the manual assignment)
    int16_t replication_factor = -1;  // -1: the broker default (or the manual assignment)
    std::vector<Assignment> assignments;
    std::vector<Config> configs;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("num_partitions", num_partitions);
      io.field("replication_factor", replication_factor);
      io.field("assignments", assignments);
      io.field("configs", configs);
    }
  };

  std::vector<Topic> topics;
  int32_t timeout_ms = 60000;
  bool validate_only = false;  // v1+

  template <class Io>
  void serde(Io& io) {
    io.field("topics", topics);
    io.field("timeout_ms", timeout_ms);
    io.field("validate_only", validate_only, {.since = 1});
  }
};

struct CreateTopicsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kCreateTopics;
  static constexpr MessageVersions kVersions{0, 7};

  struct Config {
    std::string name;
    std::optional<std::string> value;
    bool read_only = false;
    int8_t config_source = -1;
    bool is_sensitive = false;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("value", value);
      io.field("read_only", read_only);
      io.field("config_source", config_source);
      io.field("is_sensitive", is_sensitive);
    }
  };

  struct Topic {
    std::string name;
    Uuid topic_id;  // v7+
    int16_t error_code = 0;
    std::optional<std::string> error_message;                            // v1+
    std::optional<int16_t> topic_config_error_code;                      // v5+, tag 0
    int32_t num_partitions = -1;                                         // v5+
    int16_t replication_factor = -1;                                     // v5+
    std::optional<std::vector<Config>> configs = std::vector<Config>{};  // v5+

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("topic_id", topic_id, {.since = 7});
      io.field("error_code", error_code);
      io.field("error_message", error_message, {.since = 1});
      io.tagged("topic_config_error_code", topic_config_error_code, 0, {.since = 5});
      io.field("num_partitions", num_partitions, {.since = 5});
      io.field("replication_factor", replication_factor, {.since = 5});
      io.field("configs", configs, {.since = 5});
    }
  };

  int32_t throttle_time_ms = 0;  // v2+
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 2});
    io.field("topics", topics);
  }
};

}  // namespace sluice::protocol
