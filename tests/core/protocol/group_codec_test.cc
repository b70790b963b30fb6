// The consumer-group codecs: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, ListGroups,
// DescribeGroups, DeleteGroups and OffsetDelete. Golden bytes from kafka-python 2.0.2 for the non-flexible versions
// it has (script at the end), hand-built bytes from Kafka 3.9's schemas for flexible ones, round trips of messages
// using every field at every served version, and truncated bodies. The versions beyond what these clients send
// (JoinGroup 0-1 and 7-9, OffsetCommit 0-1, ...) have their bytes in group_versions_codec_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/messages/delete_groups.h"
#include "core/protocol/messages/describe_groups.h"
#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/list_groups.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_delete.h"
#include "core/protocol/messages/offset_fetch.h"
#include "core/protocol/messages/sync_group.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::expect_encodes_to;
using testing::expect_truncations_fail;
using testing::golden_request;
using testing::hex;
using testing::round_trip;

using OptString = std::optional<std::string>;

// A consumer subscription for topic "t" (ConsumerProtocolSubscription v1), opaque to the broker.
const char* const kMeta = "0001 00000001 000174 ffffffff";

// kafka-python 2.0.2, client id "kafka-python"; `meta` is the bytes of kMeta.
// JoinGroupRequest[2]('g1', 10000, 300000, '', 'consumer', [('range', meta), ('roundrobin', b'')]), id 11.
constexpr const char* kJoinGroupV2Request =
    "0000005a 000b 0002 0000000b 000c6b61666b612d707974686f6e | 00026731 00002710 000493e0 0000"
    " 0008636f6e73756d6572 | 00000002 000572616e6765 0000000d 0001000000010001 74ffffffff"
    " 000a726f756e64726f62696e 00000000";
// JoinGroupResponse[2](0, 0, 3, 'range', 'm-1', 'm-1', [('m-1', meta), ('m-2', b'')]).
constexpr const char* kJoinGroupV2Response =
    "00000000 0000 00000003 000572616e6765 00036d2d31 00036d2d31 | 00000002"
    " 00036d2d31 0000000d 000100000001000174ffffffff | 00036d2d32 00000000";
// SyncGroupRequest[1]('g1', 3, 'm-1', [('m-1', b'\x00\x01ab'), ('m-2', b'')]), id 12.
constexpr const char* kSyncGroupV1Request =
    "0000003d 000e 0001 0000000c 000c6b61666b612d707974686f6e | 00026731 00000003 00036d2d31"
    " | 00000002 00036d2d31 00000004 00016162 | 00036d2d32 00000000";
// SyncGroupResponse[1](0, 27, b'\x00\x01ab').
constexpr const char* kSyncGroupV1Response = "00000000 001b 00000004 00016162";
// HeartbeatRequest[1]('g1', 3, 'm-1'), id 13.
constexpr const char* kHeartbeatV1Request =
    "00000023 000c 0001 0000000d 000c6b61666b612d707974686f6e | 00026731 00000003 00036d2d31";
// HeartbeatResponse[1](5, 22).
constexpr const char* kHeartbeatV1Response = "00000005 0016";
// LeaveGroupRequest[1]('g1', 'm-1'), id 14.
constexpr const char* kLeaveGroupV1Request =
    "0000001f 000d 0001 0000000e 000c6b61666b612d707974686f6e | 00026731 00036d2d31";
// LeaveGroupResponse[1](0, 25).
constexpr const char* kLeaveGroupV1Response = "00000000 0019";
// OffsetCommitRequest[2]('g1', 3, 'm-1', -1, [('t', [(0, 42, 'meta'), (1, 7, '')])]), id 15.
constexpr const char* kOffsetCommitV2Request =
    "00000056 0008 0002 0000000f 000c6b61666b612d707974686f6e | 00026731 00000003 00036d2d31 ffffffffffffffff"
    " | 00000001 000174 00000002 | 00000000 000000000000002a 00046d657461 | 00000001 0000000000000007 0000";
// OffsetCommitResponse[2]([('t', [(0, 0), (1, 22)])]) and OffsetCommitResponse[3](4, [('t', [(0, 0)])]).
constexpr const char* kOffsetCommitV2Response = "00000001 000174 00000002 00000000 0000 00000001 0016";
constexpr const char* kOffsetCommitV3Response = "00000004 | 00000001 000174 00000001 00000000 0000";
// OffsetFetchRequest[1]('g1', [('t', [0, 1])]), id 16, and OffsetFetchRequest[3]('g1', None), id 17.
constexpr const char* kOffsetFetchV1Request =
    "0000002d 0009 0001 00000010 000c6b61666b612d707974686f6e | 00026731 | 00000001 000174 00000002 00000000 00000001";
