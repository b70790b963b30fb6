// ListOffsets (key 2), v0-9; v6+ is flexible. Schema: apache/kafka 3.9 ListOffsetsRequest.json /
// ListOffsetsResponse.json. v0 asks for up to MaxNumOffsets offsets and answers them in OldStyleOffsets, without
// Timestamp and Offset; v7-9 only allow new special timestamps (-3, -4, -5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

// The special timestamps of a ListOffsets partition.
inline constexpr int64_t kLatestTimestamp = -1;
inline constexpr int64_t kEarliestTimestamp = -2;
inline constexpr int64_t kMaxTimestamp = -3;            // v7+
inline constexpr int64_t kEarliestLocalTimestamp = -4;  // v8+ (tiered storage: the first offset kept locally)
inline constexpr int64_t kLatestTieredTimestamp = -5;   // v9+ (tiered storage: the last offset tiered)

struct ListOffsetsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kListOffsets;
  static constexpr MessageVersions kVersions{0, 9};

  struct Partition {
    int32_t partition_index = 0;
    int32_t current_leader_epoch = -1;  // v4+
    int64_t timestamp = 0;
    int32_t max_num_offsets = 1;  // v0 only

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("current_leader_epoch", current_leader_epoch, {.since = 4});
      io.field("timestamp", timestamp);
      io.field("max_num_offsets", max_num_offsets, {.until = 0});
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

  int32_t replica_id = -1;
  int8_t isolation_level = 0;  // v2+
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("replica_id", replica_id);
    io.field("isolation_level", isolation_level, {.since = 2});
    io.field("topics", topics);
  }
};

struct ListOffsetsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kListOffsets;
  static constexpr MessageVersions kVersions{0, 9};

  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    std::vector<int64_t> old_style_offsets{};  // v0 only, newest first
    int64_t timestamp = -1;                    // v1+
    int64_t offset = -1;                       // v1+
    int32_t leader_epoch = -1;                 // v4+

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("error_code", error_code);
      io.field("old_style_offsets", old_style_offsets, {.until = 0});
      io.field("timestamp", timestamp, {.since = 1});
      io.field("offset", offset, {.since = 1});
      io.field("leader_epoch", leader_epoch, {.since = 4});
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

  int32_t throttle_time_ms = 0;  // v2+
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 2});
    io.field("topics", topics);
  }
};

}  // namespace sluice::protocol
