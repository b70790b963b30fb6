// DeleteTopics (key 20), v0-6; v4+ is flexible. Schema: apache/kafka 3.9 DeleteTopicsRequest.json /
// DeleteTopicsResponse.json. v6 names topics by name or id (Topics[]) instead of TopicNames[].
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

struct DeleteTopicsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteTopics;
  static constexpr MessageVersions kVersions{0, 6};

  struct Topic {
    std::optional<std::string> name;  // null: by id
    Uuid topic_id;                    // zero: by name

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("topic_id", topic_id);
    }
  };

  std::vector<Topic> topics;             // v6+
  std::vector<std::string> topic_names;  // v0-5
  int32_t timeout_ms = 0;

  template <class Io>
  void serde(Io& io) {
    io.field("topics", topics, {.since = 6});
    io.field("topic_names", topic_names, {.until = 5});
    io.field("timeout_ms", timeout_ms);
  }
};

struct DeleteTopicsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteTopics;
  static constexpr MessageVersions kVersions{0, 6};

  struct Topic {
    std::optional<std::string> name;  // null from v6 (a topic named by an unknown id)
    Uuid topic_id;                    // v6+
    int16_t error_code = 0;
    std::optional<std::string> error_message;  // v5+

    template <class Io>
    void serde(Io& io) {
      io.field("name", name, {.nullable_from = 6});
      io.field("topic_id", topic_id, {.since = 6});
      io.field("error_code", error_code);
      io.field("error_message", error_message, {.since = 5});
    }
  };

  int32_t throttle_time_ms = 0;  // v1+
  std::vector<Topic> responses;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("responses", responses);
  }
};

}  // namespace sluice::protocol
