// The API table: the advertised ranges of kafka-protocol.md §2 and Kafka 3.9's first flexible versions.
#include <gtest/gtest.h>

#include <set>

#include "core/protocol/api_table.h"

namespace sluice::protocol {
namespace {

TEST(ApiTable, ServesTheRecommendedTable) {
  // The 23 of §2, DeleteGroups, OffsetDelete, CreatePartitions and DescribeQuorum.
  EXPECT_EQ(all_apis().size(), 27u);
  std::set<std::string_view> names;
  for (const ApiInfo& api : all_apis()) {
    EXPECT_LE(api.min_version, api.max_version) << api.name;
    EXPECT_EQ(find_api(static_cast<int16_t>(api.key)), &api);
    names.insert(api.name);
  }
  EXPECT_EQ(names.size(), all_apis().size());
  const ApiInfo& produce = api_info(ApiKey::kProduce);
  EXPECT_EQ(produce.min_version, 0);  // advertised from 0 for librdkafka's compression (KAFKA-18659)
  EXPECT_EQ(produce.max_version, 11);
  EXPECT_EQ(api_info(ApiKey::kMetadata).max_version, 12);
  EXPECT_EQ(api_info(ApiKey::kFetch).min_version, 4);  // v0-3 carry message formats 0 and 1
  EXPECT_EQ(api_info(ApiKey::kFetch).max_version, 17);
  EXPECT_EQ(api_info(ApiKey::kListOffsets).min_version, 0);
  EXPECT_EQ(api_info(ApiKey::kListOffsets).max_version, 9);
  EXPECT_EQ(api_info(ApiKey::kApiVersions).max_version, 4);
  EXPECT_EQ(api_info(ApiKey::kDeleteGroups).max_version, 2);
  EXPECT_EQ(api_info(ApiKey::kOffsetDelete).max_version, 0);
  EXPECT_EQ(api_name(ApiKey::kOffsetForLeaderEpoch), "OffsetForLeaderEpoch");
  // Kafka 3.9 serves v0-2; v2 (KIP-853: directory ids, endpoints) is not served here.
  EXPECT_EQ(api_info(ApiKey::kDescribeQuorum).min_version, 0);
  EXPECT_EQ(api_info(ApiKey::kDescribeQuorum).max_version, 1);
  EXPECT_TRUE(is_flexible(ApiKey::kDescribeQuorum, 0));
}

TEST(ApiTable, FlexibleVersionsFromKafka39) {
  EXPECT_FALSE(is_flexible(ApiKey::kApiVersions, 2));
  EXPECT_TRUE(is_flexible(ApiKey::kApiVersions, 3));
  EXPECT_TRUE(is_flexible(ApiKey::kApiVersions, 5));  // above the advertised range, still flexible
  EXPECT_FALSE(is_flexible(ApiKey::kMetadata, 8));
  EXPECT_TRUE(is_flexible(ApiKey::kMetadata, 9));
  EXPECT_FALSE(is_flexible(ApiKey::kProduce, 8));
  EXPECT_TRUE(is_flexible(ApiKey::kFetch, 12));
  EXPECT_TRUE(is_flexible(ApiKey::kOffsetFetch, 6));
  EXPECT_TRUE(is_flexible(ApiKey::kFindCoordinator, 3));
  EXPECT_TRUE(is_flexible(ApiKey::kDescribeCluster, 0));
  EXPECT_FALSE(is_flexible(ApiKey::kDescribeConfigs, 3));
  EXPECT_FALSE(is_flexible(ApiKey::kOffsetDelete, 0));
  EXPECT_FALSE(is_flexible(ApiKey::kOffsetDelete, 100));
}

// The admin APIs serve every version Kafka 3.9 serves (its schemas' validVersions).
TEST(ApiTable, AdminApisServeEveryKafka39Version) {
  struct Range {
    ApiKey key;
    int16_t min;
    int16_t max;
  };
  for (const Range& expected :
       {Range{ApiKey::kCreateTopics, 0, 7}, Range{ApiKey::kDeleteTopics, 0, 6}, Range{ApiKey::kDeleteRecords, 0, 2},
        Range{ApiKey::kInitProducerId, 0, 5}, Range{ApiKey::kOffsetForLeaderEpoch, 0, 4},
        Range{ApiKey::kDescribeConfigs, 0, 4}, Range{ApiKey::kAlterConfigs, 0, 2}, Range{ApiKey::kCreatePartitions, 0, 3},
        Range{ApiKey::kIncrementalAlterConfigs, 0, 1}, Range{ApiKey::kDescribeCluster, 0, 1}}) {
    const ApiInfo& api = api_info(expected.key);
    EXPECT_EQ(api.min_version, expected.min) << api.name;
    EXPECT_EQ(api.max_version, expected.max) << api.name;
  }
  EXPECT_TRUE(is_flexible(ApiKey::kDescribeConfigs, 4));
}

TEST(ApiTable, LookupAndSupport) {
  EXPECT_EQ(find_api(4), nullptr);  // LeaderAndIsr: not served
  EXPECT_EQ(find_api(-1), nullptr);
  EXPECT_EQ(find_api(1000), nullptr);
  EXPECT_TRUE(is_supported(ApiKey::kJoinGroup, 0));  // Kafka 3.9's whole range, for clients without ApiVersions
  EXPECT_TRUE(is_supported(ApiKey::kJoinGroup, 9));
  EXPECT_FALSE(is_supported(ApiKey::kJoinGroup, 10));
  EXPECT_FALSE(is_supported(ApiKey::kJoinGroup, -1));
  EXPECT_FALSE(is_supported(ApiKey::kApiVersions, 5));
}

}  // namespace
}  // namespace sluice::protocol
