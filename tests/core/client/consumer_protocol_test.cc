// The consumer protocol's blobs against Kafka's layout (ConsumerProtocolSubscription / Assignment.json), and the
// range assignor against Kafka's RangeAssignor: contiguous ranges per topic, the first members one more.
#include "core/client/consumer_protocol.h"

#include <gtest/gtest.h>

#include <set>

namespace sluice::client {
namespace {

TEST(ClientConsumerProtocol, SubscriptionIsVersionZeroInKafkasLayout) {
  // int16 version 0, [topics] (int32 count, int16-length strings), user_data null (int32 -1).
  const Bytes expected{0, 0, 0, 0, 0, 2, 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 1, 'u', 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(encode_subscription({"orders", "u"}), expected);
  Result<std::vector<std::string>> topics = decode_subscription(expected);
  ASSERT_TRUE(topics.ok()) << topics.status().to_string();
  EXPECT_EQ(*topics, (std::vector<std::string>{"orders", "u"}));
}

TEST(ClientConsumerProtocol, LaterSubscriptionVersionsAreReadByTheirLeadingFields) {
  // v1 as the Java consumer writes it: + owned_partitions [topic, [partition]].
  const Bytes v1{0, 1, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 2};
  Result<std::vector<std::string>> topics = decode_subscription(v1);
  ASSERT_TRUE(topics.ok()) << topics.status().to_string();
  EXPECT_EQ(*topics, std::vector<std::string>{"t"});
  EXPECT_FALSE(decode_subscription(Bytes{0, 0, 0, 0, 0, 5}).ok()) << "a count past the end";
}

TEST(ClientConsumerProtocol, AssignmentRoundTripsInKafkasLayout) {
  const std::vector<TopicPartitionId> partitions{{"a", 0}, {"a", 2}, {"b", 1}};
  const Bytes expected{0, 0, 0, 0, 0, 2,   0, 1, 'a', 0, 0, 0, 2, 0, 0,    0,    0,    0,
                       0, 0, 2, 0, 1, 'b', 0, 0, 0,   1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(encode_assignment(partitions), expected);
  Result<std::vector<TopicPartitionId>> decoded = decode_assignment(expected);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(*decoded, partitions);
  Result<std::vector<TopicPartitionId>> none = decode_assignment({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "empty bytes: a member the leader left out";
}

TEST(ClientConsumerProtocol, RangeAssignorGivesContiguousRangesThatCoverEveryPartitionOnce) {
  const std::map<std::string, std::vector<std::string>> subscriptions{
      {"m-a", {"orders", "users"}}, {"m-b", {"orders", "users"}}, {"m-c", {"orders"}}};
  const auto assignment = range_assign(subscriptions, {{"orders", 7}, {"users", 3}});
  using Tps = std::vector<TopicPartitionId>;
  EXPECT_EQ(assignment.at("m-a"), (Tps{{"orders", 0}, {"orders", 1}, {"orders", 2}, {"users", 0}, {"users", 1}}));
  EXPECT_EQ(assignment.at("m-b"), (Tps{{"orders", 3}, {"orders", 4}, {"users", 2}}));
  EXPECT_EQ(assignment.at("m-c"), (Tps{{"orders", 5}, {"orders", 6}}));
  std::set<TopicPartitionId> seen;
  for (const auto& [member, partitions] : assignment) {
    for (const TopicPartitionId& tp : partitions) EXPECT_TRUE(seen.insert(tp).second) << tp.to_string();
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(ClientConsumerProtocol, RangeAssignorLeavesMembersWithoutPartitionsAndSkipsMissingTopics) {
  const auto assignment = range_assign({{"m-1", {"small"}}, {"m-2", {"small"}}, {"m-3", {"gone"}}}, {{"small", 1}});
  EXPECT_EQ(assignment.at("m-1"), (std::vector<TopicPartitionId>{{"small", 0}}));
  EXPECT_TRUE(assignment.at("m-2").empty());
  EXPECT_TRUE(assignment.at("m-3").empty());
}

}  // namespace
}  // namespace sluice::client
