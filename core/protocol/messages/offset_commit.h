// OffsetCommit (key 8), v0-9; v8+ flexible. Schema: apache/kafka 3.9 OffsetCommitRequest.json /
// OffsetCommitResponse.json. Generation -1 with an empty member id is a standalone (non-member) commit, and v0, which
// has neither, always is one. v1 carries a commit timestamp per partition, v2-4 a retention time, v6+ the committed
// leader epoch; v9 is v8 again (the first version KIP-848 groups may use).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct OffsetCommitRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetCommit;
  static constexpr MessageVersions kVersions{0, 9};

  struct Partition {
    int32_t partition_index = 0;
    int64_t committed_offset = 0;
    int32_t committed_leader_epoch = -1;             // v6+
    int64_t commit_timestamp = -1;                   // v1 only; -1: the broker's time
    std::optional<std::string> committed_metadata;  // nullable

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("committed_offset", committed_offset);
      io.field("committed_leader_epoch", committed_leader_epoch, {.since = 6});
      io.field("commit_timestamp", commit_timestamp, {.since = 1, .until = 1});
      io.field("committed_metadata", committed_metadata, {.nullable_from = 0});
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
  int32_t generation_id = -1;                    // v1+ (GenerationIdOrMemberEpoch)
  std::string member_id;                         // v1+
  std::optional<std::string> group_instance_id;  // v7+, nullable
  int64_t retention_time_ms = -1;                // v2-4; -1: the broker's default
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id);
    io.field("generation_id", generation_id, {.since = 1});
    io.field("member_id", member_id, {.since = 1});
    io.field("group_instance_id", group_instance_id, {.since = 7, .nullable_from = 7});
    io.field("retention_time_ms", retention_time_ms, {.since = 2, .until = 4});
    io.field("topics", topics);
  }
};

struct OffsetCommitResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetCommit;
  static constexpr MessageVersions kVersions{0, 9};

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

  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 3});
    io.field("topics", topics);
  }
};

}  // namespace sluice::protocol
