// The admin calls against the simulated broker: CreateTopics, DeleteTopics, IncrementalAlterConfigs and
// DescribeConfigs, with the broker's refusals coming back as its error codes.
#include <gtest/gtest.h>

#include "core/client/client.h"
#include "tests/core/client/client_test_util.h"

namespace sluice::client {
namespace {

using namespace testing;

TEST(ClientAdmin, CreatesDescribesAltersAndDeletesTopics) {
  ClientHarness harness;
  harness.broker_config().auto_create_topics_enable = false;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    ASSERT_TRUE(client.create_topic({"admin", 3, 1, {{"retention.ms", "3600000"}}}).ok());
    const Status again = client.create_topic({"admin", 3, 1, {}});
    EXPECT_EQ(again.code(), Code::kInvalidArgument);
    EXPECT_EQ(again.protocol_error(), 36) << again.to_string();  // TOPIC_ALREADY_EXISTS
    Result<ClusterInfo> cluster = client.metadata({"admin"});
    ASSERT_TRUE(cluster.ok());
    EXPECT_EQ(cluster->topics.at("admin").partitions.size(), 3u);

    Result<std::map<std::string, std::string>> configs = client.describe_topic_config("admin");
    ASSERT_TRUE(configs.ok()) << configs.status().to_string();
    EXPECT_EQ(configs->at("retention.ms"), "3600000");
    EXPECT_EQ(configs->at("cleanup.policy"), "delete");

    ASSERT_TRUE(
        client.alter_topic_config("admin", {{"cleanup.policy", "compact"}, {"retention.ms", std::nullopt}}).ok());
    configs = client.describe_topic_config("admin");
    ASSERT_TRUE(configs.ok());
    EXPECT_EQ(configs->at("cleanup.policy"), "compact");
    EXPECT_EQ(configs->at("retention.ms"), "604800000") << "the override deleted: back to the default";
    const Status bad = client.alter_topic_config("admin", {{"retention.ms", "soon"}});
    EXPECT_EQ(bad.protocol_error(), 40) << bad.to_string();  // INVALID_CONFIG

    ASSERT_TRUE(client.delete_topic("admin").ok());
    cluster = client.metadata({"admin"});
    ASSERT_TRUE(cluster.ok());
    EXPECT_EQ(cluster->topics.at("admin").error_code, 3);
    EXPECT_EQ(client.delete_topic("admin").protocol_error(), 3);
    EXPECT_EQ(client.describe_topic_config("admin").status().protocol_error(), 3);
    EXPECT_EQ(client.create_topic({"bad/name", 1, 1, {}}).protocol_error(), 17);  // INVALID_TOPIC_EXCEPTION
  }));
}

}  // namespace
}  // namespace sluice::client
