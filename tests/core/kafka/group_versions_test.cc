// The group APIs at Kafka 3.9's oldest and newest versions through a real connection: a client that never sends
// ApiVersions runs a whole group at v0/v1 (JoinGroup v0's session timeout standing in for the rebalance timeout,
// OffsetCommit v1's commit timestamp, v2's retention, OffsetFetch v0's ZooKeeper-style answers), and a modern one
// at JoinGroup 9, SyncGroup 5, LeaveGroup 5, OffsetCommit/OffsetFetch 9 and ListGroups 5.
#include <gtest/gtest.h>

#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/list_groups.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_fetch.h"
#include "core/protocol/messages/sync_group.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/group_api_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using namespace protocol;

using OptString = std::optional<std::string>;

constexpr int64_t kCommittedAt = 1700000000000;  // 2023-11-14, a v1 client's own commit timestamp

OffsetCommitRequest commit(const std::string& member_id, int32_t generation, int32_t partition, int64_t offset,
                           const std::string& metadata) {
  OffsetCommitRequest request;
  request.group_id = "g";
  request.generation_id = generation;
  request.member_id = member_id;
  request.topics = {{"orders", {{partition, offset, -1, -1, metadata}}}};
  return request;
}

OffsetFetchRequest fetch(std::vector<OffsetFetchRequest::Topic> topics) {
  OffsetFetchRequest request;
  request.group_id = "g";
  request.topics = std::move(topics);
  return request;
}

