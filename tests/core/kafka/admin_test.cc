// CreateTopics, DeleteTopics, DeleteRecords and DescribeCluster through a simulated broker: every error path of the
// handlers, validate_only, and what a creation or deletion leaves on disk.
#include <gtest/gtest.h>

#include "core/protocol/messages/delete_records.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_cluster.h"
#include "core/protocol/messages/metadata.h"
#include "tests/core/kafka/admin_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;
using protocol::DeleteRecordsRequest;
using protocol::DeleteRecordsResponse;
using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::DescribeClusterRequest;
using protocol::DescribeClusterResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::Uuid;

const CreateTopicsResponse::Config* created_config(const CreateTopicsResponse::Topic& topic, const std::string& name) {
  for (const auto& config : *topic.configs) {
    if (config.name == name) return &config;
  }
  return nullptr;
}

TEST(AdminCreateTopics, DefaultsApplyAndTheResponseCarriesIdCountAndConfigs) {
  BrokerHarness harness;
  harness.config().num_partitions = 3;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    CreateTopicsRequest::Topic topic = new_topic("orders", -1, {{"retention.ms", "3600000"}});
    topic.replication_factor = -1;
    const CreateTopicsResponse response = create_topics(client, {topic}, 7);
    ASSERT_EQ(response.topics.size(), 1u);
    const CreateTopicsResponse::Topic& created = response.topics[0];
    ASSERT_EQ(created.error_code, 0) << created.error_message.value_or("");
    EXPECT_FALSE(created.error_message.has_value());
    const TopicInfo* info = broker.topics().find("orders");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->partitions, 3);
    EXPECT_EQ(created.topic_id, info->id);
    EXPECT_FALSE(created.topic_id.is_zero());
    EXPECT_EQ(created.num_partitions, 3);
    EXPECT_EQ(created.replication_factor, 1);
    ASSERT_TRUE(created.configs.has_value());
    EXPECT_TRUE(std::is_sorted(created.configs->begin(), created.configs->end(),
                               [](const auto& a, const auto& b) { return a.name < b.name; }));
    const auto* retention = created_config(created, "retention.ms");
    ASSERT_NE(retention, nullptr);
    EXPECT_EQ(retention->value, "3600000");
    EXPECT_EQ(retention->config_source, 1) << "DYNAMIC_TOPIC_CONFIG";
    const auto* policy = created_config(created, "cleanup.policy");
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->value, "delete");
    EXPECT_EQ(policy->config_source, 5) << "DEFAULT_CONFIG";
    EXPECT_FALSE(policy->read_only);
    const auto* durability = created_config(created, "durability");
    ASSERT_NE(durability, nullptr);
    EXPECT_TRUE(durability->read_only);
    EXPECT_EQ(broker.logs().topic_config({"orders", 2})->retention_ms, 3600000);
  }));
}

TEST(AdminCreateTopics, ManualAssignmentOnThisNodeIsAccepted) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    CreateTopicsRequest::Topic topic = new_topic("manual", -1);
    topic.replication_factor = -1;
    topic.assignments = {{1, {1}}, {0, {1}}};
    const CreateTopicsResponse response = create_topics(client, {topic}, 5);
    ASSERT_EQ(response.topics[0].error_code, 0) << response.topics[0].error_message.value_or("");
    EXPECT_EQ(response.topics[0].num_partitions, 2);
    EXPECT_EQ(broker.topics().find("manual")->partitions, 2);
  }));
}

