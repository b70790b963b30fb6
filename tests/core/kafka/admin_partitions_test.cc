// CreatePartitions through a simulated broker: partitions added to a topic on one node take records at once and
// keep the topic's config; Kafka's refusals each with its code; validate_only adds nothing; every version.
#include <gtest/gtest.h>

#include "core/protocol/messages/create_partitions.h"
#include "core/protocol/messages/metadata.h"
#include "core/group/coordinator.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/fetch_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;

CreatePartitionsRequest::Topic grow(const std::string& name, int32_t count) {
  CreatePartitionsRequest::Topic topic;
  topic.name = name;
  topic.count = count;
  return topic;
}

CreatePartitionsResponse create_partitions(KafkaClient& client, std::vector<CreatePartitionsRequest::Topic> topics,
                                           int16_t version = 3, bool validate_only = false) {
  CreatePartitionsRequest request;
  request.topics = std::move(topics);
  request.timeout_ms = 5000;
  request.validate_only = validate_only;
  auto response = client.call<CreatePartitionsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  return response.ok() ? *response : CreatePartitionsResponse{};
}

// The one result for `name`; a failed test when it is absent.
CreatePartitionsResponse::Result result_for(const CreatePartitionsResponse& response, const std::string& name) {
  for (const auto& result : response.results) {
    if (result.name == name) return result;
  }
  ADD_FAILURE() << "no result for " << name;
  return {};
}

TEST(AdminCreatePartitions, AddedPartitionsKeepTheTopicsConfigAndTakeRecords) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "orders", 2, {{"retention.ms", "3600000"}});
    append_records(broker, {"orders", 0}, 3);
    const protocol::Uuid id = broker.topics().find("orders")->id;

    const CreatePartitionsResponse response = create_partitions(client, {grow("orders", 5)});
    ASSERT_EQ(response.results.size(), 1u);
    EXPECT_EQ(response.results[0].name, "orders");
    EXPECT_EQ(response.results[0].error_code, 0) << response.results[0].error_message.value_or("");
    EXPECT_FALSE(response.results[0].error_message.has_value());

    const TopicInfo* info = broker.topics().find("orders");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->partitions, 5);
    EXPECT_EQ(info->id, id) << "the topic keeps its id";
    for (int32_t p = 2; p < 5; ++p) {
      ASSERT_NE(broker.logs().find({"orders", p}), nullptr) << p;
      EXPECT_EQ(broker.logs().topic_config({"orders", p})->retention_ms, 3600000) << p;
    }
    EXPECT_EQ(broker.logs().find({"orders", 0})->log_end_offset(), 3) << "existing partitions keep their records";
    append_records(broker, {"orders", 4}, 2);
    EXPECT_EQ(broker.logs().find({"orders", 4})->log_end_offset(), 2);

    protocol::MetadataRequest request;
    request.topics = std::vector<protocol::MetadataRequest::Topic>{{protocol::Uuid::zero(), "orders"}};
    auto metadata = client.call<protocol::MetadataResponse>(request, 12);
    ASSERT_TRUE(metadata.ok());
    ASSERT_EQ(metadata->topics.size(), 1u);
    EXPECT_EQ(metadata->topics[0].partitions.size(), 5u);
  }));
}

