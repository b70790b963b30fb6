// The group APIs' versions beyond what modern clients send, against Kafka 3.9's schemas: the oldest ones as
// clients without ApiVersions send them (golden bytes from kafka-python 2.0.2, script at the end), and the newest
// (JoinGroup 7-9, SyncGroup 5, LeaveGroup 5, OffsetCommit 9, OffsetFetch 9, ListGroups 5) as hand-built bytes.
// group_codec_test.cc has the round trips at every version.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/list_groups.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_fetch.h"
#include "core/protocol/messages/sync_group.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::expect_encodes_to;
using testing::golden_request;
using testing::hex;

using OptString = std::optional<std::string>;

// A consumer subscription for topic "t" (ConsumerProtocolSubscription v1), opaque to the broker.
const char* const kMeta = "0001 00000001 000174 ffffffff";

// kafka-python 2.0.2, client id "kafka-python"; `meta` is the bytes of kMeta.
// JoinGroupRequest[0]('g1', 10000, '', 'consumer', [('range', meta)]), id 21: no rebalance timeout.
constexpr const char* kJoinGroupV0Request =
    "00000046 000b 0000 00000015 000c6b61666b612d707974686f6e | 00026731 00002710 0000 0008636f6e73756d6572"
    " | 00000001 000572616e6765 0000000d 000100000001000174ffffffff";
// JoinGroupRequest[1]('g1', 10000, 300000, '', 'consumer', [('range', meta)]), id 22.
constexpr const char* kJoinGroupV1Request =
    "0000004a 000b 0001 00000016 000c6b61666b612d707974686f6e | 00026731 00002710 000493e0 0000"
    " 0008636f6e73756d6572 | 00000001 000572616e6765 0000000d 000100000001000174ffffffff";
// JoinGroupResponse[0](0, 3, 'range', 'm-1', 'm-1', [('m-1', meta)]): no throttle time.
constexpr const char* kJoinGroupV0Response =
    "0000 00000003 000572616e6765 00036d2d31 00036d2d31 | 00000001 00036d2d31 0000000d 000100000001000174ffffffff";
// SyncGroupRequest[0]('g1', 3, 'm-1', [('m-1', b'\x00\x01ab')]), id 26, and SyncGroupResponse[0](0, b'\x00\x01ab').
constexpr const char* kSyncGroupV0Request =
    "00000034 000e 0000 0000001a 000c6b61666b612d707974686f6e | 00026731 00000003 00036d2d31"
    " | 00000001 00036d2d31 00000004 00016162";
constexpr const char* kSyncGroupV0Response = "0000 00000004 00016162";
// HeartbeatRequest[0]('g1', 3, 'm-1'), id 27, and HeartbeatResponse[0](27).
constexpr const char* kHeartbeatV0Request =
    "00000023 000c 0000 0000001b 000c6b61666b612d707974686f6e | 00026731 00000003 00036d2d31";
constexpr const char* kHeartbeatV0Response = "001b";
// LeaveGroupRequest[0]('g1', 'm-1'), id 28, and LeaveGroupResponse[0](0).
constexpr const char* kLeaveGroupV0Request =
    "0000001f 000d 0000 0000001c 000c6b61666b612d707974686f6e | 00026731 00036d2d31";
constexpr const char* kLeaveGroupV0Response = "0000";
// OffsetCommitRequest[0]('g1', [('t', [(0, 42, 'meta')])]), id 23: no generation, member or timestamp.
constexpr const char* kOffsetCommitV0Request =
    "00000037 0008 0000 00000017 000c6b61666b612d707974686f6e | 00026731"
    " | 00000001 000174 00000001 | 00000000 000000000000002a 00046d657461";
// OffsetCommitRequest[1]('g1', 3, 'm-1', [('t', [(0, 42, 1700000000000, 'meta'), (1, 7, -1, '')])]), id 24.
constexpr const char* kOffsetCommitV1Request =
    "0000005e 0008 0001 00000018 000c6b61666b612d707974686f6e | 00026731 00000003 00036d2d31"
    " | 00000001 000174 00000002 | 00000000 000000000000002a 0000018bcfe56800 00046d657461"
    " | 00000001 0000000000000007 ffffffffffffffff 0000";
// OffsetCommitResponse[0]([('t', [(0, 0)])]).
constexpr const char* kOffsetCommitV0Response = "00000001 000174 00000001 00000000 0000";
// OffsetFetchRequest[0]('g1', [('t', [0, 1])]), id 25, and OffsetFetchResponse[0]([('t', [(0, 42, '', 0),
// (1, -1, '', 3)])]): what Kafka's v0 path answers (no metadata; 3 for a partition without an offset).
constexpr const char* kOffsetFetchV0Request =
    "0000002d 0009 0000 00000019 000c6b61666b612d707974686f6e | 00026731 | 00000001 000174 00000002 00000000 00000001";
constexpr const char* kOffsetFetchV0Response =
    "00000001 000174 00000002 | 00000000 000000000000002a 0000 0000 | 00000001 ffffffffffffffff 0000 0003";

// --- The oldest versions, as kafka-python sends them ---

