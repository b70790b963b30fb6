// OffsetDelete (key 47), v0; never flexible. Schema: apache/kafka 3.9 OffsetDeleteRequest.json /
// OffsetDeleteResponse.json (KIP-496): drops a group's committed offsets for partitions it no longer consumes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct OffsetDeleteRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetDelete;
  static constexpr MessageVersions kVersions{0, 0};

  struct Partition {
    int32_t partition_index = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
    }
  };

  struct Topic {
    std::string name;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("partitions", partitions);
    }
  };

  std::string group_id;
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("topics", topics);
  }
};

struct OffsetDeleteResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetDelete;
  static constexpr MessageVersions kVersions{0, 0};

  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("error_code", error_code);
    }
  };

  struct Topic {
    std::string name;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("partitions", partitions);
    }
  };

  int16_t error_code = 0;  // group-level: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP ...
  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("error_code", error_code);
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("topics", topics);
  }
};

}  // namespace sluice::protocol