TEST(AdminCreatePartitions, EveryRefusalHasKafkasCodeAndAMessage) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 3);
    create_topic(client, "u", 1);
    const auto code = [&](CreatePartitionsRequest::Topic topic) {
      const CreatePartitionsResponse response = create_partitions(client, {topic});
      EXPECT_EQ(response.results.size(), 1u);
      if (response.results.empty()) return int16_t{-1};
      if (response.results[0].error_code != 0) {
        EXPECT_TRUE(response.results[0].error_message.has_value()) << topic.name;
      }
      return response.results[0].error_code;
    };
    EXPECT_EQ(code(grow("missing", 4)), 3) << "UNKNOWN_TOPIC_OR_PARTITION";
    EXPECT_EQ(code(grow("t", 3)), 37) << "INVALID_PARTITIONS: already has 3";
    EXPECT_EQ(code(grow("t", 2)), 37) << "INVALID_PARTITIONS: not an increase";

    CreatePartitionsRequest::Topic short_assignment = grow("t", 5);
    short_assignment.assignments = std::vector<CreatePartitionsRequest::Assignment>{{{1}}};
    EXPECT_EQ(code(short_assignment), 39) << "INVALID_REPLICA_ASSIGNMENT: one list for two partitions";
    CreatePartitionsRequest::Topic other_node = grow("t", 4);
    other_node.assignments = std::vector<CreatePartitionsRequest::Assignment>{{{7}}};
    EXPECT_EQ(code(other_node), 39) << "broker 7 is not registered";
    CreatePartitionsRequest::Topic twice = grow("t", 4);
    twice.assignments = std::vector<CreatePartitionsRequest::Assignment>{{{1, 1}}};
    EXPECT_EQ(code(twice), 39) << "a broker named twice";
    CreatePartitionsRequest::Topic empty = grow("t", 4);
    empty.assignments = std::vector<CreatePartitionsRequest::Assignment>{{{}}};
    EXPECT_EQ(code(empty), 39) << "an empty replica list";
    EXPECT_EQ(broker.topics().find("t")->partitions, 3) << "no refusal added anything";
    EXPECT_EQ(broker.logs().find({"t", 3}), nullptr);

    // A name given twice is answered once, INVALID_REQUEST, and the other topics still grow.
    const CreatePartitionsResponse response = create_partitions(client, {grow("t", 4), grow("u", 2), grow("t", 5)});
    ASSERT_EQ(response.results.size(), 2u);
    EXPECT_EQ(result_for(response, "t").error_code, 42) << "INVALID_REQUEST";
    EXPECT_EQ(result_for(response, "t").error_message, "Duplicate topic name.");
    EXPECT_EQ(result_for(response, "u").error_code, 0);
    EXPECT_EQ(broker.topics().find("t")->partitions, 3);
    EXPECT_EQ(broker.topics().find("u")->partitions, 2);

    CreatePartitionsRequest::Topic manual = grow("u", 3);
    manual.assignments = std::vector<CreatePartitionsRequest::Assignment>{{{1}}};
    EXPECT_EQ(code(manual), 0) << "this node is broker 1";
    EXPECT_EQ(broker.topics().find("u")->partitions, 3);
  }));
}

TEST(AdminCreatePartitions, TheOffsetsTopicKeepsItsCount) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    on_broker(env, broker, [&] { ASSERT_TRUE(broker.groups().ensure_offsets_topic().ok()); });  // only it may
    const int32_t count = broker.config().group.offsets_topic_partitions;
    const CreatePartitionsResponse response = create_partitions(client, {grow("__consumer_offsets", count + 10)});
    ASSERT_EQ(response.results.size(), 1u);
    EXPECT_EQ(response.results[0].error_code, 42) << "INVALID_REQUEST: groups map to its partitions by their count";
    EXPECT_EQ(broker.topics().find("__consumer_offsets")->partitions, count);
  }));
}

TEST(AdminCreatePartitions, ValidateOnlyChecksAndAddsNothing) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 1);
    CreatePartitionsResponse response = create_partitions(client, {grow("t", 4)}, 3, true);
    ASSERT_EQ(response.results.size(), 1u);
    EXPECT_EQ(response.results[0].error_code, 0);
    EXPECT_EQ(broker.topics().find("t")->partitions, 1);
    EXPECT_EQ(broker.logs().find({"t", 1}), nullptr);
    response = create_partitions(client, {grow("t", 1)}, 3, true);
    EXPECT_EQ(response.results[0].error_code, 37) << "validate_only still refuses";
  }));
}

TEST(AdminCreatePartitions, EveryVersionFromV0) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 1);
    for (int16_t version = 0; version <= 3; ++version) {
      const int32_t count = 2 + version;
      const CreatePartitionsResponse response = create_partitions(client, {grow("t", count)}, version);
      ASSERT_EQ(response.results.size(), 1u) << version;
      EXPECT_EQ(response.results[0].error_code, 0) << version;
      EXPECT_EQ(broker.topics().find("t")->partitions, count) << version;
    }
  }));
}

}  // namespace
}  // namespace sluice::kafka
