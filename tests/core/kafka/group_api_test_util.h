// Helpers for the group API tests through a connection (group_membership_test.cc, group_versions_test.cc): a broker
// config for quick rebalances and a consumer's JoinGroup request.
#pragma once

#include <string>

#include "core/kafka/broker_config.h"
#include "core/protocol/messages/join_group.h"

namespace sluice::kafka::testing {

// No initial rebalance delay; 3 offsets partitions and 2 partitions per auto-created topic.
inline BrokerConfig group_config() {
  BrokerConfig config;
  config.num_partitions = 2;
  config.group.initial_rebalance_delay_ms = 0;
  config.group.offsets_topic_partitions = 3;
  return config;
}

// Group "g", session timeout 10 s, rebalance timeout 30 s, the "range" protocol subscribing to "orders".
inline protocol::JoinGroupRequest join_request(const std::string& member_id) {
  protocol::JoinGroupRequest request;
  request.group_id = "g";
  request.session_timeout_ms = 10000;
  request.rebalance_timeout_ms = 30000;
  request.member_id = member_id;
  request.protocol_type = "consumer";
  request.protocols = {{"range", Bytes{0, 0, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0xff, 0xff, 0xff, 0xff}}};
  return request;
}

}  // namespace sluice::kafka::testing