constexpr const char* kOffsetFetchV3Request =
    "0000001e 0009 0003 00000011 000c6b61666b612d707974686f6e | 00026731 ffffffff";
// OffsetFetchResponse[1]([('t', [(0, 42, 'meta', 0), (1, -1, '', 0)])]).
constexpr const char* kOffsetFetchV1Response =
    "00000001 000174 00000002 | 00000000 000000000000002a 00046d657461 0000 | 00000001 ffffffffffffffff 0000 0000";
// OffsetFetchResponse[3](0, [('t', [(0, 42, None, 0)])], 16).
constexpr const char* kOffsetFetchV3Response =
    "00000000 | 00000001 000174 00000001 00000000 000000000000002a ffff 0000 | 0010";
// ListGroupsRequest[2](), id 18, and ListGroupsResponse[2](0, 0, [('g1', 'consumer'), ('g2', '')]).
constexpr const char* kListGroupsV2Request = "00000016 0010 0001 00000012 000c6b61666b612d707974686f6e";
constexpr const char* kListGroupsV2Response =
    "00000000 0000 | 00000002 00026731 0008636f6e73756d6572 | 00026732 0000";
// DescribeGroupsRequest[3](['g1', 'g2'], True), id 19.
constexpr const char* kDescribeGroupsV3Request =
    "00000023 000f 0003 00000013 000c6b61666b612d707974686f6e | 00000002 00026731 00026732 | 01";
// DescribeGroupsResponse[1](0, [(0, 'g1', 'Stable', 'consumer', 'range', [('m-1', 'c1', '/127.0.0.1', meta,
//   b'\x00\x01ab')]), (16, 'g2', 'Dead', '', '', [])]). (kafka-python's v3 class lacks AuthorizedOperations.)
constexpr const char* kDescribeGroupsV1Response =
    "00000000 | 00000002 | 0000 00026731 0006537461626c65 0008636f6e73756d6572 000572616e6765 00000001"
    " 00036d2d31 00026331 000a2f3132372e302e302e31 0000000d 000100000001000174ffffffff 00000004 00016162"
    " | 0010 00026732 000444656164 0000 0000 00000000";
// DeleteGroupsRequest[1](['g1', 'g2']), id 20, and DeleteGroupsResponse[1](0, [('g1', 0), ('g2', 68)]).
constexpr const char* kDeleteGroupsV1Request =
    "00000022 002a 0001 00000014 000c6b61666b612d707974686f6e | 00000002 00026731 00026732";
constexpr const char* kDeleteGroupsV1Response = "00000000 | 00000002 00026731 0000 00026732 0044";

Bytes bytes_of(const char* text) { return hex(text); }

// --- JoinGroup ---

TEST(GroupCodec, JoinGroupV2FromKafkaPython) {
  const auto request = golden_request<JoinGroupRequest>(hex(kJoinGroupV2Request));
  EXPECT_EQ(request.group_id, "g1");
  EXPECT_EQ(request.session_timeout_ms, 10000);
  EXPECT_EQ(request.rebalance_timeout_ms, 300000);
  EXPECT_EQ(request.member_id, "");
  EXPECT_EQ(request.protocol_type, "consumer");
  ASSERT_EQ(request.protocols.size(), 2u);
  EXPECT_EQ(request.protocols[0].name, "range");
  EXPECT_EQ(request.protocols[0].metadata, bytes_of(kMeta));
  EXPECT_TRUE(request.protocols[1].metadata.empty());

  JoinGroupResponse response;
  response.generation_id = 3;
  response.protocol_name = "range";
  response.leader = "m-1";
  response.member_id = "m-1";
  response.members = {{"m-1", std::nullopt, bytes_of(kMeta)}, {"m-2", std::nullopt, {}}};
  expect_encodes_to(response, 2, hex(kJoinGroupV2Response));
}

