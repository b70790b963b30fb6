// Metadata (key 3), v0-9; v9 is flexible. Schema: apache/kafka 3.9 MetadataRequest.json / MetadataResponse.json.
// v10+ (topic ids, nullable names) is not advertised: see api_table.h.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

// Authorized-operations bitfields when not requested or not computed.
inline constexpr int32_t kAuthorizedOperationsOmitted = std::numeric_limits<int32_t>::min();

struct MetadataRequest {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  static constexpr MessageVersions kVersions{0, 9};

  struct Topic {
    std::string name;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
    }
  };

  std::optional<std::vector<Topic>> topics = std::vector<Topic>{};  // null (v1+): every topic
  bool allow_auto_topic_creation = true;                               // v4+; older versions mean true
  bool include_cluster_authorized_operations = false;                  // v8-10
  bool include_topic_authorized_operations = false;                    // v8+

  // v0 has no null: an empty list there means every topic; from v1 an empty list means none.
  bool all_topics(int16_t version) const { return !topics || (version == 0 && topics->empty()); }

  template <class Io>
  void serde(Io& io) {
    io.field("topics", topics, {.nullable_from = 1});
    io.field("allow_auto_topic_creation", allow_auto_topic_creation, {.since = 4});
    io.field("include_cluster_authorized_operations", include_cluster_authorized_operations,
             {.since = 8, .until = 10});
    io.field("include_topic_authorized_operations", include_topic_authorized_operations, {.since = 8});
  }
};

struct MetadataResponse {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  static constexpr MessageVersions kVersions{0, 9};

  struct Broker {
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;  // v1+

    template <class Io>
    void serde(Io& io) {
      io.field("node_id", node_id);
      io.field("host", host);
      io.field("port", port);
      io.field("rack", rack, {.since = 1});
    }
  };

  struct Partition {
    int16_t error_code = 0;
    int32_t partition_index = 0;
    int32_t leader_id = -1;
    int32_t leader_epoch = -1;  // v7+
    std::vector<int32_t> replica_nodes;
    std::vector<int32_t> isr_nodes;
    std::vector<int32_t> offline_replicas;  // v5+

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("partition_index", partition_index);
      io.field("leader_id", leader_id);
      io.field("leader_epoch", leader_epoch, {.since = 7});
      io.field("replica_nodes", replica_nodes);
      io.field("isr_nodes", isr_nodes);
      io.field("offline_replicas", offline_replicas, {.since = 5});
    }
  };

  struct Topic {
    int16_t error_code = 0;
    std::string name;
    bool is_internal = false;  // v1+
    std::vector<Partition> partitions;
    int32_t topic_authorized_operations = kAuthorizedOperationsOmitted;  // v8+

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("name", name);
      io.field("is_internal", is_internal, {.since = 1});
      io.field("partitions", partitions);
      io.field("topic_authorized_operations", topic_authorized_operations, {.since = 8});
    }
  };

  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Broker> brokers;
  std::optional<std::string> cluster_id;  // v2+
  int32_t controller_id = -1;             // v1+
  std::vector<Topic> topics;
  int32_t cluster_authorized_operations = kAuthorizedOperationsOmitted;  // v8-10

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 3});
    io.field("brokers", brokers);
    io.field("cluster_id", cluster_id, {.since = 2});
    io.field("controller_id", controller_id, {.since = 1});
    io.field("topics", topics);
    io.field("cluster_authorized_operations", cluster_authorized_operations, {.since = 8, .until = 10});
  }
};

}  // namespace sluice::protocol
