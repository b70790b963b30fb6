// __consumer_offsets is protected (issue 20 item 4): only the group coordinator creates it, nobody deletes it, and
// no alteration leaves it anything but compacted; and Kafka's topic name rules (".", "..", 249 characters) at the
// API. Single node here; cluster mode in cluster_limits_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "core/group/coordinator.h"
#include "core/group/records.h"
#include "core/protocol/messages/alter_configs.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/metadata.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/fetch_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::AlterConfigsRequest;
using protocol::AlterConfigsResponse;
using protocol::CreateTopicsResponse;
using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

constexpr int16_t kInvalidTopic = 17;
constexpr int16_t kInvalidConfig = 40;
constexpr int16_t kInvalidRequest = 42;
const std::string kOffsets(group::kOffsetsTopic);

void make_offsets_topic(Env env, Broker& broker) {
  on_broker(env, broker, [&] {
    const Status made = broker.groups().ensure_offsets_topic();
    ASSERT_TRUE(made.ok()) << made.to_string();
  });
  ASSERT_NE(broker.topics().find(kOffsets), nullptr);
}

TEST(InternalTopics, OnlyTheCoordinatorCreatesTheOffsetsTopic) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    for (bool validate_only : {true, false}) {
      const CreateTopicsResponse response =
          create_topics(client, {new_topic(kOffsets, 3, {{"cleanup.policy", "delete"}})}, 7, validate_only);
      ASSERT_EQ(response.topics.size(), 1u);
      EXPECT_EQ(response.topics[0].error_code, kInvalidRequest);
      EXPECT_NE(response.topics[0].error_message.value_or("").find("prohibited"), std::string::npos);
    }
    EXPECT_EQ(broker.topics().find(kOffsets), nullptr) << "nothing was made";
    make_offsets_topic(env, broker);
    const TopicInfo* offsets = broker.topics().find(kOffsets);
    EXPECT_EQ(offsets->partitions, broker.config().group.offsets_topic_partitions) << "the coordinator's settings";
    EXPECT_TRUE(offsets->config.compacted());
    EXPECT_FALSE(offsets->config.retention_enabled());
    // Once it exists, naming it is still refused the same way.
    EXPECT_EQ(create_topics(client, {new_topic(kOffsets)}).topics.at(0).error_code, kInvalidRequest);
  }));
}

TEST(InternalTopics, TheOffsetsTopicIsNotDeletedByNameOrById) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    make_offsets_topic(env, broker);
    create_topic(client, "ordinary");
    for (int16_t version : {1, 5}) {
      DeleteTopicsRequest request;
      request.topic_names = {kOffsets};
      auto response = client.call<DeleteTopicsResponse>(request, version);
      ASSERT_TRUE(response.ok()) << response.status().to_string();
      ASSERT_EQ(response->responses.size(), 1u);
      EXPECT_EQ(response->responses[0].error_code, kInvalidRequest) << "v" << version;
    }
    DeleteTopicsRequest by_id;
    by_id.topics.push_back({std::nullopt, id_of(broker, kOffsets)});
    by_id.topics.push_back({std::nullopt, id_of(broker, "ordinary")});
    auto response = client.call<DeleteTopicsResponse>(by_id, 6);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    ASSERT_EQ(response->responses.size(), 2u);
    EXPECT_EQ(response->responses[0].error_code, kInvalidRequest);
    EXPECT_NE(response->responses[0].error_message.value_or("").find("prohibited"), std::string::npos);
    EXPECT_EQ(response->responses[1].error_code, 0) << "the other topic of the request goes";
    EXPECT_NE(broker.topics().find(kOffsets), nullptr);
    EXPECT_EQ(broker.topics().find("ordinary"), nullptr);
  }));
}

TEST(InternalTopics, TheOffsetsTopicStaysCompacted) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    make_offsets_topic(env, broker);
    using Op = protocol::IncrementalAlterConfigsRequest::Config;
    for (const char* policy : {"delete", "compact,delete", ""}) {
      const auto answer = alter_incrementally(client, kOffsets, {Op{"cleanup.policy", 0, policy}});
      EXPECT_EQ(answer.error_code, kInvalidConfig) << "'" << policy << "'";
      EXPECT_NE(answer.error_message.value_or("").find("cleanup.policy"), std::string::npos);
    }
    EXPECT_EQ(alter_incrementally(client, kOffsets, {Op{"cleanup.policy", 1, std::nullopt}}).error_code,
              kInvalidConfig)
        << "deleting the override falls back to the broker default, delete";
    EXPECT_EQ(alter_incrementally(client, kOffsets, {Op{"cleanup.policy", 2, "delete"}}).error_code, kInvalidConfig)
        << "APPEND";
    // AlterConfigs replaces every override: leaving cleanup.policy out would reset it.
    AlterConfigsRequest replace;
    replace.resources.push_back(
        {static_cast<int8_t>(protocol::ConfigResourceType::kTopic), kOffsets, {{"segment.bytes", "1048576"}}});
    auto replaced = client.call<AlterConfigsResponse>(replace, 1);
    ASSERT_TRUE(replaced.ok());
    EXPECT_EQ(replaced->responses.at(0).error_code, kInvalidConfig);
    EXPECT_TRUE(broker.topics().find(kOffsets)->config.compacted());
    EXPECT_FALSE(broker.topics().find(kOffsets)->config.retention_enabled());
    // Safe changes go through, and so does the same change on an ordinary topic.
    EXPECT_EQ(alter_incrementally(client, kOffsets, {Op{"segment.bytes", 0, "1048576"}}).error_code, 0);
    EXPECT_EQ(alter_incrementally(client, kOffsets, {Op{"cleanup.policy", 0, "compact"}}).error_code, 0);
    create_topic(client, "ordinary", 1, {{"cleanup.policy", "compact"}});
    EXPECT_EQ(alter_incrementally(client, "ordinary", {Op{"cleanup.policy", 0, "delete"}}).error_code, 0);
  }));
}

// Topic.validate: "." and "..", and names over 249 characters, are INVALID_TOPIC_EXCEPTION (17) wherever a name
// would make a topic: CreateTopics and Metadata's auto-creation.
TEST(InternalTopics, DotDotDotAndNamesOver249CharactersAreRefused) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    const std::string longest(249, 'x');
    const std::vector<std::string> refused = {".", "..", std::string(250, 'x'), std::string(1000, 'y')};
    for (const std::string& name : refused) {
      const CreateTopicsResponse response = create_topics(client, {new_topic(name)});
      ASSERT_EQ(response.topics.size(), 1u);
      EXPECT_EQ(response.topics[0].error_code, kInvalidTopic) << name.size() << " characters: " << name.substr(0, 9);
    }
    MetadataRequest request;
    for (const std::string& name : refused) request.topics->push_back({.name = name});
    request.allow_auto_topic_creation = true;
    auto metadata = client.call<MetadataResponse>(request, 9);
    ASSERT_TRUE(metadata.ok());
    ASSERT_EQ(metadata->topics.size(), refused.size());
    for (const auto& topic : metadata->topics) EXPECT_EQ(topic.error_code, kInvalidTopic);
    EXPECT_TRUE(broker.topics().all().empty());
    create_topic(client, longest);
    create_topic(client, "...");  // only "." and ".." are reserved
    EXPECT_EQ(broker.topics().all().size(), 2u);
  }));
}

}  // namespace
}  // namespace sluice::kafka
