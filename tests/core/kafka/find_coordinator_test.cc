// FindCoordinator: this node coordinates every group; single keys (v0-3) and batched keys (v4-6); no share
// coordinator (v6's key type 2).
#include <gtest/gtest.h>

#include "core/protocol/messages/find_coordinator.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

TEST(FindCoordinator, EveryVersionNamesThisNodeForAGroup) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    for (int16_t version = 0; version <= 3; ++version) {
      FindCoordinatorRequest request;
      request.key = "my-group";
      auto response = client.call<FindCoordinatorResponse>(request, version);
      ASSERT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
      EXPECT_EQ(response->error_code, 0);
      EXPECT_EQ(response->node_id, 1);
      EXPECT_EQ(response->host, "n1");
      EXPECT_EQ(response->port, 9092);
    }
    for (int16_t version = 4; version <= 6; ++version) {
      FindCoordinatorRequest batched;
      batched.coordinator_keys = {"a", "b"};
      auto response = client.call<FindCoordinatorResponse>(batched, version);
      ASSERT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
      ASSERT_EQ(response->coordinators.size(), 2u);
      EXPECT_EQ(response->coordinators[1].key, "b");
      EXPECT_EQ(response->coordinators[1].node_id, 1);
      EXPECT_EQ(response->coordinators[1].error_code, 0);
    }
  }));
}

// Kafka 3.9 refuses the share key type below v6 and has no share coordinator to name from v6.
TEST(FindCoordinator, ShareKeysHaveNoCoordinator) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    FindCoordinatorRequest request;
    request.key_type = protocol::kCoordinatorShare;
    request.coordinator_keys = {"share-group:topic-id:0"};
    auto v6 = client.call<FindCoordinatorResponse>(request, 6);
    ASSERT_TRUE(v6.ok()) << v6.status().to_string();
    ASSERT_EQ(v6->coordinators.size(), 1u);
    EXPECT_EQ(v6->coordinators[0].error_code, 15) << "COORDINATOR_NOT_AVAILABLE";
    EXPECT_EQ(v6->coordinators[0].node_id, -1);
    auto v5 = client.call<FindCoordinatorResponse>(request, 5);
    ASSERT_TRUE(v5.ok()) << v5.status().to_string();
    EXPECT_EQ(v5->coordinators.at(0).error_code, 42) << "INVALID_REQUEST";
  }));
}

TEST(FindCoordinator, TransactionAndUnknownKeyTypesGetErrors) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    FindCoordinatorRequest request;
    request.key = "txn";
    request.key_type = protocol::kCoordinatorTransaction;
    auto transaction = client.call<FindCoordinatorResponse>(request, 2);
    ASSERT_TRUE(transaction.ok());
    EXPECT_EQ(transaction->error_code, 15) << "COORDINATOR_NOT_AVAILABLE";
    EXPECT_EQ(transaction->node_id, -1);
    request.key_type = 7;
    auto unknown = client.call<FindCoordinatorResponse>(request, 2);
    ASSERT_TRUE(unknown.ok());
    EXPECT_EQ(unknown->error_code, 42) << "INVALID_REQUEST";
  }));
}

TEST(FindCoordinatorCodec, RoundTripsEveryVersion) {
  for (int16_t version = 0; version <= 6; ++version) {
    FindCoordinatorResponse response;
    if (version >= 4) {
      response.coordinators.push_back({"g", 1, "h", 9092, 0, std::nullopt});
    } else {
      response.node_id = 1;
      response.host = "h";
      response.port = 9092;
    }
    Bytes bytes;
    ASSERT_TRUE(protocol::encode_message(response, version, &bytes).ok()) << version;
    auto decoded = protocol::decode_message<FindCoordinatorResponse>(bytes, version);
    ASSERT_TRUE(decoded.ok()) << version << ": " << decoded.status().to_string();
    if (version >= 4) {
      ASSERT_EQ(decoded->coordinators.size(), 1u);
      EXPECT_EQ(decoded->coordinators[0].port, 9092);
    } else {
      EXPECT_EQ(decoded->host, "h");
    }
  }
}

}  // namespace
}  // namespace sluice::kafka
