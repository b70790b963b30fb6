// Metadata (3) across its versions, as old and new clients use it: v0's empty list (every topic), v0-3's
// unconditional auto-creation, v4's opt-out, topic ids from v10, lookups by id in v12 (refused in v10 and v11), and
// the authorized operations of v8+.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/protocol/messages/metadata.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::Uuid;

MetadataRequest named(std::vector<std::string> names, bool allow_auto_create = true) {
  MetadataRequest request;
  request.topics.emplace();
  for (std::string& name : names) request.topics->push_back({.name = std::move(name)});
  request.allow_auto_topic_creation = allow_auto_create;
  return request;
}

MetadataRequest by_id(std::vector<Uuid> ids) {
  MetadataRequest request;
  request.topics.emplace();
  for (const Uuid& id : ids) request.topics->push_back({.topic_id = id, .name = std::nullopt});
  return request;
}

MetadataResponse call(KafkaClient& client, const MetadataRequest& request, int16_t version) {
  auto response = client.call<MetadataResponse>(request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  return response.ok() ? *response : MetadataResponse{};
}

std::vector<std::string> names_of(const MetadataResponse& response) {
  std::vector<std::string> names;
  for (const MetadataResponse::Topic& topic : response.topics) names.push_back(topic.name.value_or("<null>"));
  std::sort(names.begin(), names.end());
  return names;
}

TEST(MetadataHandler, V0EmptyListMeansEveryTopicAndLaterVersionsNone) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "a", 1);
    create_topic(env, broker, "b", 2);
    const MetadataResponse v0 = call(client, named({}), 0);
    EXPECT_EQ(names_of(v0), (std::vector<std::string>{"a", "b"})) << "v0: an empty list is every topic";
    ASSERT_EQ(v0.brokers.size(), 1u);
    EXPECT_EQ(v0.brokers[0].node_id, 1);
    for (int16_t version = 1; version <= 12; ++version) {
      EXPECT_TRUE(call(client, named({}), version).topics.empty()) << "v" << version << ": an empty list is none";
      MetadataRequest all;
      all.topics = std::nullopt;
      EXPECT_EQ(names_of(call(client, all, version)), (std::vector<std::string>{"a", "b"})) << "v" << version;
    }
  }));
}

TEST(MetadataHandler, V0ToV3AlwaysMayCreateAndV4AsksFirst) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    for (int16_t version = 0; version <= 3; ++version) {
      const std::string name = "old" + std::to_string(version);
      const MetadataResponse response = call(client, named({name}, /*allow_auto_create=*/false), version);
      ASSERT_EQ(response.topics.size(), 1u);
      EXPECT_EQ(response.topics[0].error_code, 0) << "v" << version << " has no opt-out field";
      EXPECT_EQ(response.topics[0].partitions.size(), 1u);
      EXPECT_NE(broker.topics().find(name), nullptr);
    }
    const MetadataResponse refused = call(client, named({"new4"}, false), 4);
    ASSERT_EQ(refused.topics.size(), 1u);
    EXPECT_EQ(refused.topics[0].error_code, 3);
    EXPECT_EQ(broker.topics().find("new4"), nullptr);
    EXPECT_EQ(call(client, named({"new4"}, true), 4).topics[0].error_code, 0);
  }));
}

TEST(MetadataHandler, V10AndLaterCarryEachTopicsId) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    const Uuid id = id_of(broker, "t");
    ASSERT_FALSE(id.is_zero());
    EXPECT_TRUE(call(client, named({"t"}), 9).topics[0].topic_id.is_zero()) << "no ids before v10";
    for (int16_t version = 10; version <= 12; ++version) {
      const MetadataResponse response = call(client, named({"t", "missing"}, false), version);
      ASSERT_EQ(response.topics.size(), 2u);
      EXPECT_EQ(response.topics[0].topic_id, id) << "v" << version;
      EXPECT_EQ(response.topics[1].error_code, 3);
      EXPECT_TRUE(response.topics[1].topic_id.is_zero()) << "an unknown name has no id";
    }
  }));
}

