// ListOffsets v0-9: kafka-python's bytes for v0 (MaxNumOffsets and OldStyleOffsets), v1, v2 and v4, hand-built
// flexible v6 bytes, and round trips at every version.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/protocol/header.h"
#include "core/protocol/messages/list_offsets.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::golden_request;
using testing::hex;
using testing::round_trip;

// kafka-python 2.0.2 (client id "kafka-python"), encoded offline with its protocol classes:
//   OffsetRequest[0](replica_id=-1, topics=[('t', [(0, -1, 3), (1, -2, 1)])]), correlation id 11.
constexpr const char* kListOffsetsV0Request =
    "00000045 0002 0000 0000000b 000c6b61666b612d707974686f6e"
    " | ffffffff | 00000001 000174 00000002"
    " 00000000 ffffffffffffffff 00000003 | 00000001 fffffffffffffffe 00000001";
//   OffsetRequest[1](replica_id=-1, topics=[('t', [(0, -2), (1, 1700000000000)])]), correlation id 9.
constexpr const char* kListOffsetsV1Request =
    "0000003d 0002 0001 00000009 000c6b61666b612d707974686f6e"
    " | ffffffff | 00000001 000174 00000002 00000000 fffffffffffffffe 00000001 0000018bcfe56800";
//   OffsetRequest[2](replica_id=-1, isolation_level=1, topics=[('t', [(0, -1)])]), correlation id 10. (Its v4
//   class writes CurrentLeaderEpoch as an int64, against Kafka's schema; kafka-python only sends v1.)
constexpr const char* kListOffsetsV2Request =
    "00000032 0002 0002 0000000a 000c6b61666b612d707974686f6e"
    " | ffffffff 01 | 00000001 000174 00000001 00000000 ffffffffffffffff";
//   OffsetResponse[0](topics=[('t', [(0, 0, [42, 10, 0]), (1, 3, [])])]).
constexpr const char* kListOffsetsV0ResponseBody =
    "00000001 000174 00000002"
    " 00000000 0000 00000003 000000000000002a 000000000000000a 0000000000000000"
    " 00000001 0003 00000000";
//   OffsetResponse[1](topics=[('t', [(0, 0, -1, 42)])]).
constexpr const char* kListOffsetsV1ResponseBody =
    "00000001 000174 00000001 00000000 0000 ffffffffffffffff 000000000000002a";
//   OffsetResponse[4](throttle_time_ms=0, topics=[('t', [(0, 0, -1, 42, 0), (1, 3, -1, -1, -1)])]).
constexpr const char* kListOffsetsV4ResponseBody =
    "00000000 | 00000001 000174 00000002"
    " 00000000 0000 ffffffffffffffff 000000000000002a 00000000"
    " 00000001 0003 ffffffffffffffff ffffffffffffffff ffffffff";

TEST(ListOffsetsCodec, DecodesKafkaPythonRequests) {
  const auto v0 = golden_request<ListOffsetsRequest>(hex(kListOffsetsV0Request));
  ASSERT_EQ(v0.topics.size(), 1u);
  ASSERT_EQ(v0.topics[0].partitions.size(), 2u);
  EXPECT_EQ(v0.topics[0].partitions[0].timestamp, kLatestTimestamp);
  EXPECT_EQ(v0.topics[0].partitions[0].max_num_offsets, 3);
  EXPECT_EQ(v0.topics[0].partitions[1].timestamp, kEarliestTimestamp);
  EXPECT_EQ(v0.topics[0].partitions[1].max_num_offsets, 1);

  const auto v1 = golden_request<ListOffsetsRequest>(hex(kListOffsetsV1Request));
  EXPECT_EQ(v1.replica_id, -1);
  EXPECT_EQ(v1.isolation_level, 0);
  ASSERT_EQ(v1.topics.size(), 1u);
  ASSERT_EQ(v1.topics[0].partitions.size(), 2u);
  EXPECT_EQ(v1.topics[0].partitions[0].timestamp, kEarliestTimestamp);
  EXPECT_EQ(v1.topics[0].partitions[1].timestamp, 1700000000000);
  EXPECT_EQ(v1.topics[0].partitions[1].current_leader_epoch, -1);
  EXPECT_EQ(v1.topics[0].partitions[1].max_num_offsets, 1) << "absent after v0: the default";

  const auto v2 = golden_request<ListOffsetsRequest>(hex(kListOffsetsV2Request));
  EXPECT_EQ(v2.isolation_level, 1);
  EXPECT_EQ(v2.topics[0].partitions[0].current_leader_epoch, -1);
  EXPECT_EQ(v2.topics[0].partitions[0].timestamp, kLatestTimestamp);
}

