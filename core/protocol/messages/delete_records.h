// DeleteRecords (key 21), v0-2; v2 is flexible. Schema: apache/kafka 3.9 DeleteRecordsRequest.json /
// DeleteRecordsResponse.json. v1 is v0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct DeleteRecordsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteRecords;
  static constexpr MessageVersions kVersions{0, 2};

  struct Partition {
    int32_t partition_index = 0;
    int64_t offset = 0;  // the new log start; -1: the high watermark

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("offset", offset);
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

  std::vector<Topic> topics;
  int32_t timeout_ms = 0;

  template <class Io>
  void serde(Io& io) {
    io.field("topics", topics);
    io.field("timeout_ms", timeout_ms);
  }
};

struct DeleteRecordsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteRecords;
  static constexpr MessageVersions kVersions{0, 2};

  struct Partition {
    int32_t partition_index = 0;
    int64_t low_watermark = -1;  // -1 on error
    int16_t error_code = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("low_watermark", low_watermark);
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

  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("topics", topics);
  }
};

}  // namespace sluice::protocol
