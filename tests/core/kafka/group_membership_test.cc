// The consumer-group APIs through a real connection: JoinGroup, SyncGroup, Heartbeat, LeaveGroup at old and
// flexible versions, committed offsets surviving a broker restart, and leaving with their deleted topic.
#include <gtest/gtest.h>

#include "core/protocol/messages/delete_groups.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_groups.h"
#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/list_groups.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_delete.h"
#include "core/protocol/messages/offset_fetch.h"
#include "core/protocol/messages/sync_group.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/group_api_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using namespace protocol;

TEST(GroupApis, JoinSyncHeartbeatLeaveAtFlexibleVersions) {
  BrokerHarness harness(1, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto first = client.call<JoinGroupResponse>(join_request(""), 6);
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    EXPECT_EQ(first->error_code, 79) << "MEMBER_ID_REQUIRED";
    ASSERT_TRUE(first->member_id.starts_with("test-client-")) << first->member_id;
    auto joined = client.call<JoinGroupResponse>(join_request(first->member_id), 6);
    ASSERT_TRUE(joined.ok());
    ASSERT_EQ(joined->error_code, 0);
    EXPECT_EQ(joined->generation_id, 1);
    EXPECT_EQ(joined->protocol_name, "range");
    EXPECT_EQ(joined->leader, first->member_id);
    ASSERT_EQ(joined->members.size(), 1u);
    SyncGroupRequest sync;
    sync.group_id = "g";
    sync.generation_id = joined->generation_id;
    sync.member_id = joined->member_id;
    sync.assignments = {{joined->member_id, Bytes{1, 2, 3}}};
    auto synced = client.call<SyncGroupResponse>(sync, 4);
    ASSERT_TRUE(synced.ok());
    EXPECT_EQ(synced->error_code, 0);
    EXPECT_EQ(synced->assignment, (Bytes{1, 2, 3}));
    HeartbeatRequest beat{"g", joined->generation_id, joined->member_id, std::nullopt};
    auto alive = client.call<HeartbeatResponse>(beat, 4);
    ASSERT_TRUE(alive.ok());
    EXPECT_EQ(alive->error_code, 0);
    beat.generation_id = 9;
    EXPECT_EQ(client.call<HeartbeatResponse>(beat, 0)->error_code, 22) << "ILLEGAL_GENERATION";
    DescribeGroupsRequest describe;
    describe.groups = {"g", "nope"};
    auto described = client.call<DescribeGroupsResponse>(describe, 5);
    ASSERT_TRUE(described.ok());
    ASSERT_EQ(described->groups.size(), 2u);
    EXPECT_EQ(described->groups[0].group_state, "Stable");
    EXPECT_EQ(described->groups[0].protocol_data, "range");
    ASSERT_EQ(described->groups[0].members.size(), 1u);
    EXPECT_EQ(described->groups[0].members[0].client_id, "test-client");
    EXPECT_EQ(described->groups[0].members[0].member_assignment, (Bytes{1, 2, 3}));
    EXPECT_EQ(described->groups[1].group_state, "Dead");
    ListGroupsRequest list;
    list.states_filter = {"Stable"};
    auto listed = client.call<ListGroupsResponse>(list, 4);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->groups.size(), 1u);
    EXPECT_EQ(listed->groups[0].group_state, "Stable");
    DeleteGroupsRequest del;
    del.groups_names = {"g"};
    EXPECT_EQ(client.call<DeleteGroupsResponse>(del, 2)->results.at(0).error_code, 68) << "NON_EMPTY_GROUP";
    LeaveGroupRequest leave;
    leave.group_id = "g";
    leave.members = {{joined->member_id, std::nullopt, std::nullopt}, {"ghost", std::nullopt, std::nullopt}};
    auto left = client.call<LeaveGroupResponse>(leave, 4);
    ASSERT_TRUE(left.ok());
    EXPECT_EQ(left->error_code, 0);
    ASSERT_EQ(left->members.size(), 2u);
    EXPECT_EQ(left->members[0].error_code, 0);
    EXPECT_EQ(left->members[1].error_code, 25) << "UNKNOWN_MEMBER_ID";
    EXPECT_EQ(client.call<DeleteGroupsResponse>(del, 0)->results.at(0).error_code, 0);
  }));
}

TEST(GroupApis, OldVersionsJoinAtOnceAndLeaveWithATopLevelError) {
  BrokerHarness harness(2, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto joined = client.call<JoinGroupResponse>(join_request(""), 2);
    ASSERT_TRUE(joined.ok());
    ASSERT_EQ(joined->error_code, 0) << "JoinGroup v2 (kafka-python) gets its id without MEMBER_ID_REQUIRED";
    JoinGroupRequest bad = join_request("");
    bad.session_timeout_ms = 1000;
    EXPECT_EQ(client.call<JoinGroupResponse>(bad, 2)->error_code, 26) << "INVALID_SESSION_TIMEOUT";
    LeaveGroupRequest leave;
    leave.group_id = "g";
    leave.member_id = "ghost";
    EXPECT_EQ(client.call<LeaveGroupResponse>(leave, 0)->error_code, 25);
    leave.member_id = joined->member_id;
    EXPECT_EQ(client.call<LeaveGroupResponse>(leave, 2)->error_code, 0);
  }));
}