TEST(GroupVersionsCodec, JoinGroupV0AndV1FromKafkaPython) {
  const auto v0 = golden_request<JoinGroupRequest>(hex(kJoinGroupV0Request));
  EXPECT_EQ(v0.group_id, "g1");
  EXPECT_EQ(v0.session_timeout_ms, 10000);
  EXPECT_EQ(v0.rebalance_timeout_ms, -1) << "absent in v0: the handler uses the session timeout";
  EXPECT_EQ(v0.protocol_type, "consumer");
  ASSERT_EQ(v0.protocols.size(), 1u);
  EXPECT_EQ(v0.protocols[0].metadata, hex(kMeta));
  const auto v1 = golden_request<JoinGroupRequest>(hex(kJoinGroupV1Request));
  EXPECT_EQ(v1.rebalance_timeout_ms, 300000);

  JoinGroupResponse response;
  response.throttle_time_ms = 5;  // not in v0
  response.generation_id = 3;
  response.protocol_type = "consumer";  // v7+
  response.protocol_name = "range";
  response.leader = "m-1";
  response.member_id = "m-1";
  response.members = {{"m-1", std::nullopt, hex(kMeta)}};
  expect_encodes_to(response, 0, hex(kJoinGroupV0Response));
  expect_encodes_to(response, 1, hex(kJoinGroupV0Response));  // v1's answer is v0's
}

TEST(GroupVersionsCodec, SyncHeartbeatLeaveV0FromKafkaPython) {
  const auto sync = golden_request<SyncGroupRequest>(hex(kSyncGroupV0Request));
  EXPECT_EQ(sync.generation_id, 3);
  ASSERT_EQ(sync.assignments.size(), 1u);
  EXPECT_EQ(sync.assignments[0].assignment, hex("00016162"));
  expect_encodes_to(SyncGroupResponse{7, 0, "consumer", "range", hex("00016162")}, 0, hex(kSyncGroupV0Response));
  const auto beat = golden_request<HeartbeatRequest>(hex(kHeartbeatV0Request));
  EXPECT_EQ(beat.member_id, "m-1");
  expect_encodes_to(HeartbeatResponse{7, 27}, 0, hex(kHeartbeatV0Response));
  const auto leave = golden_request<LeaveGroupRequest>(hex(kLeaveGroupV0Request));
  EXPECT_EQ(leave.member_id, "m-1");
  expect_encodes_to(LeaveGroupResponse{7, 0, {}}, 0, hex(kLeaveGroupV0Response));
}

TEST(GroupVersionsCodec, OffsetCommitV0AndV1FromKafkaPython) {
  const auto v0 = golden_request<OffsetCommitRequest>(hex(kOffsetCommitV0Request));
  EXPECT_EQ(v0.group_id, "g1");
  EXPECT_EQ(v0.generation_id, -1) << "v0 has no generation: a standalone commit";
  EXPECT_EQ(v0.member_id, "");
  ASSERT_EQ(v0.topics.size(), 1u);
  EXPECT_EQ(v0.topics[0].partitions[0].committed_offset, 42);
  EXPECT_EQ(v0.topics[0].partitions[0].commit_timestamp, -1);
  EXPECT_EQ(v0.topics[0].partitions[0].committed_metadata, OptString("meta"));

  const auto v1 = golden_request<OffsetCommitRequest>(hex(kOffsetCommitV1Request));
  EXPECT_EQ(v1.generation_id, 3);
  EXPECT_EQ(v1.member_id, "m-1");
  EXPECT_EQ(v1.retention_time_ms, -1) << "v2-4 only";
  ASSERT_EQ(v1.topics[0].partitions.size(), 2u);
  EXPECT_EQ(v1.topics[0].partitions[0].commit_timestamp, 1700000000000);
  EXPECT_EQ(v1.topics[0].partitions[1].commit_timestamp, -1);
  EXPECT_EQ(v1.topics[0].partitions[1].committed_metadata, OptString(""));

  const OffsetCommitResponse response{4, {{"t", {{0, 0}}}}};  // no throttle time before v3
  expect_encodes_to(response, 0, hex(kOffsetCommitV0Response));
  expect_encodes_to(response, 1, hex(kOffsetCommitV0Response));
}

TEST(GroupVersionsCodec, OffsetFetchV0FromKafkaPython) {
  const auto request = golden_request<OffsetFetchRequest>(hex(kOffsetFetchV0Request));
  EXPECT_EQ(request.group_id, "g1");
  ASSERT_TRUE(request.topics.has_value());
  EXPECT_EQ(request.topics->at(0).partition_indexes, (std::vector<int32_t>{0, 1}));
  OffsetFetchResponse response;
  response.throttle_time_ms = 3;  // v3+
  response.error_code = 16;       // v2+
  response.topics = {{"t", {{0, 42, 7, "", 0}, {1, -1, -1, "", 3}}}};
  expect_encodes_to(response, 0, hex(kOffsetFetchV0Response));
}

// --- The newest versions, flexible ---

