// DescribeQuorum (key 55), v0-1; every version is flexible. Schema: apache/kafka 3.9 DescribeQuorumRequest.json /
// DescribeQuorumResponse.json (KIP-595). v1 adds each replica's LastFetchTimestamp and LastCaughtUpTimestamp
// (KIP-836); v2 (KIP-853: directory ids, nodes) is not served. Kafka asks it of the KRaft quorum,
// `__cluster_metadata` partition 0; Sluice answers from its metadata raft group (core/kafka/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

inline constexpr const char* kClusterMetadataTopic = "__cluster_metadata";

struct DescribeQuorumRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeQuorum;
  static constexpr MessageVersions kVersions{0, 1};

  struct Partition {
    int32_t partition_index = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
    }
  };
  struct Topic {
    std::string topic_name;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic_name", topic_name);
      io.field("partitions", partitions);
    }
  };

  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("topics", topics);
  }
};

struct DescribeQuorumResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeQuorum;
  static constexpr MessageVersions kVersions{0, 1};

  struct ReplicaState {
    int32_t replica_id = 0;
    int64_t log_end_offset = -1;           // -1: unknown
    int64_t last_fetch_timestamp = -1;     // v1+; ms, the leader's wall clock; -1 for the leader or unknown
    int64_t last_caught_up_timestamp = -1;  // v1+; ms; the current time for the leader, -1 when unknown

    template <class Io>
    void serde(Io& io) {
      io.field("replica_id", replica_id);
      io.field("log_end_offset", log_end_offset);
      io.field("last_fetch_timestamp", last_fetch_timestamp, {.since = 1});
      io.field("last_caught_up_timestamp", last_caught_up_timestamp, {.since = 1});
    }
  };
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    int32_t leader_id = -1;
    int32_t leader_epoch = -1;
    int64_t high_watermark = -1;
    std::vector<ReplicaState> current_voters = {};
    std::vector<ReplicaState> observers = {};

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("error_code", error_code);
      io.field("leader_id", leader_id);
      io.field("leader_epoch", leader_epoch);
      io.field("high_watermark", high_watermark);
      io.field("current_voters", current_voters);
      io.field("observers", observers);
    }
  };
  struct Topic {
    std::string topic_name;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic_name", topic_name);
      io.field("partitions", partitions);
    }
  };

  int16_t error_code = 0;
  std::vector<Topic> topics;

  template <class Io>
  void serde(Io& io) {
    io.field("error_code", error_code);
    io.field("topics", topics);
  }
};

}  // namespace sluice::protocol