TEST(GroupCodec, JoinGroupV6FlexibleBytes) {
  JoinGroupRequest request;
  request.group_id = "g";
  request.session_timeout_ms = 10000;
  request.rebalance_timeout_ms = 300000;
  request.protocol_type = "consumer";
  request.protocols = {{"range", hex("0001")}};
  // Compact strings and bytes (length + 1), null GroupInstanceId as 00, a tagged-field block per struct.
  expect_encodes_to(request, 6,
                    hex("0267 00002710 000493e0 01 00 09636f6e73756d6572 | 02 0672616e6765 030001 00 | 00"));
  JoinGroupResponse response;
  response.error_code = 79;  // MEMBER_ID_REQUIRED
  response.member_id = "m";
  response.members = {{"m", "i", hex("ab")}};
  expect_encodes_to(response, 6, hex("00000000 004f ffffffff 01 01 026d | 02 026d 0269 02ab 00 | 00"));
}

TEST(GroupCodec, JoinGroupRoundTripsAtEveryVersion) {
  JoinGroupRequest request{
      "g", 6000, 9000, "m-1", "static-1", "consumer", {{"range", hex("0102")}, {"rr", {}}}, "restarted"};
  JoinGroupResponse response{
      7, 0, 4, "consumer", "range", "m-1", true, "m-2", {{"m-1", "static-1", hex("01")}, {"m-2", {}, {}}}};
  for (int16_t v = 0; v <= 9; ++v) {
    const JoinGroupRequest back = round_trip(request, v);
    EXPECT_EQ(back.rebalance_timeout_ms, v >= 1 ? 9000 : -1);
    EXPECT_EQ(back.group_instance_id, v >= 5 ? OptString("static-1") : std::nullopt);
    EXPECT_EQ(back.protocols[0].metadata, hex("0102"));
    EXPECT_EQ(back.reason, v >= 8 ? OptString("restarted") : std::nullopt);
    const JoinGroupResponse answer = round_trip(response, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 2 ? 7 : 0);
    EXPECT_EQ(answer.generation_id, 4);
    EXPECT_EQ(answer.protocol_type, v >= 7 ? OptString("consumer") : std::nullopt);
    EXPECT_EQ(answer.protocol_name, OptString("range"));
    EXPECT_EQ(answer.skip_assignment, v >= 9);
    EXPECT_EQ(answer.members[0].group_instance_id, v >= 5 ? OptString("static-1") : std::nullopt);
    EXPECT_EQ(answer.members[0].metadata, hex("01"));
  }
}

// --- SyncGroup, Heartbeat ---

TEST(GroupCodec, SyncGroupAndHeartbeatV1FromKafkaPython) {
  const auto sync = golden_request<SyncGroupRequest>(hex(kSyncGroupV1Request));
  EXPECT_EQ(sync.generation_id, 3);
  EXPECT_EQ(sync.member_id, "m-1");
  ASSERT_EQ(sync.assignments.size(), 2u);
  EXPECT_EQ(sync.assignments[0].assignment, hex("00016162"));
  expect_encodes_to(SyncGroupResponse{0, 27, {}, {}, hex("00016162")}, 1, hex(kSyncGroupV1Response));

  const auto heartbeat = golden_request<HeartbeatRequest>(hex(kHeartbeatV1Request));
  EXPECT_EQ(heartbeat.group_id, "g1");
  EXPECT_EQ(heartbeat.generation_id, 3);
  EXPECT_EQ(heartbeat.member_id, "m-1");
  expect_encodes_to(HeartbeatResponse{5, 22}, 1, hex(kHeartbeatV1Response));
}

TEST(GroupCodec, SyncGroupAndHeartbeatV4FlexibleBytes) {
  expect_encodes_to(SyncGroupRequest{"g", 1, "m", std::nullopt, {}, {}, {{"m", hex("ab")}}}, 4,
                    hex("0267 00000001 026d 00 | 02 026d 02ab 00 | 00"));
  expect_encodes_to(SyncGroupResponse{0, 0, {}, {}, hex("ab")}, 4, hex("00000000 0000 02ab 00"));
  expect_encodes_to(HeartbeatRequest{"g", 1, "m", "i"}, 4, hex("0267 00000001 026d 0269 00"));
  expect_encodes_to(HeartbeatResponse{0, 27}, 4, hex("00000000 001b 00"));
}