TEST(GroupVersionsCodec, JoinGroupV7ToV9FlexibleBytes) {
  JoinGroupRequest request;
  request.group_id = "g";
  request.session_timeout_ms = 10000;
  request.rebalance_timeout_ms = 300000;
  request.member_id = "m";
  request.protocol_type = "consumer";
  request.protocols = {{"range", hex("0001")}};
  request.reason = "r";
  const char* const head = "0267 00002710 000493e0 026d 00 09636f6e73756d6572 | 02 0672616e6765 030001 00";
  expect_encodes_to(request, 7, hex(std::string(head) + " | 00"));
  expect_encodes_to(request, 8, hex(std::string(head) + " | 0272 | 00"));  // the reason
  request.reason.reset();
  expect_encodes_to(request, 9, hex(std::string(head) + " | 00 | 00"));  // a null reason

  JoinGroupResponse response;
  response.generation_id = 1;
  response.protocol_type = "consumer";
  response.protocol_name.reset();  // no protocol: null from v7
  response.leader = "m";
  response.member_id = "m";
  expect_encodes_to(response, 7, hex("00000000 0000 00000001 09636f6e73756d6572 00 026d 026d 01 00"));
  response.protocol_name = "range";
  response.skip_assignment = true;
  expect_encodes_to(response, 9, hex("00000000 0000 00000001 09636f6e73756d6572 0672616e6765 026d | 01 | 026d 01 00"));
  response.protocol_name.reset();
  Bytes out;
  EXPECT_FALSE(encode_message(response, 6, &out).ok()) << "a null protocol name before v7";
}

TEST(GroupVersionsCodec, SyncGroupV5AndLeaveGroupV5FlexibleBytes) {
  const SyncGroupRequest sync{"g", 1, "m", std::nullopt, "consumer", "range", {{"m", hex("ab")}}};
  expect_encodes_to(sync, 5, hex("0267 00000001 026d 00 09636f6e73756d6572 0672616e6765 | 02 026d 02ab 00 | 00"));
  expect_encodes_to(SyncGroupRequest{"g", 1, "m", std::nullopt, std::nullopt, std::nullopt, {}}, 5,
                    hex("0267 00000001 026d 00 00 00 01 00"));
  expect_encodes_to(SyncGroupResponse{0, 0, "consumer", "range", hex("ab")}, 5,
                    hex("00000000 0000 09636f6e73756d6572 0672616e6765 02ab 00"));
  expect_encodes_to(LeaveGroupRequest{"g", "", {{"m", std::nullopt, "bye"}}}, 5,
                    hex("0267 | 02 026d 00 04627965 00 | 00"));
  expect_encodes_to(LeaveGroupResponse{0, 0, {{"m", std::nullopt, 25}}}, 5,
                    hex("00000000 0000 | 02 026d 00 0019 00 | 00"));
}

TEST(GroupVersionsCodec, OffsetCommitV9AndOffsetFetchV9FlexibleBytes) {
  OffsetCommitRequest commit;
  commit.group_id = "g";
  commit.generation_id = 2;
  commit.member_id = "m";
  commit.topics = {{"t", {{0, 42, 5, 1700000000000, std::nullopt}}}};
  // v9 is v8's layout: no commit timestamp (v1 only), no retention time (v2-4).
  expect_encodes_to(commit, 9,
                    hex("0267 00000002 026d 00 | 02 0274 02 00000000 000000000000002a 00000005 00 00 00 | 00"));

  OffsetFetchRequest fetch;
  fetch.groups = {{"g", "m", 3, std::nullopt}};
  expect_encodes_to(fetch, 9, hex("02 | 0267 026d 00000003 00 00 | 00 00"));
  fetch.groups = {{"g", std::nullopt, -1, std::vector<OffsetFetchRequest::Topic>{{"t", {0}}}}};
  expect_encodes_to(fetch, 9, hex("02 | 0267 00 ffffffff 02 0274 02 00000000 00 00 | 00 00"));
}

TEST(GroupVersionsCodec, ListGroupsV5FlexibleBytes) {
  expect_encodes_to(ListGroupsRequest{{"Stable"}, {"classic"}}, 5, hex("02 07537461626c65 | 02 08636c6173736963 | 00"));
  expect_encodes_to(ListGroupsResponse{0, 0, {{"g", "consumer", "Empty", "classic"}}}, 5,
                    hex("00000000 0000 | 02 0267 09636f6e73756d6572 06456d707479 08636c6173736963 00 | 00"));
}

// The golden bytes' script (/usr/bin/python3, kafka-python 2.0.2), as in group_codec_test.cc:
//   from kafka.protocol.parser import KafkaProtocol
//   from kafka.protocol import group as g, commit as c
//   def frame(req, cid):
//       p = KafkaProtocol(client_id='kafka-python'); p.send_request(req, correlation_id=cid)
//       return p.send_bytes().hex()
//   print(frame(g.JoinGroupRequest[0]('g1', 10000, '', 'consumer', [('range', meta)]), 21))
//   r = g.JoinGroupResponse[0](0, 3, 'range', 'm-1', 'm-1', [('m-1', meta)]); print(r.encode().hex())  # and so on

}  // namespace
}  // namespace sluice::protocol
