// Issue 20's admin limits and internal-topic protection on a simulated three-broker cluster, where CreateTopics,
// CreatePartitions, DeleteTopics and the alterations are proposals to the cluster metadata and a broker's partition
// count is what the metadata places on it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/group/records.h"
#include "core/protocol/messages/create_partitions.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/find_coordinator.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/cluster_test_util.h"

namespace sluice::kafka::testing {
namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;
using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

constexpr int16_t kInvalidConfig = 40;
constexpr int16_t kInvalidRequest = 42;
constexpr int16_t kPolicyViolation = 44;
const std::string kOffsets(group::kOffsetsTopic);

// FindCoordinator at node 1 until it answers: the offsets topic then exists.
void find_coordinator(Env env) {
  for (int attempt = 0; attempt < 300; ++attempt) {
    KafkaClient client = connect(env, 1);
    FindCoordinatorRequest find;
    find.key = "g";
    auto answer = client.call<FindCoordinatorResponse>(find, 3);
    if (answer.ok() && answer->error_code == 0) return;
    env.scheduler.sleep_for(100ms);
  }
  ADD_FAILURE() << "no coordinator";
}

TEST(ClusterLimits, TheOffsetsTopicIsProtectedInClusterMode) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, 2);
    EXPECT_EQ(create_topics(client, {new_topic(kOffsets, 3, {{"cleanup.policy", "delete"}})}).topics.at(0).error_code,
              kInvalidRequest);
    EXPECT_EQ(c.broker(1)->cluster()->image().topic(kOffsets), nullptr);
    find_coordinator(env);
    ASSERT_NE(c.broker(2)->topics().find(kOffsets), nullptr);
    DeleteTopicsRequest request;
    request.topic_names = {kOffsets};
    request.timeout_ms = 10000;
    auto deleted = client.call<DeleteTopicsResponse>(request, 5);
    ASSERT_TRUE(deleted.ok());
    EXPECT_EQ(deleted->responses.at(0).error_code, kInvalidRequest);
    using Op = protocol::IncrementalAlterConfigsRequest::Config;
    EXPECT_EQ(alter_incrementally(client, kOffsets, {Op{"cleanup.policy", 0, "delete"}}).error_code, kInvalidConfig);
  }));
  for (int32_t id : all) {
    const cluster::metadata::TopicImage* offsets = c.broker(id)->cluster()->image().topic(kOffsets);
    ASSERT_NE(offsets, nullptr) << "node " << id;
    EXPECT_EQ(offsets->configs.at("cleanup.policy"), "compact");
  }
}

TEST(ClusterLimits, EveryBrokerHoldsAtMostMaxBrokerPartitions) {
  KafkaCluster c(3, 5, {}, [](BrokerConfig& config) { config.max_broker_partitions = 4; });
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient client = connect(env, 2);
    protocol::CreateTopicsRequest::Topic wide = new_topic("wide", 4);
    wide.replication_factor = 3;  // four replicas on every broker: full
    ASSERT_EQ(create_topics(client, {wide}).topics.at(0).error_code, 0);
    for (bool validate_only : {true, false}) {
      const auto refused = create_topics(client, {new_topic("one", 1)}, 7, validate_only);
      EXPECT_EQ(refused.topics.at(0).error_code, kPolicyViolation);
      EXPECT_NE(refused.topics.at(0).error_message.value_or("").find("sluice.max.broker.partitions"),
                std::string::npos);
    }
    CreatePartitionsRequest grow;
    grow.topics.push_back({"wide", 5, std::nullopt});
    grow.timeout_ms = 10000;
    auto grown = client.call<CreatePartitionsResponse>(grow, 3);
    ASSERT_TRUE(grown.ok());
    EXPECT_EQ(grown->results.at(0).error_code, kPolicyViolation);
    MetadataRequest request;
    request.topics->push_back({.name = "auto"});
    request.allow_auto_topic_creation = true;
    auto metadata = client.call<MetadataResponse>(request, 9);
    ASSERT_TRUE(metadata.ok());
    EXPECT_EQ(metadata->topics.at(0).error_code, kPolicyViolation);
    // Past Kafka's 10000 records per request: refused before any placement.
    EXPECT_EQ(create_topics(client, {new_topic("huge", INT32_MAX)}).topics.at(0).error_code, kPolicyViolation);
    // The coordinator's topic is made regardless.
    find_coordinator(env);
  }));
  for (int32_t id : all) {
    EXPECT_EQ(c.broker(id)->cluster()->image().topic("one"), nullptr);
    EXPECT_EQ(c.broker(id)->cluster()->image().topic("auto"), nullptr);
    EXPECT_EQ(c.broker(id)->cluster()->image().topic("wide")->partition_count(), 4);
    EXPECT_NE(c.broker(id)->cluster()->image().topic(kOffsets), nullptr);
  }
}

}  // namespace
}  // namespace sluice::kafka::testing