TEST(GroupCodec, SyncGroupAndHeartbeatRoundTripAtEveryVersion) {
  const SyncGroupRequest sync{"g", 5, "m-1", "static-1", "consumer", "range", {{"m-1", hex("0a0b")}, {"m-2", {}}}};
  const HeartbeatRequest heartbeat{"g", 5, "m-1", "static-1"};
  for (int16_t v = 0; v <= 5; ++v) {
    const SyncGroupRequest back = round_trip(sync, v);
    EXPECT_EQ(back.group_instance_id, v >= 3 ? OptString("static-1") : std::nullopt);
    EXPECT_EQ(back.protocol_type, v >= 5 ? OptString("consumer") : std::nullopt);
    EXPECT_EQ(back.protocol_name, v >= 5 ? OptString("range") : std::nullopt);
    EXPECT_EQ(back.assignments[0].assignment, hex("0a0b"));
    const SyncGroupResponse synced = round_trip(SyncGroupResponse{9, 22, "consumer", "range", hex("0c")}, v);
    EXPECT_EQ(synced.throttle_time_ms, v >= 1 ? 9 : 0);
    EXPECT_EQ(synced.protocol_name, v >= 5 ? OptString("range") : std::nullopt);
    EXPECT_EQ(synced.assignment, hex("0c"));
    if (v > 4) continue;  // Heartbeat ends at v4
    EXPECT_EQ(round_trip(heartbeat, v).group_instance_id, v >= 3 ? OptString("static-1") : std::nullopt);
    const HeartbeatResponse beat = round_trip(HeartbeatResponse{9, 27}, v);
    EXPECT_EQ(beat.throttle_time_ms, v >= 1 ? 9 : 0);
    EXPECT_EQ(beat.error_code, 27);
  }
}

// --- LeaveGroup ---

TEST(GroupCodec, LeaveGroupV1FromKafkaPythonAndV4Flexible) {
  const auto request = golden_request<LeaveGroupRequest>(hex(kLeaveGroupV1Request));
  EXPECT_EQ(request.group_id, "g1");
  EXPECT_EQ(request.member_id, "m-1");
  expect_encodes_to(LeaveGroupResponse{0, 25, {}}, 1, hex(kLeaveGroupV1Response));
  // v3+ carries a batch of members instead of one MemberId.
  expect_encodes_to(LeaveGroupRequest{"g", "", {{"m", std::nullopt, std::nullopt}}}, 4,
                    hex("0267 | 02 026d 00 00 | 00"));
  expect_encodes_to(LeaveGroupResponse{0, 0, {{"m", "i", 25}}}, 4, hex("00000000 0000 | 02 026d 0269 0019 00 | 00"));
}

TEST(GroupCodec, LeaveGroupRoundTripsAtEveryVersion) {
  const LeaveGroupRequest request{"g", "m-1", {{"m-1", std::nullopt, std::nullopt}, {"m-2", "static-2", "bye"}}};
  const LeaveGroupResponse response{3, 0, {{"m-1", std::nullopt, 0}, {"m-2", "static-2", 25}}};
  for (int16_t v = 0; v <= 5; ++v) {
    const LeaveGroupRequest back = round_trip(request, v);
    EXPECT_EQ(back.member_id, v <= 2 ? "m-1" : "");
    ASSERT_EQ(back.members.size(), v >= 3 ? 2u : 0u);
    if (v >= 3) {
      EXPECT_EQ(back.members[1].reason, v >= 5 ? OptString("bye") : std::nullopt);
    }
    const LeaveGroupResponse answer = round_trip(response, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 1 ? 3 : 0);
    ASSERT_EQ(answer.members.size(), v >= 3 ? 2u : 0u);
    if (v >= 3) {
      EXPECT_EQ(answer.members[1].group_instance_id, OptString("static-2"));
      EXPECT_EQ(answer.members[1].error_code, 25);
    }
  }
}

// --- OffsetCommit ---

TEST(GroupCodec, OffsetCommitFromKafkaPython) {
  const auto request = golden_request<OffsetCommitRequest>(hex(kOffsetCommitV2Request));
  EXPECT_EQ(request.group_id, "g1");
  EXPECT_EQ(request.generation_id, 3);
  EXPECT_EQ(request.member_id, "m-1");
  EXPECT_EQ(request.retention_time_ms, -1);
  ASSERT_EQ(request.topics.size(), 1u);
  ASSERT_EQ(request.topics[0].partitions.size(), 2u);
  EXPECT_EQ(request.topics[0].partitions[0].committed_offset, 42);
  EXPECT_EQ(request.topics[0].partitions[0].committed_metadata, OptString("meta"));
  EXPECT_EQ(request.topics[0].partitions[1].committed_metadata, OptString(""));

  OffsetCommitResponse response;
  response.throttle_time_ms = 4;
  response.topics = {{"t", {{0, 0}, {1, 22}}}};
  expect_encodes_to(response, 2, hex(kOffsetCommitV2Response));
  response.topics[0].partitions.pop_back();
  expect_encodes_to(response, 3, hex(kOffsetCommitV3Response));
}