// Each topic of one request hits one refusal; none of them is created.
TEST(AdminCreateTopics, EveryRefusalHasKafkasCodeAndAMessage) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "exists");
    create_topic(client, "a.b");
    auto replicas = [](const std::string& name, int16_t factor) {
      CreateTopicsRequest::Topic t = new_topic(name);
      t.replication_factor = factor;
      return t;
    };
    auto manual = [](const std::string& name, std::vector<CreateTopicsRequest::Assignment> assignments) {
      CreateTopicsRequest::Topic t = new_topic(name, -1);
      t.replication_factor = -1;
      t.assignments = std::move(assignments);
      return t;
    };
    CreateTopicsRequest::Topic null_value = new_topic("nullvalue");
    null_value.configs.push_back({"retention.ms", std::nullopt});
    CreateTopicsRequest::Topic both = new_topic("both");  // partitions and an assignment
    both.assignments = {{0, {1}}};
    const std::vector<std::pair<CreateTopicsRequest::Topic, int16_t>> cases = {
        {new_topic("exists"), 36},
        {new_topic("bad/name"), 17},
        {new_topic("a_b"), 17},  // collides with a.b
        {new_topic("zero", 0), 37},
        {new_topic("negative", -2), 37},
        {replicas("rf3", 3), 38},
        {replicas("rf0", 0), 38},
        {new_topic("badvalue", 1, {{"retention.ms", "soon"}}), 40},
        {new_topic("unknownkey", 1, {{"no.such.key", "1"}}), 40},
        {null_value, 40},
        {both, 42},
        {manual("otherbroker", {{0, {2}}}), 39},
        {manual("twice-here", {{0, {1, 1}}}), 39},
        {manual("gap", {{0, {1}}, {2, {1}}}), 39},
        {new_topic("twice"), 42},  // named twice: answered once
    };
    std::vector<CreateTopicsRequest::Topic> topics;
    for (const auto& [topic, code] : cases) topics.push_back(topic);
    topics.push_back(new_topic("twice"));
    for (int16_t version : {2, 5, 7}) {
      const CreateTopicsResponse response = create_topics(client, topics, version);
      ASSERT_EQ(response.topics.size(), cases.size()) << "v" << version;
      for (size_t i = 0; i < cases.size(); ++i) {
        const CreateTopicsResponse::Topic& topic = response.topics[i];
        EXPECT_EQ(topic.name, cases[i].first.name);
        EXPECT_EQ(topic.error_code, cases[i].second) << topic.name << ": " << topic.error_message.value_or("");
        EXPECT_TRUE(topic.error_message.has_value() && !topic.error_message->empty()) << topic.name;
        EXPECT_TRUE(topic.topic_id.is_zero());
        EXPECT_EQ(topic.num_partitions, -1);
      }
      EXPECT_NE(response.topics[7].error_message->find("retention.ms"), std::string::npos)
          << "names the key: " << *response.topics[7].error_message;
      EXPECT_EQ(broker.topics().all().size(), 2u) << "nothing but the two made first";
    }
  }));
}

// v0 has neither validate_only nor error messages (v1 adds both); every version creates and refuses alike.
TEST(AdminCreateTopics, EveryVersionFromV0) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    for (int16_t version = 0; version <= 7; ++version) {
      SCOPED_TRACE("v" + std::to_string(version));
      const std::string name = "v" + std::to_string(version);
      const CreateTopicsResponse made = create_topics(client, {new_topic(name, 2)}, version);
      ASSERT_EQ(made.topics.size(), 1u);
      EXPECT_EQ(made.topics[0].error_code, 0);
      ASSERT_NE(broker.topics().find(name), nullptr);
      EXPECT_EQ(broker.topics().find(name)->partitions, 2);
      EXPECT_EQ(made.topics[0].num_partitions, version >= 5 ? 2 : -1);
      const CreateTopicsResponse again = create_topics(client, {new_topic(name, 2)}, version);
      ASSERT_EQ(again.topics.size(), 1u);
      EXPECT_EQ(again.topics[0].error_code, 36) << "TOPIC_ALREADY_EXISTS";
      EXPECT_EQ(again.topics[0].error_message.has_value(), version >= 1);
    }
    EXPECT_EQ(create_topics(client, {new_topic("dry", 1)}, 1, /*validate_only=*/true).topics[0].error_code, 0);
    EXPECT_EQ(broker.topics().find("dry"), nullptr);
    create_topics(client, {new_topic("wet", 1)}, 0, /*validate_only=*/true);
    EXPECT_NE(broker.topics().find("wet"), nullptr) << "v0 cannot carry validate_only";
  }));
}

TEST(AdminCreateTopics, ValidateOnlyChecksEverythingAndCreatesNothing) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([&harness](Env, KafkaClient& client, Broker& broker) {
    const CreateTopicsResponse response = create_topics(
        client, {new_topic("dry", 4, {{"cleanup.policy", "compact"}}), new_topic("dry-bad", 1, {{"segment.ms", "0"}})},
        7, /*validate_only=*/true);
    ASSERT_EQ(response.topics.size(), 2u);
    EXPECT_EQ(response.topics[0].error_code, 0);
    EXPECT_EQ(response.topics[0].num_partitions, 4);
    EXPECT_EQ(created_config(response.topics[0], "cleanup.policy")->value, "compact");
    EXPECT_EQ(response.topics[1].error_code, 40);
    EXPECT_EQ(broker.topics().find("dry"), nullptr);
    EXPECT_TRUE(broker.logs().partitions().empty());
    EXPECT_FALSE(*harness.server().disk().exists("data/dry-0"));
  }));
}

