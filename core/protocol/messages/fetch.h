// Fetch (key 1), v4-17; v12+ is flexible. Schema: apache/kafka 3.9 FetchRequest.json / FetchResponse.json.
// v13+ names topics by id (and only by id), v15 moves the replica id into ReplicaState, v16 adds the KIP-951 node
// endpoints, v17 a follower's directory id. v0-3 (message formats 0 and 1) are not served (api_table.h), so their
// fields are not described: every served version has MaxBytes and IsolationLevel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/messages/leader_discovery.h"
#include "core/protocol/serde.h"
#include "core/protocol/small_array.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {

// FetchRequest's ReplicaState (v15+).
struct FetchReplicaState {
  int32_t replica_id = -1;
  int64_t replica_epoch = -1;

  template <class Io>
  void serde(Io& io) {
    io.field("replica_id", replica_id);
    io.field("replica_epoch", replica_epoch);
  }
};

inline constexpr int8_t kReadUncommitted = 0;
inline constexpr int8_t kReadCommitted = 1;

struct FetchRequest {
  static constexpr ApiKey kApiKey = ApiKey::kFetch;
  static constexpr MessageVersions kVersions{4, 17};

  struct Partition {
    int32_t partition = 0;
    int32_t current_leader_epoch = -1;  // v9+
    int64_t fetch_offset = 0;
    int32_t last_fetched_epoch = -1;  // v12+
    int64_t log_start_offset = -1;    // v5+, followers only
    int32_t partition_max_bytes = 0;
    std::optional<Uuid> replica_directory_id{};  // tag 0 (v17+), followers only

    template <class Io>
    void serde(Io& io) {
      io.field("partition", partition);
      io.field("current_leader_epoch", current_leader_epoch, {.since = 9});
      io.field("fetch_offset", fetch_offset);
      io.field("last_fetched_epoch", last_fetched_epoch, {.since = 12});
      io.field("log_start_offset", log_start_offset, {.since = 5});
      io.field("partition_max_bytes", partition_max_bytes);
      io.tagged("replica_directory_id", replica_directory_id, 0, {.since = 17});
    }
  };

  struct Topic {
    std::string topic;  // v0-12
    Uuid topic_id{};    // v13+
    SmallArray<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic", topic, {.until = 12});
      io.field("topic_id", topic_id, {.since = 13});
      io.field("partitions", partitions);
    }
  };

  struct ForgottenTopic {
    std::string topic;  // v7-12
    Uuid topic_id{};    // v13+
    std::vector<int32_t> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic", topic, {.until = 12});
      io.field("topic_id", topic_id, {.since = 13});
      io.field("partitions", partitions);
    }
  };

  // At namespace scope: clang refuses std::optional<T>::emplace() for a class nested in the one holding the optional
  // (its default member initializers are not yet parsed when optional<T> is instantiated).
  using ReplicaState = FetchReplicaState;

  std::optional<std::string> cluster_id;      // tag 0 (v12+); absent = null
  int32_t replica_id = -1;                    // v0-14
  std::optional<ReplicaState> replica_state;  // tag 1 (v15+); absent = a consumer
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 0;
  int32_t max_bytes = 0x7fffffff;
  int8_t isolation_level = kReadUncommitted;
  int32_t session_id = 0;      // v7+
  int32_t session_epoch = -1;  // v7+
  std::vector<Topic> topics;
  std::vector<ForgottenTopic> forgotten_topics_data;  // v7+
  std::string rack_id;                                // v11+

  template <class Io>
  void serde(Io& io) {
    io.tagged("cluster_id", cluster_id, 0, {.since = 12});
    io.field("replica_id", replica_id, {.until = 14});
    io.tagged("replica_state", replica_state, 1, {.since = 15});
    io.field("max_wait_ms", max_wait_ms);
    io.field("min_bytes", min_bytes);
    io.field("max_bytes", max_bytes, {.since = 3});
    io.field("isolation_level", isolation_level, {.since = 4});
    io.field("session_id", session_id, {.since = 7});
    io.field("session_epoch", session_epoch, {.since = 7});
    io.field("topics", topics);
    io.field("forgotten_topics_data", forgotten_topics_data, {.since = 7});
    io.field("rack_id", rack_id, {.since = 11});
  }
};

