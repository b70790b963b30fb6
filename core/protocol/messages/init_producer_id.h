// InitProducerId (key 22), v0-5; v2+ is flexible. Schema: apache/kafka 3.9 InitProducerIdRequest.json /
// InitProducerIdResponse.json. v3 adds the producer id and epoch to the request; v4 and v5 change only which
// errors a transactional producer may get (PRODUCER_FENCED, TRANSACTION_ABORTABLE).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct InitProducerIdRequest {
  static constexpr ApiKey kApiKey = ApiKey::kInitProducerId;
  static constexpr MessageVersions kVersions{0, 5};

  std::optional<std::string> transactional_id;  // null: an idempotent, non-transactional producer
  int32_t transaction_timeout_ms = 0;
  int64_t producer_id = -1;    // v3+: the id to bump the epoch of (KIP-360)
  int16_t producer_epoch = -1;  // v3+

  template <class Io>
  void serde(Io& io) {
    io.field("transactional_id", transactional_id);
    io.field("transaction_timeout_ms", transaction_timeout_ms);
    io.field("producer_id", producer_id, {.since = 3});
    io.field("producer_epoch", producer_epoch, {.since = 3});
  }
};

struct InitProducerIdResponse {
  static constexpr ApiKey kApiKey = ApiKey::kInitProducerId;
  static constexpr MessageVersions kVersions{0, 5};

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = 0;

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms);
    io.field("error_code", error_code);
    io.field("producer_id", producer_id);
    io.field("producer_epoch", producer_epoch);
  }
};

}  // namespace sluice::protocol