TEST(GroupCodec, OffsetCommitV8FlexibleBytes) {
  OffsetCommitRequest request;
  request.group_id = "g";
  request.generation_id = 2;
  request.member_id = "m";
  request.topics = {{"t", {{0, 42, 5, -1, std::nullopt}}}};
  // No retention time after v4; GroupInstanceId null; the partition's leader epoch, null metadata as 00.
  expect_encodes_to(request, 8,
                    hex("0267 00000002 026d 00 | 02 0274 02 00000000 000000000000002a 00000005 00 00 00 | 00"));
  expect_encodes_to(OffsetCommitResponse{0, {{"t", {{0, 0}}}}}, 8,
                    hex("00000000 | 02 0274 02 00000000 0000 00 00 | 00"));
}

TEST(GroupCodec, OffsetCommitRoundTripsAtEveryVersion) {
  OffsetCommitRequest request;
  request.group_id = "g";
  request.generation_id = 4;
  request.member_id = "m-1";
  request.group_instance_id = "static-1";
  request.retention_time_ms = 60000;
  request.topics = {{"a", {{0, 10, 3, 1700000000000, "x"}, {1, 11, -1, -1, std::nullopt}}}, {"b", {}}};
  const OffsetCommitResponse response{6, {{"a", {{0, 0}, {1, 27}}}}};
  for (int16_t v = 0; v <= 9; ++v) {
    const OffsetCommitRequest back = round_trip(request, v);
    EXPECT_EQ(back.generation_id, v >= 1 ? 4 : -1);
    EXPECT_EQ(back.member_id, v >= 1 ? "m-1" : "");
    EXPECT_EQ(back.topics[0].partitions[0].commit_timestamp, v == 1 ? 1700000000000 : -1);
    EXPECT_EQ(back.group_instance_id, v >= 7 ? OptString("static-1") : std::nullopt);
    EXPECT_EQ(back.retention_time_ms, v >= 2 && v <= 4 ? 60000 : -1);
    EXPECT_EQ(back.topics[0].partitions[0].committed_leader_epoch, v >= 6 ? 3 : -1);
    EXPECT_EQ(back.topics[0].partitions[0].committed_metadata, OptString("x"));
    EXPECT_FALSE(back.topics[0].partitions[1].committed_metadata.has_value());
    const OffsetCommitResponse answer = round_trip(response, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 3 ? 6 : 0);
    EXPECT_EQ(answer.topics[0].partitions[1].error_code, 27);
  }
}

// --- OffsetFetch ---

TEST(GroupCodec, OffsetFetchFromKafkaPython) {
  const auto v1 = golden_request<OffsetFetchRequest>(hex(kOffsetFetchV1Request));
  EXPECT_EQ(v1.group_id, "g1");
  ASSERT_TRUE(v1.topics.has_value());
  ASSERT_EQ(v1.topics->size(), 1u);
  EXPECT_EQ(v1.topics->at(0).partition_indexes, (std::vector<int32_t>{0, 1}));
  const auto v3 = golden_request<OffsetFetchRequest>(hex(kOffsetFetchV3Request));
  EXPECT_FALSE(v3.topics.has_value());  // null: every partition the group committed

  OffsetFetchResponse response;
  response.topics = {{"t", {{0, 42, -1, "meta", 0}, {1, -1, -1, "", 0}}}};
  expect_encodes_to(response, 1, hex(kOffsetFetchV1Response));
  response.topics = {{"t", {{0, 42, -1, std::nullopt, 0}}}};
  response.error_code = 16;
  expect_encodes_to(response, 3, hex(kOffsetFetchV3Response));
}

TEST(GroupCodec, OffsetFetchV8BatchedFlexibleBytes) {
  OffsetFetchRequest request;
  request.groups = {{"g", {}, -1, std::nullopt}, {"h", {}, -1, std::vector<OffsetFetchRequest::Topic>{{"t", {0, 1}}}}};
  request.require_stable = true;
  expect_encodes_to(request, 8, hex("03 | 0267 00 00 | 0268 02 0274 03 00000000 00000001 00 00 | 01 00"));
  OffsetFetchResponse response;
  response.groups = {{"g", {{"t", {{0, 42, -1, "", 0}}}}, 0}};
  expect_encodes_to(response, 8,
                    hex("00000000 | 02 0267 02 0274 02 00000000 000000000000002a ffffffff 01 0000 00 00 0000 00 | 00"));
}