TEST(MetadataHandler, V12LooksTopicsUpByIdAndNeverCreates) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 3);
    const Uuid id = id_of(broker, "t");
    Uuid unknown = id;
    unknown.bytes[0] ^= 0xff;
    MetadataRequest request = by_id({unknown, id});
    request.topics->push_back({.name = "ignored"});  // a lookup by id ignores names
    const MetadataResponse response = call(client, request, 12);
    ASSERT_EQ(response.topics.size(), 2u);
    EXPECT_EQ(response.topics[0].error_code, 100) << "UNKNOWN_TOPIC_ID";
    EXPECT_FALSE(response.topics[0].name.has_value()) << "null, as Kafka answers an id it does not know";
    EXPECT_EQ(response.topics[0].topic_id, unknown);
    EXPECT_TRUE(response.topics[0].partitions.empty());
    EXPECT_EQ(response.topics[1].error_code, 0);
    EXPECT_EQ(response.topics[1].name, "t");
    EXPECT_EQ(response.topics[1].topic_id, id);
    EXPECT_EQ(response.topics[1].partitions.size(), 3u);
    EXPECT_EQ(broker.topics().find("ignored"), nullptr);
    EXPECT_EQ(broker.topics().all().size(), 1u);
  }));
}

TEST(MetadataHandler, V10AndV11RefuseLookupsById) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    const Uuid id = id_of(broker, "t");
    for (int16_t version : {10, 11}) {
      MetadataRequest with_id = named({"t", "u"});
      (*with_id.topics)[1].topic_id = id;
      const MetadataResponse refused = call(client, with_id, version);
      ASSERT_EQ(refused.topics.size(), 2u) << "v" << version;
      EXPECT_EQ(refused.topics[0].error_code, 42) << "INVALID_REQUEST for every topic";
      EXPECT_EQ(refused.topics[1].error_code, 42);
      EXPECT_EQ(refused.topics[1].name, "u");
      EXPECT_TRUE(refused.brokers.empty()) << "Kafka's error response lists no brokers";
      const MetadataResponse null_name = call(client, by_id({Uuid{}}), version);
      ASSERT_EQ(null_name.topics.size(), 1u);
      EXPECT_EQ(null_name.topics[0].error_code, 42);
      EXPECT_EQ(null_name.topics[0].name, "") << "a null name cannot be answered before v12";
    }
    EXPECT_EQ(broker.topics().find("u"), nullptr);
  }));
}

TEST(MetadataHandler, AuthorizedOperationsAreEveryOperationWhenAsked) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    // Bits by AclOperation code. Topic: READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS;
    // cluster: CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE.
    constexpr int32_t kTopic = 0xdf8;
    constexpr int32_t kCluster = 0x1fa0;
    MetadataRequest request = named({"t"});
    const MetadataResponse plain = call(client, request, 8);
    EXPECT_EQ(plain.topics[0].topic_authorized_operations, protocol::kAuthorizedOperationsOmitted);
    EXPECT_EQ(plain.cluster_authorized_operations, protocol::kAuthorizedOperationsOmitted);
    request.include_topic_authorized_operations = true;
    request.include_cluster_authorized_operations = true;
    for (int16_t version = 8; version <= 12; ++version) {
      const MetadataResponse asked = call(client, request, version);
      EXPECT_EQ(asked.topics[0].topic_authorized_operations, kTopic) << "v" << version;
      EXPECT_EQ(asked.cluster_authorized_operations, version <= 10 ? kCluster : protocol::kAuthorizedOperationsOmitted)
          << "v" << version << ": DescribeCluster's from v11";
    }
    MetadataRequest unknown = by_id({Uuid{{1}}});
    unknown.include_topic_authorized_operations = true;
    EXPECT_EQ(call(client, unknown, 12).topics[0].topic_authorized_operations, protocol::kAuthorizedOperationsOmitted)
        << "none for an id Kafka does not know";
  }));
}

}  // namespace
}  // namespace sluice::kafka