struct FetchResponse {
  static constexpr ApiKey kApiKey = ApiKey::kFetch;
  static constexpr MessageVersions kVersions{4, 17};

  struct EpochEndOffset {
    int32_t epoch = -1;
    int64_t end_offset = -1;

    template <class Io>
    void serde(Io& io) {
      io.field("epoch", epoch);
      io.field("end_offset", end_offset);
    }
  };

  using LeaderIdAndEpoch = protocol::LeaderIdAndEpoch;

  struct SnapshotId {
    int64_t end_offset = -1;
    int32_t epoch = -1;

    template <class Io>
    void serde(Io& io) {
      io.field("end_offset", end_offset);
      io.field("epoch", epoch);
    }
  };

  struct AbortedTransaction {
    int64_t producer_id = 0;
    int64_t first_offset = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("producer_id", producer_id);
      io.field("first_offset", first_offset);
    }
  };

  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    int64_t high_watermark = 0;
    int64_t last_stable_offset = -1;                  // v4+
    int64_t log_start_offset = -1;                    // v5+
    std::optional<EpochEndOffset> diverging_epoch;    // tag 0 (v12+)
    std::optional<LeaderIdAndEpoch> current_leader;   // tag 1 (v12+); set from v16
    std::optional<SnapshotId> snapshot_id;            // tag 2 (v12+)
    std::optional<std::vector<AbortedTransaction>> aborted_transactions;  // v4+, nullable
    int32_t preferred_read_replica = -1;                                  // v11+
    Records records;                                                      // nullable

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("error_code", error_code);
      io.field("high_watermark", high_watermark);
      io.field("last_stable_offset", last_stable_offset, {.since = 4});
      io.field("log_start_offset", log_start_offset, {.since = 5});
      io.tagged("diverging_epoch", diverging_epoch, 0, {.since = 12});
      io.tagged("current_leader", current_leader, 1, {.since = 12});
      io.tagged("snapshot_id", snapshot_id, 2, {.since = 12});
      io.field("aborted_transactions", aborted_transactions, {.since = 4});
      io.field("preferred_read_replica", preferred_read_replica, {.since = 11});
      io.field("records", records);
    }
  };

  struct Topic {
    std::string topic;  // v0-12
    Uuid topic_id{};    // v13+
    SmallArray<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("topic", topic, {.until = 12});
      io.field("topic_id", topic_id, {.since = 13});
      io.field("partitions", partitions);
    }
  };

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;        // v7+
  int32_t session_id = 0;        // v7+
  std::vector<Topic> responses;
  std::optional<std::vector<NodeEndpoint>> node_endpoints;  // tag 0 (v16+): the leaders named in current_leader

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.field("error_code", error_code, {.since = 7});
    io.field("session_id", session_id, {.since = 7});
    io.field("responses", responses);
    io.tagged("node_endpoints", node_endpoints, 0, {.since = 16});
  }
};

// At least the bytes a FetchResponse's encoding takes (its records, and a generous bound for every other field), so
// that the broker encodes a large answer into one buffer: growing one copies what it holds and zero-fills the room
// it adds, a megabyte at a time for a consumer catching up.
inline size_t encoded_size_hint(const FetchResponse& response) {
  constexpr size_t kPerTopicBytes = 64;       // name or id, array length, tagged fields
  constexpr size_t kPerPartitionBytes = 128;  // the fixed fields, the records' length, an error's leader
  size_t bytes = 64;
  for (const FetchResponse::Topic& topic : response.responses) {
    bytes += kPerTopicBytes + topic.topic.size();
    for (const FetchResponse::Partition& partition : topic.partitions) {
      bytes += kPerPartitionBytes + partition.records.bytes().size();
      if (partition.aborted_transactions) bytes += 16 * partition.aborted_transactions->size();
    }
  }
  return bytes;
}

}  // namespace sluice::protocol