int16_t commit_error(KafkaClient& client, const OffsetCommitRequest& request, int16_t version) {
  auto response = client.call<OffsetCommitResponse>(request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  return response.ok() ? response->topics.at(0).partitions.at(0).error_code : -100;
}

TEST(GroupVersions, AClientWithoutApiVersionsRunsAGroupAtV0AndV1) {
  BrokerHarness harness(11, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "orders", 2);
    create_topic(client, "idle", 1);
    auto joined = client.call<JoinGroupResponse>(join_request(""), 0);
    ASSERT_TRUE(joined.ok()) << joined.status().to_string();
    ASSERT_EQ(joined->error_code, 0) << "v0 is admitted at once";
    EXPECT_EQ(joined->generation_id, 1);
    EXPECT_EQ(joined->leader, joined->member_id);
    EXPECT_EQ(joined->protocol_name, "range");
    ASSERT_EQ(joined->members.size(), 1u);
    const std::string member = joined->member_id;
    const group::Group* group = broker.groups().find_group("g");
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->members.at(member).rebalance_timeout_ms, 10000) << "v0 has none: the session timeout's";

    SyncGroupRequest sync;
    sync.group_id = "g";
    sync.generation_id = joined->generation_id;
    sync.member_id = member;
    sync.assignments = {{member, Bytes{1, 2, 3}}};
    auto synced = client.call<SyncGroupResponse>(sync, 0);
    ASSERT_TRUE(synced.ok()) << synced.status().to_string();
    EXPECT_EQ(synced->error_code, 0);
    EXPECT_EQ(synced->assignment, (Bytes{1, 2, 3}));
    HeartbeatRequest beat{"g", joined->generation_id, member, std::nullopt};
    EXPECT_EQ(client.call<HeartbeatResponse>(beat, 0)->error_code, 0);

    // v1: a member's commit, with the client's own commit timestamp.
    OffsetCommitRequest v1 = commit(member, joined->generation_id, 0, 10, "at-v1");
    v1.topics[0].partitions[0].commit_timestamp = kCommittedAt;
    EXPECT_EQ(commit_error(client, v1, 1), 0);
    EXPECT_EQ(group->offsets.at({"orders", 0}).commit_timestamp_ms, kCommittedAt);
    EXPECT_FALSE(group->offsets.at({"orders", 0}).expire_timestamp_ms.has_value());
    // v2: a retention time, which becomes the offset's expire timestamp.
    OffsetCommitRequest v2 = commit(member, joined->generation_id, 1, 20, "at-v2");
    v2.retention_time_ms = 60000;
    EXPECT_EQ(commit_error(client, v2, 2), 0);
    const group::CommittedOffset& retained = group->offsets.at({"orders", 1});
    ASSERT_TRUE(retained.expire_timestamp_ms.has_value());
    EXPECT_EQ(*retained.expire_timestamp_ms - retained.commit_timestamp_ms, 60000);

    auto v1_fetched = client.call<OffsetFetchResponse>(fetch({{"orders", {0, 1}}, {"idle", {0}}}), 1);
    ASSERT_TRUE(v1_fetched.ok()) << v1_fetched.status().to_string();
    ASSERT_EQ(v1_fetched->topics.size(), 2u);
    EXPECT_EQ(v1_fetched->topics[0].partitions[0].committed_offset, 10);
    EXPECT_EQ(v1_fetched->topics[0].partitions[0].metadata, "at-v1");
    EXPECT_EQ(v1_fetched->topics[0].partitions[1].committed_offset, 20);
    EXPECT_EQ(v1_fetched->topics[1].partitions[0].committed_offset, -1);
    EXPECT_EQ(v1_fetched->topics[1].partitions[0].error_code, 0) << "v1+: nothing committed is no error";

    LeaveGroupRequest leave;
    leave.group_id = "g";
    leave.member_id = member;
    EXPECT_EQ(client.call<LeaveGroupResponse>(leave, 0)->error_code, 0);
    EXPECT_EQ(client.call<HeartbeatResponse>(beat, 0)->error_code, 25) << "UNKNOWN_MEMBER_ID: it left";

    // v0: no generation or member, so a standalone commit (the group is Empty now).
    EXPECT_EQ(commit_error(client, commit("", -1, 0, 30, "at-v0"), 0), 0);
    auto v0_fetched = client.call<OffsetFetchResponse>(fetch({{"orders", {0, 1}}, {"idle", {0}}}), 0);
    ASSERT_TRUE(v0_fetched.ok()) << v0_fetched.status().to_string();
    ASSERT_EQ(v0_fetched->topics.size(), 2u);
    const OffsetFetchResponse::Partition& p0 = v0_fetched->topics[0].partitions.at(0);
    EXPECT_EQ(p0.committed_offset, 30);
    EXPECT_EQ(p0.metadata, "") << "v0 answers no metadata, as Kafka's ZooKeeper path kept none";
    EXPECT_EQ(p0.error_code, 0);
    EXPECT_EQ(v0_fetched->topics[0].partitions.at(1).committed_offset, 20);
    EXPECT_EQ(v0_fetched->topics[1].partitions.at(0).committed_offset, -1);
    EXPECT_EQ(v0_fetched->topics[1].partitions.at(0).error_code, 3) << "v0: UNKNOWN_TOPIC_OR_PARTITION";
  }));
}

TEST(GroupVersions, OldCommitsAreCheckedAgainstTheGroup) {
  BrokerHarness harness(12, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "orders", 2);
    auto joined = client.call<JoinGroupResponse>(join_request(""), 1);
    ASSERT_TRUE(joined.ok()) << joined.status().to_string();
    ASSERT_EQ(joined->error_code, 0);
    EXPECT_EQ(broker.groups().find_group("g")->members.at(joined->member_id).rebalance_timeout_ms, 30000)
        << "v1 carries its own rebalance timeout";
    const std::string member = joined->member_id;
    EXPECT_EQ(commit_error(client, commit(member, joined->generation_id + 1, 0, 1, ""), 1), 22) << "ILLEGAL_GENERATION";
    EXPECT_EQ(commit_error(client, commit("ghost", joined->generation_id, 0, 1, ""), 1), 25) << "UNKNOWN_MEMBER_ID";
    // Kafka 3.9 would write a v0 commit to ZooKeeper regardless of the group; here it is a standalone commit, which
    // a group with members refuses.
    EXPECT_EQ(commit_error(client, commit("", -1, 0, 1, ""), 0), 25) << "UNKNOWN_MEMBER_ID";
    EXPECT_TRUE(broker.groups().find_group("g")->offsets.empty());
  }));
}