OffsetCommitRequest commit_request(int64_t offset) {
  OffsetCommitRequest request;
  request.group_id = "standalone";
  request.topics = {{"orders", {{0, offset, -1, -1, std::string("meta")}, {1, offset + 1, -1, -1, std::nullopt}}},
                    {"missing", {{0, 1, -1, -1, std::nullopt}}}};
  return request;
}

TEST(GroupApis, CommittedOffsetsSurviveABrokerRestart) {
  BrokerHarness harness(3, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "orders", 2);
    for (int16_t version : {2, 8}) {
      auto committed = client.call<OffsetCommitResponse>(commit_request(version * 100), version);
      ASSERT_TRUE(committed.ok()) << committed.status().to_string();
      ASSERT_EQ(committed->topics.size(), 2u);
      EXPECT_EQ(committed->topics[0].partitions[0].error_code, 0);
      EXPECT_EQ(committed->topics[0].partitions[1].error_code, 0);
      EXPECT_EQ(committed->topics[1].partitions[0].error_code, 3) << "UNKNOWN_TOPIC_OR_PARTITION";
    }
    EXPECT_NE(broker.topics().find("__consumer_offsets"), nullptr) << "created on first use";
  }));
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    while (broker.groups().loading()) env.scheduler.sleep_for(std::chrono::milliseconds(1));
    OffsetFetchRequest v1;
    v1.group_id = "standalone";
    v1.topics = std::vector<OffsetFetchRequest::Topic>{{"orders", {0, 1, 5}}};
    auto fetched = client.call<OffsetFetchResponse>(v1, 1);
    ASSERT_TRUE(fetched.ok());
    ASSERT_EQ(fetched->topics.size(), 1u);
    ASSERT_EQ(fetched->topics[0].partitions.size(), 3u);
    EXPECT_EQ(fetched->topics[0].partitions[0].committed_offset, 800);
    EXPECT_EQ(fetched->topics[0].partitions[0].metadata, "meta");
    EXPECT_EQ(fetched->topics[0].partitions[1].committed_offset, 801);
    EXPECT_EQ(fetched->topics[0].partitions[2].committed_offset, -1);
    OffsetFetchRequest v8;
    v8.groups = {{"standalone", std::nullopt, -1, std::nullopt}, {"other", std::nullopt, -1, std::nullopt}};
    auto batched = client.call<OffsetFetchResponse>(v8, 8);
    ASSERT_TRUE(batched.ok());
    ASSERT_EQ(batched->groups.size(), 2u);
    ASSERT_EQ(batched->groups[0].topics.size(), 1u) << "null topics: everything committed";
    EXPECT_EQ(batched->groups[0].topics[0].partitions.size(), 2u);
    EXPECT_EQ(batched->groups[0].topics[0].partitions[0].committed_leader_epoch, -1);
    EXPECT_TRUE(batched->groups[1].topics.empty());
    OffsetDeleteRequest del;
    del.group_id = "standalone";
    del.topics = {{"orders", {{0}}}};
    auto deleted = client.call<OffsetDeleteResponse>(del, 0);
    ASSERT_TRUE(deleted.ok());
    EXPECT_EQ(deleted->error_code, 0);
    EXPECT_EQ(deleted->topics.at(0).partitions.at(0).error_code, 0);
    del.group_id = "nope";
    EXPECT_EQ(client.call<OffsetDeleteResponse>(del, 0)->error_code, 69) << "GROUP_ID_NOT_FOUND";
  }));
}

int64_t committed(KafkaClient& client, int32_t partition) {
  OffsetFetchRequest request;
  request.group_id = "standalone";
  request.topics = std::vector<OffsetFetchRequest::Topic>{{"orders", {partition}}};
  auto fetched = client.call<OffsetFetchResponse>(request, 1);
  EXPECT_TRUE(fetched.ok());
  return fetched.ok() ? fetched->topics.at(0).partitions.at(0).committed_offset : -100;
}

// As Kafka's onPartitionsDeleted: a deleted topic's offsets go (tombstones), so its successor starts afresh.
TEST(GroupApis, DeletingATopicDropsItsCommittedOffsets) {
  BrokerHarness harness(4, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "orders", 2);
    create_topic(client, "kept", 2);
    ASSERT_TRUE(client.call<OffsetCommitResponse>(commit_request(40), 8).ok());
    OffsetCommitRequest other = commit_request(0);
    other.topics = {{"kept", {{0, 7, -1, -1, std::nullopt}}}};
    ASSERT_TRUE(client.call<OffsetCommitResponse>(other, 8).ok());
    ASSERT_EQ(committed(client, 1), 41);
    DeleteTopicsRequest remove;
    remove.topic_names = {"orders"};
    auto deleted = client.call<DeleteTopicsResponse>(remove, 4);
    ASSERT_TRUE(deleted.ok());
    ASSERT_EQ(deleted->responses.at(0).error_code, 0);
    create_topic(client, "orders", 2);
    EXPECT_EQ(committed(client, 0), -1) << "the recreated topic does not resume at the old offsets";
    EXPECT_EQ(committed(client, 1), -1);
    const group::Group* group = broker.groups().find_group("standalone");
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->offsets.size(), 1u) << "the other topic's offset stays";
  }));
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    while (broker.groups().loading()) env.scheduler.sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(committed(client, 0), -1) << "the tombstones were replayed";
    EXPECT_EQ(broker.groups().find_group("standalone")->offsets.size(), 1u);
  }));
}

}  // namespace
}  // namespace sluice::kafka