TEST(AdminDeleteTopics, DeletionRemovesDataAndMetadataAndTheNameCanBeReused) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([&harness](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "doomed", 2);
    append_records(broker, {"doomed", 0}, 5);
    const Uuid old_id = broker.topics().find("doomed")->id;
    EXPECT_TRUE(*harness.server().disk().exists("data/doomed-1"));
    DeleteTopicsRequest request;
    request.topic_names = {"doomed"};
    auto response = client.call<DeleteTopicsResponse>(request, 3);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    ASSERT_EQ(response->responses.size(), 1u);
    EXPECT_EQ(response->responses[0].name, "doomed");
    EXPECT_EQ(response->responses[0].error_code, 0);
    EXPECT_EQ(broker.topics().find("doomed"), nullptr);
    EXPECT_EQ(broker.logs().find({"doomed", 0}), nullptr);
    EXPECT_FALSE(*harness.server().disk().exists("data/doomed-0"));
    EXPECT_FALSE(*harness.server().disk().exists("data/doomed-1"));
    MetadataRequest all;
    all.topics = std::nullopt;
    auto metadata = client.call<MetadataResponse>(all, 9);
    ASSERT_TRUE(metadata.ok());
    EXPECT_TRUE(metadata->topics.empty());

    auto again = client.call<DeleteTopicsResponse>(request, 5);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->responses[0].error_code, 3) << "UNKNOWN_TOPIC_OR_PARTITION";
    EXPECT_TRUE(again->responses[0].error_message.has_value());

    create_topic(client, "doomed", 1);
    EXPECT_NE(broker.topics().find("doomed")->id, old_id);
    EXPECT_EQ(broker.logs().find({"doomed", 0})->log_end_offset(), 0) << "no data survives the deletion";
  }));
}

TEST(AdminDeleteTopics, EveryVersionFromV0Deletes) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    for (int16_t version = 0; version <= 6; ++version) {
      SCOPED_TRACE("v" + std::to_string(version));
      const std::string name = "gone-v" + std::to_string(version);
      create_topic(client, name);
      DeleteTopicsRequest request;
      request.topic_names = {name};             // v0-5
      request.topics = {{name, Uuid::zero()}};  // v6
      auto response = client.call<DeleteTopicsResponse>(request, version);
      ASSERT_TRUE(response.ok()) << response.status().to_string();
      ASSERT_EQ(response->responses.size(), 1u);
      EXPECT_EQ(response->responses[0].name, name);
      EXPECT_EQ(response->responses[0].error_code, 0);
      EXPECT_EQ(broker.topics().find(name), nullptr);
    }
  }));
}

TEST(AdminDeleteTopics, V6ByIdAndKafkasRefusals) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    for (const char* name : {"by-id", "by-name", "dup", "both-ways"}) create_topic(client, name);
    const Uuid by_id = broker.topics().find("by-id")->id;
    const Uuid both_ways = broker.topics().find("both-ways")->id;
    Uuid unknown;
    unknown.bytes[0] = 42;
    DeleteTopicsRequest request;
    request.topics = {{std::nullopt, by_id},        {"by-name", Uuid::zero()},   {std::nullopt, unknown},
                      {"dup", Uuid::zero()},        {"dup", Uuid::zero()},       {"x", by_id},
                      {std::nullopt, Uuid::zero()}, {"both-ways", Uuid::zero()}, {std::nullopt, both_ways}};
    auto response = client.call<DeleteTopicsResponse>(request, 6);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    const auto& r = response->responses;
    ASSERT_EQ(r.size(), 7u) << "one answer for the duplicate, none for the id whose name was given too";
    EXPECT_EQ(r[0].name, "by-id");
    EXPECT_EQ(r[0].topic_id, by_id);
    EXPECT_EQ(r[0].error_code, 0);
    EXPECT_EQ(r[1].name, "by-name");
    EXPECT_EQ(r[1].error_code, 0);
    EXPECT_FALSE(r[1].topic_id.is_zero());
    EXPECT_FALSE(r[2].name.has_value());
    EXPECT_EQ(r[2].topic_id, unknown);
    EXPECT_EQ(r[2].error_code, 100) << "UNKNOWN_TOPIC_ID";
    EXPECT_EQ(r[3].name, "dup");
    EXPECT_EQ(r[3].error_code, 42);
    EXPECT_EQ(r[3].error_message, "Duplicate topic name.");
    EXPECT_EQ(r[4].error_code, 42) << "name and id together";
    EXPECT_EQ(r[5].error_code, 42) << "neither name nor id";
    EXPECT_EQ(r[6].name, "both-ways");
    EXPECT_EQ(r[6].topic_id, both_ways);
    EXPECT_EQ(r[6].error_code, 42);
    EXPECT_EQ(broker.topics().find("by-id"), nullptr);
    EXPECT_EQ(broker.topics().find("by-name"), nullptr);
    EXPECT_NE(broker.topics().find("dup"), nullptr);
    EXPECT_NE(broker.topics().find("both-ways"), nullptr);
  }));
}

