// Produce (key 0), v0-11; v9+ is flexible. Schema: apache/kafka 3.9 ProduceRequest.json / ProduceResponse.json.
// v0-2 (message formats 0 and 1) decode here but the handler refuses them, as Kafka 4 does (kafka-protocol.md
// pitfall 3). v10 adds the KIP-951 leader hints (leader_discovery.h), v11 only a new error code for transactions.
#pragma once

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

struct ProduceRequest {
  static constexpr ApiKey kApiKey = ApiKey::kProduce;
  static constexpr MessageVersions kVersions{0, 11};

  struct PartitionData {
    int32_t index = 0;
    Records records;  // nullable; a view into the request frame

    template <class Io>
    void serde(Io& io) {
      io.field("index", index);
      io.field("records", records);
    }
  };

  struct TopicData {
    std::string name;
    SmallArray<PartitionData> partition_data;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("partition_data", partition_data);
    }
  };

  std::optional<std::string> transactional_id;  // v3+, nullable
  int16_t acks = 0;
  int32_t timeout_ms = 0;
  std::vector<TopicData> topic_data;

  template <class Io>
  void serde(Io& io) {
    io.field("transactional_id", transactional_id, {.since = 3});
    io.field("acks", acks);
    io.field("timeout_ms", timeout_ms);
    io.field("topic_data", topic_data);
  }
};

struct ProduceResponse {
  static constexpr ApiKey kApiKey = ApiKey::kProduce;
  static constexpr MessageVersions kVersions{0, 11};

  struct BatchIndexAndErrorMessage {
    int32_t batch_index = 0;
    std::optional<std::string> batch_index_error_message;  // nullable

    template <class Io>
    void serde(Io& io) {
      io.field("batch_index", batch_index);
      io.field("batch_index_error_message", batch_index_error_message);
    }
  };

  struct PartitionResponse {
    int32_t index = 0;
    int16_t error_code = 0;
    int64_t base_offset = 0;
    int64_t log_append_time_ms = -1;  // v2+; -1 under CreateTime
    int64_t log_start_offset = -1;    // v5+
    std::vector<BatchIndexAndErrorMessage> record_errors;  // v8+
    std::optional<std::string> error_message;              // v8+, nullable
    std::optional<LeaderIdAndEpoch> current_leader;        // tag 0 (v10+), on NOT_LEADER_OR_FOLLOWER

    template <class Io>
    void serde(Io& io) {
      io.field("index", index);
      io.field("error_code", error_code);
      io.field("base_offset", base_offset);
      io.field("log_append_time_ms", log_append_time_ms, {.since = 2});
      io.field("log_start_offset", log_start_offset, {.since = 5});
      io.field("record_errors", record_errors, {.since = 8});
      io.field("error_message", error_message, {.since = 8});
      io.tagged("current_leader", current_leader, 0, {.since = 10});
    }
  };

  struct TopicResponse {
    std::string name;
    SmallArray<PartitionResponse> partition_responses;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("partition_responses", partition_responses);
    }
  };

  std::vector<TopicResponse> responses;
  int32_t throttle_time_ms = 0;                              // v1+
  std::optional<std::vector<NodeEndpoint>> node_endpoints;  // tag 0 (v10+): the leaders named above

  template <class Io>
  void serde(Io& io) {
    io.field("responses", responses);
    io.field("throttle_time_ms", throttle_time_ms, {.since = 1});
    io.tagged("node_endpoints", node_endpoints, 0, {.since = 10});
  }
};

}  // namespace sluice::protocol
