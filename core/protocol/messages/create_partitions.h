// CreatePartitions (key 37), v0-3; v2+ is flexible. Schema: apache/kafka 3.9 CreatePartitionsRequest.json /
// CreatePartitionsResponse.json. v1 and v3 change nothing on the wire (v3: quota errors only when the throttle is
// strict).
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

struct CreatePartitionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kCreatePartitions;
  static constexpr MessageVersions kVersions{0, 3};

  struct Assignment {
    std::vector<int32_t> broker_ids;

    template <class Io>
    void serde(Io& io) {
      io.field("broker_ids", broker_ids);
    }
  };

  struct Topic {
    std::string name;
    int32_t count = 0;                                   // the new total, not the number added
    std::optional<std::vector<Assignment>> assignments;  // null: the broker places the new partitions

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("count", count);
      io.field("assignments", assignments);
    }
  };

  std::vector<Topic> topics;
  int32_t timeout_ms = 0;
  bool validate_only = false;

  template <class Io>
  void serde(Io& io) {
    io.field("topics", topics);
    io.field("timeout_ms", timeout_ms);
    io.field("validate_only", validate_only);
  }
};

struct CreatePartitionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kCreatePartitions;
  static constexpr MessageVersions kVersions{0, 3};

  struct Result {
    std::string name;
    int16_t error_code = 0;
    std::optional<std::string> error_message;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("error_code", error_code);
      io.field("error_message", error_message);
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
