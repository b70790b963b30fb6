// The broker's connection handling and the first two APIs, in the simulator.
#include <gtest/gtest.h>

#include "core/kafka/dispatch.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/metadata.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ApiVersionsRequest;
using protocol::ApiVersionsResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

TEST(Broker, ApiVersionsAdvertisesExactlyTheHandlerTable) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    for (int16_t version = 0; version <= 4; ++version) {
      auto response = client.call<ApiVersionsResponse>(ApiVersionsRequest{}, version);
      ASSERT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
      EXPECT_EQ(response->error_code, 0);
      ASSERT_EQ(response->api_keys.size(), handler_table().size());
      for (size_t i = 0; i < response->api_keys.size(); ++i) {
        EXPECT_EQ(response->api_keys[i].api_key, static_cast<int16_t>(handler_table()[i].key));
      }
    }
  }));
}

// What a client newer than the broker sends first: ApiVersions v9, its body in v3's layout (encode_message refuses
// a version ApiVersionsRequest does not describe, so the body is written by serde directly).
Bytes future_api_versions_frame() {
  Bytes frame;
  const size_t begin = protocol::begin_frame(&frame);
  EXPECT_TRUE(protocol::encode_request_header({protocol::ApiKey::kApiVersions, 9, 1, "test-client"}, &frame).ok());
  EXPECT_TRUE(protocol::encode(ApiVersionsRequest{}, 3, /*flexible=*/true, &frame).ok());
  protocol::end_frame(&frame, begin);
  return frame;
}

// kafka-protocol.md §1: an unsupported ApiVersions version is answered with error 35 in v0 layout, not closed.
TEST(Broker, AnUnsupportedApiVersionsVersionGetsError35AndTheConnectionStaysOpen) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    ASSERT_TRUE(client.send_raw(future_api_versions_frame()).ok());
    auto answer = client.receive<ApiVersionsResponse>(protocol::ApiKey::kApiVersions, 0);
    ASSERT_TRUE(answer.ok()) << answer.status().to_string();
    EXPECT_EQ(answer->error_code, 35);
    ASSERT_EQ(answer->api_keys.size(), 1u);
    EXPECT_EQ(answer->api_keys[0].max_version, 4);
    auto retry = client.call<ApiVersionsResponse>(ApiVersionsRequest{}, 0);
    ASSERT_TRUE(retry.ok()) << retry.status().to_string();
    EXPECT_EQ(retry->error_code, 0);
  }));
}

TEST(Broker, MetadataAutoCreatesNamedTopicsAndListsThemAll) {
  BrokerHarness harness;
  harness.config().num_partitions = 3;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    for (int16_t version : {0, 1, 4, 9}) {
      MetadataRequest request;
      request.topics = std::vector<MetadataRequest::Topic>{{.name = "orders"}};
      auto response = client.call<MetadataResponse>(request, version);
      ASSERT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
      ASSERT_EQ(response->brokers.size(), 1u);
      EXPECT_EQ(response->brokers[0].host, "n1");
      EXPECT_EQ(response->brokers[0].port, 9092);
      ASSERT_EQ(response->topics.size(), 1u);
      EXPECT_EQ(response->topics[0].error_code, 0);
      EXPECT_EQ(response->topics[0].partitions.size(), 3u);
      EXPECT_EQ(response->topics[0].partitions[2].leader_id, 1);
    }
    MetadataRequest all;
    all.topics = std::nullopt;
    auto listed = client.call<MetadataResponse>(all, 9);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->topics.size(), 1u);
    EXPECT_NE(broker.topics().find("orders"), nullptr);
  }));
}

TEST(Broker, MetadataForAnInvalidOrUncreatableTopicAnswersWithItsError) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    MetadataRequest request;
    request.topics = std::vector<MetadataRequest::Topic>{{.name = "bad/name"}, {.name = "nope"}};
    request.allow_auto_topic_creation = false;
    auto response = client.call<MetadataResponse>(request, 9);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    ASSERT_EQ(response->topics.size(), 2u);
    EXPECT_EQ(response->topics[0].error_code, 17) << "not created, but Kafka still validates the name";
    EXPECT_EQ(response->topics[1].error_code, 3) << "not created, so unknown";
    request.allow_auto_topic_creation = true;
    auto created = client.call<MetadataResponse>(request, 9);
    ASSERT_TRUE(created.ok());
    EXPECT_EQ(created->topics[0].error_code, 17) << "INVALID_TOPIC_EXCEPTION";
    EXPECT_EQ(created->topics[1].error_code, 0);
    EXPECT_EQ(broker.topics().all().size(), 1u);
  }));
}

TEST(Broker, AnUnknownApiKeyClosesTheConnectionAndOthersCarryOn) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker&) {
    Bytes frame = {0, 0, 0, 10, 0x27, 0x0f, 0, 0, 0, 0, 0, 1, 0xff, 0xff};  // key 9999
    ASSERT_TRUE(client.send_raw(frame).ok());
    auto answer = client.receive_frame();
    EXPECT_TRUE(!answer.ok() || !answer->has_value()) << "closed without an answer";
    KafkaClient other = BrokerHarness::connect(env);
    EXPECT_TRUE(other.call<ApiVersionsResponse>(ApiVersionsRequest{}, 3).ok());
  }));
}

TEST(Broker, AnOversizeFrameIsRefusedBeforeAllocation) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker&) {
    ASSERT_TRUE(client.send_raw(Bytes{0x7f, 0xff, 0xff, 0xff}).ok());
    auto answer = client.receive_frame();
    EXPECT_TRUE(!answer.ok() || !answer->has_value());
    KafkaClient other = BrokerHarness::connect(env);
    EXPECT_TRUE(other.call<ApiVersionsResponse>(ApiVersionsRequest{}, 0).ok());
  }));
}

TEST(Broker, PipelinedRequestsAreAnsweredInOrder) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    MetadataRequest request;
    request.topics = std::vector<MetadataRequest::Topic>{{.name = "t"}};
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.send(request, 9).ok());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(client.receive<MetadataResponse>(protocol::ApiKey::kMetadata, 9).ok());
      EXPECT_EQ(client.last_correlation_id(), i + 1);
    }
  }));
}

}  // namespace
}  // namespace sluice::kafka