TEST(GroupCodec, OffsetFetchRoundTripsAtEveryVersion) {
  OffsetFetchRequest request;
  request.group_id = "g";
  request.topics = std::vector<OffsetFetchRequest::Topic>{{"a", {0, 2}}};
  request.groups = {{"g", "m-1", 3, std::nullopt}, {"h", {}, -1, std::vector<OffsetFetchRequest::Topic>{{"a", {1}}}}};
  request.require_stable = true;
  OffsetFetchResponse response;
  response.throttle_time_ms = 8;
  response.topics = {{"a", {{0, 5, 2, "m", 0}, {2, -1, -1, std::nullopt, 0}}}};
  response.error_code = 16;
  response.groups = {{"g", {{"a", {{0, 5, 2, "m", 0}}}}, 0}, {"h", {}, 69}};
  for (int16_t v = 0; v <= 9; ++v) {
    const OffsetFetchRequest back = round_trip(request, v);
    EXPECT_EQ(back.group_id, v <= 7 ? "g" : "");
    EXPECT_EQ(back.topics.has_value() && back.topics->size() == 1, v <= 7);
    ASSERT_EQ(back.groups.size(), v >= 8 ? 2u : 0u);
    if (v >= 8) {
      EXPECT_EQ(back.groups[0].member_id, v >= 9 ? OptString("m-1") : std::nullopt);
      EXPECT_EQ(back.groups[0].member_epoch, v >= 9 ? 3 : -1);
    }
    EXPECT_EQ(back.require_stable, v >= 7);
    const OffsetFetchResponse answer = round_trip(response, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 3 ? 8 : 0);
    EXPECT_EQ(answer.error_code, v >= 2 && v <= 7 ? 16 : 0);
    EXPECT_EQ(answer.topics.size(), v <= 7 ? 1u : 0u);
    if (v <= 7) {
      EXPECT_EQ(answer.topics[0].partitions[0].committed_leader_epoch, v >= 5 ? 2 : -1);
    }
    ASSERT_EQ(answer.groups.size(), v >= 8 ? 2u : 0u);
    if (v >= 8) {
      EXPECT_EQ(answer.groups[1].error_code, 69);
    }
  }
}

TEST(GroupCodec, OffsetFetchNullTopicsRefusedBeforeV2) {
  OffsetFetchRequest request;
  request.group_id = "g";
  request.topics.reset();
  Bytes out;
  EXPECT_FALSE(encode_message(request, 1, &out).ok());
  EXPECT_FALSE(decode_message<OffsetFetchRequest>(hex("000167 ffffffff"), 1).ok());
  EXPECT_FALSE(round_trip(request, 2).topics.has_value());
}

// --- ListGroups, DescribeGroups, DeleteGroups ---