TEST(ListOffsetsCodec, ResponsesMatchKafkaPython) {
  ListOffsetsResponse v0;
  v0.topics = {{"t",
                {{.partition_index = 0, .old_style_offsets = {42, 10, 0}, .offset = 42},
                 {.partition_index = 1, .error_code = 3}}}};
  Bytes body;
  ASSERT_TRUE(encode_message(v0, 0, &body).ok());
  EXPECT_EQ(body, hex(kListOffsetsV0ResponseBody)) << "v0 has neither timestamp nor offset";
  Result<ListOffsetsResponse> back = decode_message<ListOffsetsResponse>(body, 0);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->topics[0].partitions[0].old_style_offsets, (std::vector<int64_t>{42, 10, 0}));

  ListOffsetsResponse v1;
  ListOffsetsResponse::Partition found;
  found.offset = 42;
  found.leader_epoch = 0;          // not in v1
  found.old_style_offsets = {42};  // v0 only
  v1.topics = {{"t", {found}}};
  body.clear();
  ASSERT_TRUE(encode_message(v1, 1, &body).ok());
  EXPECT_EQ(body, hex(kListOffsetsV1ResponseBody));

  ListOffsetsResponse v4 = v1;
  ListOffsetsResponse::Partition unknown;
  unknown.partition_index = 1;
  unknown.error_code = 3;
  v4.topics[0].partitions.push_back(unknown);
  body.clear();
  ASSERT_TRUE(encode_message(v4, 4, &body).ok());
  EXPECT_EQ(body, hex(kListOffsetsV4ResponseBody));
}

TEST(ListOffsetsCodec, FlexibleV6Bytes) {
  ListOffsetsRequest request;
  request.replica_id = -1;
  request.topics = {{"t", {{.partition_index = 0, .current_leader_epoch = 0, .timestamp = kMaxTimestamp}}}};
  Bytes body;
  ASSERT_TRUE(encode_message(request, 7, &body).ok());
  EXPECT_EQ(body, hex("ffffffff 00 | 02 0274 02 00000000 00000000 fffffffffffffffd 00 00 | 00"));
  ListOffsetsResponse response;
  response.topics = {{"t", {{.timestamp = 1700000000000, .offset = 5, .leader_epoch = 0}}}};
  body.clear();
  ASSERT_TRUE(encode_message(response, 6, &body).ok());
  EXPECT_EQ(body, hex("00000000 | 02 0274 02 00000000 0000 0000018bcfe56800 0000000000000005 00000000 00 00 | 00"));
}

TEST(ListOffsetsCodec, RoundTripsAtEveryVersion) {
  ListOffsetsRequest request;
  request.replica_id = -1;
  request.isolation_level = 1;
  request.topics = {{"a",
                     {{.partition_index = 0, .current_leader_epoch = 5, .timestamp = -2, .max_num_offsets = 7},
                      {.partition_index = 1, .timestamp = 1700000000000}}},
                    {"b", {}}};
  ListOffsetsResponse response;
  response.throttle_time_ms = 4;
  response.topics = {{"a",
                      {{.partition_index = 0, .old_style_offsets = {3, 0}, .offset = 3, .leader_epoch = 0},
                       {.partition_index = 1, .timestamp = 1700000000001, .offset = 9, .leader_epoch = 0}}},
                     {"b", {{.partition_index = 2, .error_code = 3}}}};
  for (int16_t version = 0; version <= 9; ++version) {
    const ListOffsetsRequest request_back = round_trip(request, version);
    EXPECT_EQ(request_back.isolation_level, version >= 2 ? 1 : 0);
    EXPECT_EQ(request_back.topics[0].partitions[0].current_leader_epoch, version >= 4 ? 5 : -1);
    EXPECT_EQ(request_back.topics[0].partitions[0].max_num_offsets, version == 0 ? 7 : 1);
    EXPECT_EQ(request_back.topics[0].partitions[1].timestamp, 1700000000000);
    const ListOffsetsResponse back = round_trip(response, version);
    EXPECT_EQ(back.throttle_time_ms, version >= 2 ? 4 : 0);
    EXPECT_EQ(back.topics[0].partitions[0].old_style_offsets.size(), version == 0 ? 2u : 0u);
    EXPECT_EQ(back.topics[0].partitions[1].timestamp, version >= 1 ? 1700000000001 : -1);
    EXPECT_EQ(back.topics[0].partitions[1].offset, version >= 1 ? 9 : -1);
    EXPECT_EQ(back.topics[0].partitions[1].leader_epoch, version >= 4 ? 0 : -1);
    EXPECT_EQ(back.topics[1].partitions[0].error_code, 3);
  }
}

TEST(ListOffsetsCodec, TruncatedBodiesFailAtEveryCut) {
  ListOffsetsRequest request;
  request.topics = {{"a", {{.partition_index = 0, .current_leader_epoch = 5, .timestamp = -2}}}};
  ListOffsetsResponse response;
  response.topics = {{"a", {{.partition_index = 0, .old_style_offsets = {1}, .offset = 1}}}};
  for (int16_t version = 0; version <= 9; ++version) {
    testing::expect_truncations_fail(request, version);
    testing::expect_truncations_fail(response, version);
  }
}

}  // namespace
}  // namespace sluice::protocol
