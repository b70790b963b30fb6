// The admin calls against the simulated broker: CreateTopics, DeleteTopics, IncrementalAlterConfigs,
// DescribeConfigs and DeleteRecords, with the broker's refusals coming back as its error codes.
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

TEST(ClientAdmin, DeleteRecordsMovesTheLogStart) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    const TopicPartitionId tp{"trimmed", 0};
    for (int i = 0; i < 5; ++i) ASSERT_EQ(producer.send_and_wait(tp, {record("k", "v")}).outcome, Outcome::kOk);
    Result<int64_t> low = client.delete_records(tp, 3);
    ASSERT_TRUE(low.ok()) << low.status().to_string();
    EXPECT_EQ(*low, 3);
    Result<ListedOffset> earliest = client.list_offset(tp, kEarliestTimestamp);
    ASSERT_TRUE(earliest.ok());
    EXPECT_EQ(earliest->offset, 3);
    Result<FetchResult> below = client.fetch(tp, 0);
    ASSERT_TRUE(below.ok());
    EXPECT_EQ(below->error_code, 1) << "OFFSET_OUT_OF_RANGE below the new start";
    EXPECT_EQ(values(fetch_all(client, tp, 3)).size(), 2u);
    EXPECT_EQ(client.delete_records(tp, 9).status().protocol_error(), 1) << "beyond the high watermark";
  }));
}

}  // namespace
}  // namespace sluice::client