TEST(GroupVersions, AModernClientAtTheNewestVersions) {
  BrokerHarness harness(13, group_config());
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    create_topic(client, "orders", 2);
    JoinGroupRequest join = join_request("");
    join.reason = "starting";
    auto first = client.call<JoinGroupResponse>(join, 9);
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    ASSERT_EQ(first->error_code, 79) << "MEMBER_ID_REQUIRED";
    EXPECT_EQ(first->protocol_type, std::nullopt);
    EXPECT_EQ(first->protocol_name, std::nullopt) << "no protocol is null from v7";
    join.member_id = first->member_id;
    auto joined = client.call<JoinGroupResponse>(join, 9);
    ASSERT_TRUE(joined.ok()) << joined.status().to_string();
    ASSERT_EQ(joined->error_code, 0);
    EXPECT_EQ(joined->protocol_type, OptString("consumer"));
    EXPECT_EQ(joined->protocol_name, OptString("range"));
    EXPECT_FALSE(joined->skip_assignment) << "a dynamic leader assigns";
    const std::string member = joined->member_id;

    SyncGroupRequest sync;
    sync.group_id = "g";
    sync.generation_id = joined->generation_id;
    sync.member_id = member;
    sync.assignments = {{member, Bytes{7}}};
    EXPECT_EQ(client.call<SyncGroupResponse>(sync, 5)->error_code, 23) << "v5 needs the type and name";
    sync.protocol_type = "consumer";
    sync.protocol_name = "roundrobin";
    EXPECT_EQ(client.call<SyncGroupResponse>(sync, 5)->error_code, 23) << "INCONSISTENT_GROUP_PROTOCOL";
    sync.protocol_name = "range";
    auto synced = client.call<SyncGroupResponse>(sync, 5);
    ASSERT_TRUE(synced.ok()) << synced.status().to_string();
    EXPECT_EQ(synced->error_code, 0);
    EXPECT_EQ(synced->protocol_type, OptString("consumer"));
    EXPECT_EQ(synced->protocol_name, OptString("range"));
    EXPECT_EQ(synced->assignment, (Bytes{7}));

    EXPECT_EQ(commit_error(client, commit(member, joined->generation_id, 1, 5, "m"), 9), 0);
    OffsetFetchRequest fetched;
    fetched.groups = {{"g", member, joined->generation_id, std::nullopt}};
    auto offsets = client.call<OffsetFetchResponse>(fetched, 9);
    ASSERT_TRUE(offsets.ok()) << offsets.status().to_string();
    ASSERT_EQ(offsets->groups.size(), 1u);
    EXPECT_EQ(offsets->groups[0].error_code, 0);
    EXPECT_EQ(offsets->groups[0].topics.at(0).partitions.at(0).committed_offset, 5);

    ListGroupsRequest list;
    list.types_filter = {"Classic"};
    auto classic = client.call<ListGroupsResponse>(list, 5);
    ASSERT_TRUE(classic.ok()) << classic.status().to_string();
    ASSERT_EQ(classic->groups.size(), 1u);
    EXPECT_EQ(classic->groups[0].group_type, "classic");
    EXPECT_EQ(classic->groups[0].group_state, "Stable");
    list.types_filter = {"consumer"};
    EXPECT_TRUE(client.call<ListGroupsResponse>(list, 5)->groups.empty()) << "no KIP-848 groups here";

    LeaveGroupRequest leave;
    leave.group_id = "g";
    leave.members = {{member, std::nullopt, "shutting down"}};
    auto left = client.call<LeaveGroupResponse>(leave, 5);
    ASSERT_TRUE(left.ok()) << left.status().to_string();
    EXPECT_EQ(left->error_code, 0);
    EXPECT_EQ(left->members.at(0).error_code, 0);
  }));
}

}  // namespace
}  // namespace sluice::kafka
