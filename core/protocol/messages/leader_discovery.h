// KIP-951 leader discovery, shared by Produce (v10+) and Fetch (v12+/v16+) responses: a partition answered
// NOT_LEADER_OR_FOLLOWER (or, in Fetch, FENCED_LEADER_EPOCH) names its current leader, and the response lists that
// leader's endpoint, so the client can move without a Metadata round trip. Schemas: apache/kafka 3.9
// ProduceResponse.json and FetchResponse.json (LeaderIdAndEpoch, NodeEndpoint).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/protocol/serde.h"

namespace sluice::protocol {

struct LeaderIdAndEpoch {
  int32_t leader_id = -1;
  int32_t leader_epoch = -1;

  template <class Io>
  void serde(Io& io) {
    io.field("leader_id", leader_id);
    io.field("leader_epoch", leader_epoch);
  }
};

struct NodeEndpoint {
  int32_t node_id = 0;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;  // nullable

  template <class Io>
  void serde(Io& io) {
    io.field("node_id", node_id);
    io.field("host", host);
    io.field("port", port);
    io.field("rack", rack);
  }
};

}  // namespace sluice::protocol
