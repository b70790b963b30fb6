// OffsetForLeaderEpoch (key 23), v0-4; v4 is flexible. Schema: apache/kafka 3.9 OffsetForLeaderEpochRequest.json /
// OffsetForLeaderEpochResponse.json. v1 answers the epoch with its end offset, v2 adds the current leader epoch
// (fencing) and the throttle time, v3 the replica id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct OffsetForLeaderEpochRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetForLeaderEpoch;
  static constexpr MessageVersions kVersions{0, 4};

  struct Partition {
    int32_t partition = 0;
    int32_t current_leader_epoch = -1;  // v2+
    int32_t leader_epoch = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("partition", partition);
      io.field("current_leader_epoch", current_leader_epoch, {.since = 2});
      io.field("leader_epoch", leader_epoch);
    }
  };

  struct Topic {
    std::string topic;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic", topic);
      io.field("partitions", partitions);
    }
  };

  int32_t replica_id = -2;  // v3+; -2 is the "debug consumer" default, consumers send -1
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("replica_id", replica_id, {.since = 3});
    io.field("topics", topics);
  }
};

struct OffsetForLeaderEpochResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetForLeaderEpoch;
  static constexpr MessageVersions kVersions{0, 4};

  struct Partition {
    int16_t error_code = 0;
    int32_t partition = 0;
    int32_t leader_epoch = -1;  // v1+
    int64_t end_offset = -1;

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("partition", partition);
      io.field("leader_epoch", leader_epoch, {.since = 1});
      io.field("end_offset", end_offset);
    }
  };

  struct Topic {
    std::string topic;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic", topic);
      io.field("partitions", partitions);
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