DeleteRecordsResponse delete_records(KafkaClient& client, const std::string& topic,
                                     std::vector<DeleteRecordsRequest::Partition> partitions, int16_t version = 2) {
  DeleteRecordsRequest request;
  request.topics.push_back({topic, std::move(partitions)});
  auto response = client.call<DeleteRecordsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  return response.ok() ? *response : DeleteRecordsResponse{};
}

TEST(AdminDeleteRecords, MovesTheLogStartAndAnswersTheLowWatermark) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 2);
    append_records(broker, {"t", 0}, 10);
    append_records(broker, {"t", 1}, 4);
    DeleteRecordsResponse response = delete_records(client, "t", {{0, 3}, {1, -1}, {7, 0}}, 0);
    ASSERT_EQ(response.topics.size(), 1u);
    const auto& p = response.topics[0].partitions;
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[0].error_code, 0);
    EXPECT_EQ(p[0].low_watermark, 3);
    EXPECT_EQ(p[1].error_code, 0);
    EXPECT_EQ(p[1].low_watermark, 4) << "-1 is the high watermark";
    EXPECT_EQ(p[2].error_code, 3) << "no partition 7";
    EXPECT_EQ(p[2].low_watermark, -1);
    EXPECT_EQ(broker.logs().find({"t", 0})->log_start_offset(), 3);

    response = delete_records(client, "t", {{0, 11}, {0, -2}, {0, 2}}, 2);
    const auto& q = response.topics[0].partitions;
    EXPECT_EQ(q[0].error_code, 1) << "above the high watermark: OFFSET_OUT_OF_RANGE";
    EXPECT_EQ(q[1].error_code, 1) << "below -1";
    EXPECT_EQ(q[2].error_code, 0);
    EXPECT_EQ(q[2].low_watermark, 3) << "never moves back";
    EXPECT_EQ(delete_records(client, "nope", {{0, 0}}).topics[0].partitions[0].error_code, 3);
  }));
}

TEST(AdminDeleteRecords, CompactedAndInternalTopicsRefuse) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "compacted", 1, {{"cleanup.policy", "compact"}});
    create_topic(client, "both", 1, {{"cleanup.policy", "compact,delete"}});
    create_topic(client, "__internal");
    append_records(broker, {"compacted", 0}, 2);
    append_records(broker, {"both", 0}, 2);
    EXPECT_EQ(delete_records(client, "compacted", {{0, 1}}).topics[0].partitions[0].error_code, 44)
        << "POLICY_VIOLATION";
    EXPECT_EQ(delete_records(client, "both", {{0, 1}}).topics[0].partitions[0].error_code, 0);
    EXPECT_EQ(delete_records(client, "__internal", {{0, 0}}).topics[0].partitions[0].error_code, 17);
  }));
}

TEST(AdminDescribeCluster, ThisNodeIsTheClusterAndTheController) {
  BrokerHarness harness;
  harness.config().node_id = 7;
  harness.config().cluster_id = "test-cluster";
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    for (int16_t version : {0, 1}) {
      DescribeClusterRequest request;
      request.include_cluster_authorized_operations = true;
      auto response = client.call<DescribeClusterResponse>(request, version);
      ASSERT_TRUE(response.ok()) << response.status().to_string();
      EXPECT_EQ(response->error_code, 0);
      EXPECT_EQ(response->cluster_id, "test-cluster");
      EXPECT_EQ(response->controller_id, 7);
      EXPECT_EQ(response->endpoint_type, 1);
      ASSERT_EQ(response->brokers.size(), 1u);
      EXPECT_EQ(response->brokers[0].broker_id, 7);
      EXPECT_EQ(response->brokers[0].host, "n1");
      EXPECT_EQ(response->brokers[0].port, 9092);
      EXPECT_EQ(response->cluster_authorized_operations, protocol::kAuthorizedOperationsOmitted);
    }
    DescribeClusterRequest controllers;
    controllers.endpoint_type = protocol::kEndpointTypeControllers;
    auto mismatched = client.call<DescribeClusterResponse>(controllers, 1);
    ASSERT_TRUE(mismatched.ok());
    EXPECT_EQ(mismatched->error_code, 114) << "MISMATCHED_ENDPOINT_TYPE";
    EXPECT_TRUE(mismatched->brokers.empty());
    controllers.endpoint_type = 9;
    auto unsupported = client.call<DescribeClusterResponse>(controllers, 1);
    ASSERT_TRUE(unsupported.ok());
    EXPECT_EQ(unsupported->error_code, 115) << "UNSUPPORTED_ENDPOINT_TYPE";
  }));
}

}  // namespace
}  // namespace sluice::kafka