TEST(GroupCodec, ListDescribeDeleteGroupsFromKafkaPython) {
  golden_request<ListGroupsRequest>(hex(kListGroupsV2Request));
  expect_encodes_to(ListGroupsResponse{0, 0, {{"g1", "consumer", "", ""}, {"g2", "", "", ""}}}, 2,
                    hex(kListGroupsV2Response));

  const auto describe = golden_request<DescribeGroupsRequest>(hex(kDescribeGroupsV3Request));
  EXPECT_EQ(describe.groups, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_TRUE(describe.include_authorized_operations);
  DescribeGroupsResponse described;
  DescribeGroupsResponse::Member member{"m-1", std::nullopt, "c1", "/127.0.0.1", bytes_of(kMeta), hex("00016162")};
  described.groups = {{0, "g1", "Stable", "consumer", "range", {member}}, {16, "g2", "Dead", "", "", {}}};
  expect_encodes_to(described, 1, hex(kDescribeGroupsV1Response));

  const auto deleted = golden_request<DeleteGroupsRequest>(hex(kDeleteGroupsV1Request));
  EXPECT_EQ(deleted.groups_names, (std::vector<std::string>{"g1", "g2"}));
  expect_encodes_to(DeleteGroupsResponse{0, {{"g1", 0}, {"g2", 68}}}, 1, hex(kDeleteGroupsV1Response));
}

TEST(GroupCodec, ListDescribeDeleteGroupsFlexibleBytes) {
  expect_encodes_to(ListGroupsRequest{{"Stable"}, {}}, 4, hex("02 07537461626c65 00"));
  expect_encodes_to(ListGroupsResponse{0, 0, {{"g", "consumer", "Empty", ""}}}, 4,
                    hex("00000000 0000 | 02 0267 09636f6e73756d6572 06456d707479 00 | 00"));
  expect_encodes_to(ListGroupsRequest{}, 3, hex("00"));
  expect_encodes_to(DescribeGroupsRequest{{"g"}, false}, 5, hex("02 0267 00 00"));
  DescribeGroupsResponse described;
  described.groups = {{0, "g", "Empty", "consumer", "", {{"m", "i", "c", "h", hex("01"), {}}}, -2147483648}};
  expect_encodes_to(described, 5,
                    hex("00000000 | 02 0000 0267 06456d707479 09636f6e73756d6572 01"
                        " | 02 026d 0269 0263 0268 0201 01 00 | 80000000 00 | 00"));
  expect_encodes_to(DeleteGroupsRequest{{"g"}}, 2, hex("02 0267 00"));
  expect_encodes_to(DeleteGroupsResponse{0, {{"g", 69}}}, 2, hex("00000000 | 02 0267 0045 00 | 00"));
}

TEST(GroupCodec, ListDescribeDeleteGroupsRoundTripAtEveryVersion) {
  const ListGroupsResponse listed{2, 0, {{"g", "consumer", "Stable", "classic"}, {"h", "", "Empty", "classic"}}};
  for (int16_t v = 0; v <= 5; ++v) {
    const ListGroupsRequest filters = round_trip(ListGroupsRequest{{"Stable", "Empty"}, {"classic"}}, v);
    EXPECT_EQ(filters.states_filter.size(), v >= 4 ? 2u : 0u);
    EXPECT_EQ(filters.types_filter.size(), v >= 5 ? 1u : 0u);
    const ListGroupsResponse answer = round_trip(listed, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 1 ? 2 : 0);
    EXPECT_EQ(answer.groups[0].group_state, v >= 4 ? "Stable" : "");
    EXPECT_EQ(answer.groups[0].group_type, v >= 5 ? "classic" : "");
    EXPECT_EQ(answer.groups[0].protocol_type, "consumer");
  }
  DescribeGroupsResponse described;
  described.throttle_time_ms = 1;
  described.groups = {{0, "g", "Stable", "consumer", "range", {{"m", "i", "c", "/h", hex("01"), hex("02")}}, 8},
                      {69, "x", "Dead", "", "", {}, kAuthorizedOperationsOmitted}};
  for (int16_t v = 0; v <= 5; ++v) {
    EXPECT_EQ(round_trip(DescribeGroupsRequest{{"g", "x"}, true}, v).include_authorized_operations, v >= 3);
    const DescribeGroupsResponse answer = round_trip(described, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 1 ? 1 : 0);
    EXPECT_EQ(answer.groups[0].authorized_operations, v >= 3 ? 8 : kAuthorizedOperationsOmitted);
    EXPECT_EQ(answer.groups[0].members[0].group_instance_id, v >= 4 ? OptString("i") : std::nullopt);
    EXPECT_EQ(answer.groups[0].members[0].member_assignment, hex("02"));
    EXPECT_EQ(answer.groups[1].error_code, 69);
  }
  for (int16_t v = 0; v <= 2; ++v) {
    EXPECT_EQ(round_trip(DeleteGroupsRequest{{"g", "h"}}, v).groups_names.size(), 2u);
    const DeleteGroupsResponse answer = round_trip(DeleteGroupsResponse{3, {{"g", 0}, {"h", 68}}}, v);
    EXPECT_EQ(answer.throttle_time_ms, 3);
    EXPECT_EQ(answer.results[1].error_code, 68);
  }
}

// --- OffsetDelete (kafka-python 2.0.2 has no class for it) ---

TEST(GroupCodec, OffsetDeleteV0BytesAndRoundTrip) {
  const OffsetDeleteRequest request{"g", {{"t", {{0}, {3}}}}};
  expect_encodes_to(request, 0, hex("000167 | 00000001 000174 00000002 00000000 00000003"));
  const OffsetDeleteResponse response{0, 5, {{"t", {{0, 0}, {3, 86}}}}};
  expect_encodes_to(response, 0, hex("0000 00000005 | 00000001 000174 00000002 00000000 0000 00000003 0056"));
  EXPECT_EQ(round_trip(request, 0).topics[0].partitions[1].partition_index, 3);
  EXPECT_EQ(round_trip(response, 0).topics[0].partitions[1].error_code, 86);
}

// --- Truncated bodies fail cleanly at every cut, for every API and served version ---

TEST(GroupCodec, TruncatedBodiesFailAtEveryCut) {
  for (int16_t v = 0; v <= 9; ++v) {
    expect_truncations_fail(JoinGroupRequest{"g", 6000, 9000, "m", "i", "consumer", {{"range", hex("01")}}, "r"}, v);
    expect_truncations_fail(JoinGroupResponse{0, 0, 1, "consumer", "range", "m", true, "m", {{"m", "i", hex("01")}}},
                            v);
  }
  for (int16_t v = 0; v <= 5; ++v) {
    expect_truncations_fail(SyncGroupRequest{"g", 1, "m", "i", "consumer", "range", {{"m", hex("01")}}}, v);
    expect_truncations_fail(SyncGroupResponse{0, 0, "consumer", "range", hex("01")}, v);
    expect_truncations_fail(LeaveGroupRequest{"g", "m", {{"m", "i", "r"}}}, v);
    expect_truncations_fail(LeaveGroupResponse{0, 0, {{"m", "i", 0}}}, v);
    expect_truncations_fail(ListGroupsResponse{0, 0, {{"g", "consumer", "Stable", "classic"}}}, v);
    if (v > 4) continue;
    expect_truncations_fail(HeartbeatRequest{"g", 1, "m", "i"}, v);
    expect_truncations_fail(HeartbeatResponse{0, 27}, v);
  }
  expect_truncations_fail(ListGroupsRequest{{"Stable"}, {"classic"}}, 5);
  expect_truncations_fail(ListGroupsRequest{{"Stable"}, {}}, 4);
  expect_truncations_fail(ListGroupsRequest{}, 3);
  for (int16_t v = 0; v <= 9; ++v) {
    expect_truncations_fail(OffsetCommitRequest{"g", 1, "m", "i", -1, {{"t", {{0, 1, 2, 3, "x"}}}}}, v);
    expect_truncations_fail(OffsetCommitResponse{0, {{"t", {{0, 0}}}}}, v);
  }
  OffsetFetchRequest fetch;
  fetch.group_id = "g";
  fetch.topics = std::vector<OffsetFetchRequest::Topic>{{"t", {0}}};
  fetch.groups = {{"g", "m", 1, std::nullopt}};
  OffsetFetchResponse fetched{0, {{"t", {{0, 1, 2, "x", 0}}}}, 0, {{"g", {{"t", {{0, 1, 2, "x", 0}}}}, 0}}};
  for (int16_t v = 0; v <= 9; ++v) {
    expect_truncations_fail(fetch, v);
    expect_truncations_fail(fetched, v);
  }
  for (int16_t v = 0; v <= 5; ++v) {
    expect_truncations_fail(DescribeGroupsRequest{{"g"}, true}, v);
    expect_truncations_fail(DescribeGroupsResponse{0, {{0, "g", "Stable", "c", "r", {{"m", "i", "c", "h", {}, {}}}}}},
                            v);
  }
  for (int16_t v = 0; v <= 2; ++v) {
    expect_truncations_fail(DeleteGroupsRequest{{"g"}}, v);
    expect_truncations_fail(DeleteGroupsResponse{0, {{"g", 0}}}, v);
  }
  expect_truncations_fail(OffsetDeleteRequest{"g", {{"t", {{0}}}}}, 0);
  expect_truncations_fail(OffsetDeleteResponse{0, 0, {{"t", {{0, 0}}}}}, 0);
}

// The golden bytes' script (/usr/bin/python3, kafka-python 2.0.2):
//   from kafka.protocol.parser import KafkaProtocol
//   from kafka.protocol import group as g, commit as c, admin as a
//   def frame(req, cid):
//       p = KafkaProtocol(client_id='kafka-python'); p.send_request(req, correlation_id=cid)
//       return p.send_bytes().hex()
//   meta = b'\x00\x01\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff'
//   print(frame(g.JoinGroupRequest[2]('g1', 10000, 300000, '', 'consumer', [('range', meta), ...]), 11))
//   print(g.JoinGroupResponse[2](0, 0, 3, 'range', 'm-1', 'm-1', [...]).encode().hex())   # and so on

}  // namespace
}  // namespace sluice::protocol
