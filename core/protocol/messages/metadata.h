// Metadata (key 3), v0-12; v9+ is flexible. Schema: apache/kafka 3.9 MetadataRequest.json / MetadataResponse.json.
// v10 adds topic ids to the response (and to the request, where Kafka refuses them before v12), v11 drops the
// cluster's authorized operations, v12 looks topics up by id (a null name).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {

// Authorized-operations bitfields when not requested or not computed.
inline constexpr int32_t kAuthorizedOperationsOmitted = std::numeric_limits<int32_t>::min();

struct MetadataRequest {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  static constexpr MessageVersions kVersions{0, 12};

  struct Topic {
    Uuid topic_id{};                                  // v10+; zero: by name
    std::optional<std::string> name = std::string();  // null from v10 (meaningful from v12: by id)

    template <class Io>
    void serde(Io& io) {
      io.field("topic_id", topic_id, {.since = 10});
      io.field("name", name, {.nullable_from = 10});
    }
  };

  std::optional<std::vector<Topic>> topics = std::vector<Topic>{};  // null (v1+): every topic
  bool allow_auto_topic_creation = true;                               // v4+; older versions mean true
  bool include_cluster_authorized_operations = false;                  // v8-10
  bool include_topic_authorized_operations = false;                    // v8+

  // v0 has no null: an empty list there means every topic; from v1 an empty list means none.
  bool all_topics(int16_t version) const { return !topics || (version == 0 && topics->empty()); }
  // True when a topic is named by id (any non-zero id): v12's lookup by id, which ignores the names.
  bool by_topic_id() const {
    return topics && std::any_of(topics->begin(), topics->end(), [](const Topic& t) { return !t.topic_id.is_zero(); });
  }

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
  static constexpr MessageVersions kVersions{0, 12};

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
    std::optional<std::string> name = std::string();  // null from v12: an unknown topic id
    Uuid topic_id{};                                  // v10+; zero for a topic unknown by name
    bool is_internal = false;                         // v1+
    std::vector<Partition> partitions;
    int32_t topic_authorized_operations = kAuthorizedOperationsOmitted;  // v8+

    template <class Io>
    void serde(Io& io) {
      io.field("error_code", error_code);
      io.field("name", name, {.nullable_from = 12});
      io.field("topic_id", topic_id, {.since = 10});
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
