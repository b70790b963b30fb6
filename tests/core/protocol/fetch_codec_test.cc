// The read path's codecs. Fetch v4-17: kafka-python's request and response bytes (v4, v11), hand-built flexible
// v12-17 bytes with tagged fields and topic ids. OffsetForLeaderEpoch v2-4: hand-built bytes (kafka-python 2.0.2
// has no class for it; v4 is flexible). Round trips at every advertised version. (ListOffsets:
// list_offsets_codec_test.cc.)
#include <gtest/gtest.h>

#include <cstdint>

#include "core/protocol/header.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/offset_for_leader_epoch.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::hex;
using testing::round_trip;

// kafka-python 2.0.2 (client id "kafka-python"), encoded offline with its protocol classes:
//   FetchRequest[4](replica_id=-1, max_wait_time=500, min_bytes=1, max_bytes=52428800, isolation_level=1,
//                   topics=[('t', [(0, 5, 1048576)])]), correlation id 7.
constexpr const char* kFetchV4Request =
    "00000042 0001 0004 00000007 000c6b61666b612d707974686f6e"
    " | ffffffff 000001f4 00000001 03200000 01 | 00000001 000174 00000001 00000000 0000000000000005 00100000";
//   FetchRequest[11](replica_id=-1, max_wait_time=500, min_bytes=1, max_bytes=52428800, isolation_level=0,
//                    session_id=0, session_epoch=-1, topics=[('t', [(2, 3, 5, 7, 1048576)])],
//                    forgotten_topics_data=[], rack_id='r'), correlation id 8.
constexpr const char* kFetchV11Request =
    "0000005d 0001 000b 00000008 000c6b61666b612d707974686f6e"
    " | ffffffff 000001f4 00000001 03200000 00 00000000 ffffffff"
    " | 00000001 000174 00000001 00000002 00000003 0000000000000005 0000000000000007 00100000"
    " | 00000000 | 000172";
//   FetchResponse[4](throttle_time_ms=0, topics=[('t', [(0, 0, 10, 10, None, b'\x01\x02')])]).
constexpr const char* kFetchV4ResponseBody =
    "00000000 | 00000001 000174 00000001 00000000 0000 000000000000000a 000000000000000a ffffffff 00000002 0102";
//   FetchResponse[11](throttle_time_ms=3, error_code=0, session_id=0,
//                     topics=[('t', [(1, 1, -1, -1, -1, [(5, 6)], -1, b'')])]).
constexpr const char* kFetchV11ResponseBody =
    "00000003 0000 00000000 | 00000001 000174 00000001"
    " 00000001 0001 ffffffffffffffff ffffffffffffffff ffffffffffffffff"
    " 00000001 0000000000000005 0000000000000006 | ffffffff 00000000";

// Decodes a kafka-python request frame and checks that encoding it again gives the client's bytes back.
template <ApiMessage T>
T decode_request(const char* frame_hex) {
  const Bytes frame = hex(frame_hex);
  RequestHeader header;
  const T request = testing::decode_request_frame<T>(frame, &header);
  Result<Bytes> again = encode_request_frame(header, request);
  EXPECT_TRUE(again.ok());
  if (again.ok()) {
    EXPECT_EQ(*again, frame);
  }
  return request;
}

TEST(FetchCodec, DecodesKafkaPythonRequests) {
  const FetchRequest v4 = decode_request<FetchRequest>(kFetchV4Request);
  EXPECT_EQ(v4.replica_id, -1);
  EXPECT_EQ(v4.max_wait_ms, 500);
  EXPECT_EQ(v4.min_bytes, 1);
  EXPECT_EQ(v4.max_bytes, 52428800);
  EXPECT_EQ(v4.isolation_level, kReadCommitted);
  EXPECT_EQ(v4.session_epoch, -1);  // absent before v7: sessionless
  ASSERT_EQ(v4.topics.size(), 1u);
  EXPECT_EQ(v4.topics[0].topic, "t");
  ASSERT_EQ(v4.topics[0].partitions.size(), 1u);
  EXPECT_EQ(v4.topics[0].partitions[0].fetch_offset, 5);
  EXPECT_EQ(v4.topics[0].partitions[0].partition_max_bytes, 1048576);
  EXPECT_EQ(v4.topics[0].partitions[0].current_leader_epoch, -1);

  const FetchRequest v11 = decode_request<FetchRequest>(kFetchV11Request);
  EXPECT_EQ(v11.isolation_level, kReadUncommitted);
  EXPECT_EQ(v11.session_id, 0);
  EXPECT_EQ(v11.session_epoch, -1);
  const FetchRequest::Partition& p = v11.topics[0].partitions[0];
  EXPECT_EQ(p.partition, 2);
  EXPECT_EQ(p.current_leader_epoch, 3);
  EXPECT_EQ(p.fetch_offset, 5);
  EXPECT_EQ(p.log_start_offset, 7);
  EXPECT_EQ(p.last_fetched_epoch, -1);  // v12+
  EXPECT_TRUE(v11.forgotten_topics_data.empty());
  EXPECT_EQ(v11.rack_id, "r");
}

TEST(FetchCodec, ResponsesMatchKafkaPython) {
  FetchResponse v4;
  FetchResponse::Partition partition;
  partition.high_watermark = 10;
  partition.last_stable_offset = 10;
  partition.log_start_offset = 3;  // not in v4
  partition.records = Records::own({1, 2});
  v4.responses = {{.topic = "t", .partitions = {partition}}};
  Bytes body;
  ASSERT_TRUE(encode_message(v4, 4, &body).ok());
  EXPECT_EQ(body, hex(kFetchV4ResponseBody));

  FetchResponse v11;
  v11.throttle_time_ms = 3;
  FetchResponse::Partition failed;
  failed.partition_index = 1;
  failed.error_code = 1;
  failed.high_watermark = -1;
  failed.aborted_transactions = std::vector<FetchResponse::AbortedTransaction>{{5, 6}};
  failed.records = Records::own({});
  v11.responses = {{.topic = "t", .partitions = {failed}}};
  body.clear();
  ASSERT_TRUE(encode_message(v11, 11, &body).ok());
  EXPECT_EQ(body, hex(kFetchV11ResponseBody));
  Result<FetchResponse> back = decode_message<FetchResponse>(body, 11);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->responses[0].partitions[0].aborted_transactions->at(0).first_offset, 6);
  EXPECT_FALSE(back->responses[0].partitions[0].records.is_null());
}

TEST(FetchCodec, NullAbortedTransactionsAndRecordsDecode) {
  Result<FetchResponse> v4 = decode_message<FetchResponse>(hex(kFetchV4ResponseBody), 4);
  ASSERT_TRUE(v4.ok()) << v4.status().to_string();
  const FetchResponse::Partition& p = v4->responses[0].partitions[0];
  EXPECT_FALSE(p.aborted_transactions.has_value());
  EXPECT_EQ(p.log_start_offset, -1);  // absent in v4: the default
  EXPECT_EQ(p.records.bytes().size(), 2u);
  // Null records (-1) decode as null.
  Result<FetchResponse> null_records = decode_message<FetchResponse>(
      hex("00000000 | 00000001 000174 00000001 00000000 0000 0000000000000000 0000000000000000 ffffffff ffffffff"),
      4);
  ASSERT_TRUE(null_records.ok()) << null_records.status().to_string();
  EXPECT_TRUE(null_records->responses[0].partitions[0].records.is_null());
}

TEST(FetchCodec, RequestV12FlexibleBytesWithClusterIdTag) {
  FetchRequest request;
  request.cluster_id = "c";
  request.max_wait_ms = 500;
  request.min_bytes = 1;
  request.max_bytes = 52428800;
  request.isolation_level = kReadCommitted;
  FetchRequest::Partition partition;
  partition.fetch_offset = 5;
  partition.partition_max_bytes = 1048576;
  request.topics = {{.topic = "t", .partitions = {partition}}};
  Result<Bytes> frame = encode_request_frame(RequestHeader{ApiKey::kFetch, 12, 9, "c"}, request);
  ASSERT_TRUE(frame.ok());
  const Bytes expected = hex(
      "00000052 | 0001 000c 00000009 0001 63 00"                              // size, header v2
      " | ffffffff 000001f4 00000001 03200000 01 00000000 ffffffff"          // replica .. session epoch
      " | 02 0274 02 00000000 ffffffff 0000000000000005 ffffffff ffffffffffffffff 00100000 00 00"  // topics
      " | 01 | 01"                                                            // forgotten topics, rack id
      " | 01 00 02 0263");                                                    // tags: ClusterId (tag 0) "c"
  EXPECT_EQ(*frame, expected);
  RequestHeader header;
  const FetchRequest back = testing::decode_request_frame<FetchRequest>(expected, &header);
  EXPECT_EQ(back.cluster_id, std::optional<std::string>("c"));
  EXPECT_EQ(back.topics[0].partitions[0].last_fetched_epoch, -1);
}

TEST(FetchCodec, ResponseV12FlexibleBytesWithTaggedPartitionFields) {
  FetchResponse response;
  FetchResponse::Partition partition;
  partition.high_watermark = 10;
  partition.last_stable_offset = 10;
  partition.log_start_offset = 0;
  partition.diverging_epoch = FetchResponse::EpochEndOffset{0, 4};
  partition.records = Records::own({1, 2});
  response.responses = {{.topic = "t", .partitions = {partition}}};
  Bytes body;
  ASSERT_TRUE(encode_message(response, 12, &body).ok());
  const Bytes expected = hex(
      "00000000 0000 00000000 | 02 0274 02"
      " 00000000 0000 000000000000000a 000000000000000a 0000000000000000"
      " 00 ffffffff 03 0102"            // aborted transactions null, preferred read replica, records
      " 01 00 0d 00000000 0000000000000004 00"  // tags: DivergingEpoch (tag 0), a struct with its own tag block
      " 00 | 00");
  EXPECT_EQ(body, expected);
  Result<FetchResponse> back = decode_message<FetchResponse>(body, 12);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  const FetchResponse::Partition& p = back->responses[0].partitions[0];
  ASSERT_TRUE(p.diverging_epoch.has_value());
  EXPECT_EQ(p.diverging_epoch->end_offset, 4);
  EXPECT_FALSE(p.current_leader.has_value());
  EXPECT_FALSE(p.snapshot_id.has_value());
}

Uuid sample_id() {
  Uuid id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<uint8_t>(0xa0 + i);
  return id;
}

constexpr const char* kSampleIdHex = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf";

FetchRequest sample_request() {
  FetchRequest request;
  request.cluster_id = "cluster";
  request.replica_id = -1;
  request.max_wait_ms = 100;
  request.min_bytes = 10;
  request.max_bytes = 1000;
  request.isolation_level = kReadCommitted;
  request.session_id = 4;
  request.session_epoch = 2;
  request.topics = {
      {.topic = "a", .topic_id = sample_id(), .partitions = {{0, 3, 100, 2, 7, 500}, {1, -1, 0, -1, -1, 10}}},
      {.topic = "b", .partitions = {}}};
  request.forgotten_topics_data = {{.topic = "c", .topic_id = sample_id(), .partitions = {1, 2}}};
  request.replica_state = FetchRequest::ReplicaState{-1, 4};
  request.topics[0].partitions[0].replica_directory_id = sample_id();
  request.rack_id = "rack";
  return request;
}

FetchResponse sample_response() {
  FetchResponse response;
  response.throttle_time_ms = 5;
  response.error_code = 71;
  response.session_id = 9;
  FetchResponse::Partition p;
  p.partition_index = 3;
  p.high_watermark = 20;
  p.last_stable_offset = 19;
  p.log_start_offset = 2;
  p.diverging_epoch = FetchResponse::EpochEndOffset{1, 15};
  p.current_leader = FetchResponse::LeaderIdAndEpoch{1, 2};
  p.snapshot_id = FetchResponse::SnapshotId{12, 1};
  p.aborted_transactions = std::vector<FetchResponse::AbortedTransaction>{{7, 8}};
  p.preferred_read_replica = 2;
  p.records = Records::own({9, 9, 9});
  response.responses = {{.topic = "a", .topic_id = sample_id(), .partitions = {p}}, {.topic = "b", .partitions = {}}};
  response.node_endpoints = std::vector<NodeEndpoint>{{1, "h1", 9092, std::nullopt}};
  return response;
}

TEST(FetchCodec, RoundTripsAtEveryVersion) {
  for (int16_t version = 4; version <= 17; ++version) {
    const FetchRequest request = round_trip(sample_request(), version);
    EXPECT_EQ(request.topics[0].topic, version <= 12 ? "a" : "");
    EXPECT_EQ(request.topics[0].topic_id, version >= 13 ? sample_id() : Uuid::zero());
    EXPECT_EQ(request.forgotten_topics_data.empty() ? Uuid::zero() : request.forgotten_topics_data[0].topic_id,
              version >= 13 ? sample_id() : Uuid::zero());
    EXPECT_EQ(request.replica_id, -1);
    EXPECT_EQ(request.replica_state.has_value(), version >= 15);
    EXPECT_EQ(request.topics[0].partitions[0].replica_directory_id.has_value(), version >= 17);
    EXPECT_EQ(request.max_bytes, 1000);
    EXPECT_EQ(request.isolation_level, kReadCommitted);
    EXPECT_EQ(request.session_id, version >= 7 ? 4 : 0);
    EXPECT_EQ(request.session_epoch, version >= 7 ? 2 : -1);
    EXPECT_EQ(request.forgotten_topics_data.size(), version >= 7 ? 1u : 0u);
    EXPECT_EQ(request.rack_id, version >= 11 ? "rack" : "");
    EXPECT_EQ(request.cluster_id, version >= 12 ? std::optional<std::string>("cluster") : std::nullopt);
    const FetchRequest::Partition& p = request.topics[0].partitions[0];
    EXPECT_EQ(p.current_leader_epoch, version >= 9 ? 3 : -1);
    EXPECT_EQ(p.last_fetched_epoch, version >= 12 ? 2 : -1);
    EXPECT_EQ(p.log_start_offset, version >= 5 ? 7 : -1);
    EXPECT_EQ(p.partition_max_bytes, 500);

    const FetchResponse response = round_trip(sample_response(), version);
    EXPECT_EQ(response.throttle_time_ms, 5);
    EXPECT_EQ(response.error_code, version >= 7 ? 71 : 0);
    EXPECT_EQ(response.session_id, version >= 7 ? 9 : 0);
    const FetchResponse::Partition& r = response.responses[0].partitions[0];
    EXPECT_EQ(r.last_stable_offset, 19);
    EXPECT_EQ(r.log_start_offset, version >= 5 ? 2 : -1);
    EXPECT_EQ(r.diverging_epoch.has_value(), version >= 12);
    EXPECT_EQ(r.current_leader.has_value(), version >= 12);
    EXPECT_EQ(r.snapshot_id.has_value(), version >= 12);
    if (version >= 12) {
      EXPECT_EQ(r.current_leader->leader_epoch, 2);
      EXPECT_EQ(r.snapshot_id->end_offset, 12);
    }
    EXPECT_EQ(r.aborted_transactions->at(0).producer_id, 7);
    EXPECT_EQ(r.preferred_read_replica, version >= 11 ? 2 : -1);
    EXPECT_EQ(r.records.bytes().size(), 3u);
    EXPECT_TRUE(response.responses[1].partitions.empty());
    EXPECT_EQ(response.responses[0].topic, version <= 12 ? "a" : "");
    EXPECT_EQ(response.responses[0].topic_id, version >= 13 ? sample_id() : Uuid::zero());
    EXPECT_EQ(response.node_endpoints.has_value(), version >= 16);
  }
}

// v13 names topics by id in the request (topics and forgotten topics) and in the response.
// The broker sizes its answer's buffer from encoded_size_hint: it must never be below what the encoding takes, or a
// consumer catching up would pay for the buffer regrowing (and the hint would be a lie).
TEST(FetchCodec, EncodedSizeHintBoundsTheEncodingAtEveryVersion) {
  FetchResponse large = sample_response();
  FetchResponse::Partition& first = large.responses[0].partitions[0];
  first.records = Records::own(Bytes(100'000, 7));
  first.aborted_transactions = std::vector<FetchResponse::AbortedTransaction>(50, {7, 8});
  for (int32_t i = 0; i < 40; ++i) {
    FetchResponse::Partition more = first;
    more.partition_index = i + 10;
    more.records = Records::own(Bytes(static_cast<size_t>(i) * 37, 1));
    large.responses[1].partitions.push_back(std::move(more));
  }
  large.responses[1].topic = std::string(200, 'x');
  for (const FetchResponse& response : {FetchResponse{}, sample_response(), large}) {
    for (int16_t version = 4; version <= 17; ++version) {
      Bytes out;
      ASSERT_TRUE(encode_message(response, version, &out).ok());
      EXPECT_LE(out.size(), encoded_size_hint(response)) << "v" << version;
    }
  }
}

TEST(FetchCodec, V13NamesTopicsById) {
  FetchRequest request;
  request.max_wait_ms = 500;
  request.min_bytes = 1;
  request.max_bytes = 52428800;
  FetchRequest::Partition partition;
  partition.fetch_offset = 5;
  partition.partition_max_bytes = 1048576;
  request.topics = {{.topic = "ignored", .topic_id = sample_id(), .partitions = {partition}}};
  Bytes body;
  ASSERT_TRUE(encode_message(request, 13, &body).ok());
  const std::string id = kSampleIdHex;
  EXPECT_EQ(body, hex("ffffffff 000001f4 00000001 03200000 00 00000000 ffffffff"
                      " | 02 " + id + " 02 00000000 ffffffff 0000000000000005 ffffffff ffffffffffffffff 00100000 00 00"
                      " | 01 | 01 | 00"));
  FetchResponse response;
  FetchResponse::Partition p;
  p.error_code = 100;  // UNKNOWN_TOPIC_ID
  p.high_watermark = -1;
  p.records = Records::own({});
  response.responses = {{.topic = "", .topic_id = sample_id(), .partitions = {p}}};
  body.clear();
  ASSERT_TRUE(encode_message(response, 13, &body).ok());
  EXPECT_EQ(body, hex("00000000 0000 00000000 | 02 " + id +
                      " 02 00000000 0064 ffffffffffffffff ffffffffffffffff ffffffffffffffff 00 ffffffff 01 00"
                      " 00 | 00"));
}

// v15 moves the replica id into the tagged ReplicaState, v16 adds the response's NodeEndpoints, v17 a follower's
// directory id in each partition.
TEST(FetchCodec, V15To17TaggedFields) {
  FetchRequest request;
  request.replica_id = 3;  // gone from v15: not written
  request.replica_state = FetchRequest::ReplicaState{3, 9};
  FetchRequest::Partition partition;
  partition.replica_directory_id = sample_id();
  request.topics = {{.topic = "", .topic_id = sample_id(), .partitions = {partition}}};
  const std::string id = kSampleIdHex;
  Bytes body;
  ASSERT_TRUE(encode_message(request, 17, &body).ok());
  EXPECT_EQ(body, hex("00000000 00000000 7fffffff 00 00000000 ffffffff"
                      " | 02 " + id + " 02 00000000 ffffffff 0000000000000000 ffffffff ffffffffffffffff 00000000"
                      " 01 00 10 " + id + " 00"  // the partition's tag 0: ReplicaDirectoryId
                      " | 01 | 01"                 // forgotten topics, rack id
                      " | 01 01 0d 00000003 0000000000000009 00"));  // tag 1: ReplicaState
  Result<FetchRequest> back = decode_message<FetchRequest>(body, 17);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->replica_id, -1) << "absent from v15: the default";
  EXPECT_EQ(back->replica_state->replica_id, 3);
  EXPECT_EQ(back->topics[0].partitions[0].replica_directory_id, sample_id());

  FetchResponse response;
  response.node_endpoints = std::vector<NodeEndpoint>{{1, "h", 9092, std::nullopt}};
  body.clear();
  ASSERT_TRUE(encode_message(response, 16, &body).ok());
  EXPECT_EQ(body, hex("00000000 0000 00000000 | 01 | 01 00 0d 02 00000001 0268 00002384 00 00"));
  body.clear();
  ASSERT_TRUE(encode_message(response, 15, &body).ok());
  EXPECT_EQ(body, hex("00000000 0000 00000000 | 01 | 00")) << "no NodeEndpoints before v16";
}

TEST(FetchCodec, TruncatedRequestsFailAtEveryCut) {
  for (int16_t version : {4, 7, 11, 12, 13, 15, 17}) {
    Bytes body;
    ASSERT_TRUE(encode_message(sample_request(), version, &body).ok());
    for (size_t cut = 0; cut < body.size(); ++cut) {
      EXPECT_FALSE(decode_message<FetchRequest>(ByteView(body).first(cut), version).ok())
          << "version " << version << " cut " << cut;
    }
  }
}

TEST(OffsetForLeaderEpochCodec, RequestBytesV2AndFlexibleV4) {
  OffsetForLeaderEpochRequest request;
  request.replica_id = -1;
  request.topics = {{"t", {{1, 0, 0}}}};
  Bytes v2;
  ASSERT_TRUE(encode_message(request, 2, &v2).ok());
  // No replica id before v3; topic, partition, current leader epoch, leader epoch.
  EXPECT_EQ(v2, hex("00000001 000174 00000001 00000001 00000000 00000000"));
  Bytes v4;
  ASSERT_TRUE(encode_message(request, 4, &v4).ok());
  EXPECT_EQ(v4, hex("ffffffff | 02 0274 02 00000001 00000000 00000000 00 00 | 00"));
  Result<OffsetForLeaderEpochRequest> back = decode_message<OffsetForLeaderEpochRequest>(v2, 2);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->replica_id, -2);  // absent before v3: Kafka's default
}

// v0 has neither the current leader epoch nor the replica id, and answers no epoch; v1 answers it.
TEST(OffsetForLeaderEpochCodec, ClassicV0AndV1Bytes) {
  OffsetForLeaderEpochRequest request;
  request.replica_id = -1;
  request.topics = {{"t", {{1, 5, 0}}}};
  Bytes v0;
  ASSERT_TRUE(encode_message(request, 0, &v0).ok());
  EXPECT_EQ(v0, hex("00000001 000174 00000001 00000001 00000000"));
  Result<OffsetForLeaderEpochRequest> back = decode_message<OffsetForLeaderEpochRequest>(v0, 1);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->topics[0].partitions[0].current_leader_epoch, -1);  // not sent: no fencing
  EXPECT_EQ(back->replica_id, -2);
  OffsetForLeaderEpochResponse response;
  response.throttle_time_ms = 3;
  response.topics = {{"t", {{0, 1, 0, 42}}}};
  Bytes out;
  ASSERT_TRUE(encode_message(response, 0, &out).ok());
  EXPECT_EQ(out, hex("00000001 000174 00000001 0000 00000001 000000000000002a"));
  out.clear();
  ASSERT_TRUE(encode_message(response, 1, &out).ok());
  EXPECT_EQ(out, hex("00000001 000174 00000001 0000 00000001 00000000 000000000000002a"));
}

TEST(OffsetForLeaderEpochCodec, ResponseBytesV4) {
  OffsetForLeaderEpochResponse response;
  response.topics = {{"t", {{0, 1, 0, 42}, {3, 2, -1, -1}}}};
  Bytes v4;
  ASSERT_TRUE(encode_message(response, 4, &v4).ok());
  EXPECT_EQ(v4, hex("00000000 | 02 0274 03"
                    " 0000 00000001 00000000 000000000000002a 00"
                    " 0003 00000002 ffffffff ffffffffffffffff 00"
                    " 00 | 00"));
}

TEST(OffsetForLeaderEpochCodec, RoundTripsAtEveryVersion) {
  OffsetForLeaderEpochRequest request;
  request.replica_id = -1;
  request.topics = {{"a", {{0, 2, 1}, {1, -1, 0}}}};
  OffsetForLeaderEpochResponse response;
  response.throttle_time_ms = 6;
  response.topics = {{"a", {{0, 0, 0, 10}, {75, 1, -1, -1}}}, {"b", {}}};
  for (int16_t version = 0; version <= 4; ++version) {
    const OffsetForLeaderEpochRequest request_back = round_trip(request, version);
    EXPECT_EQ(request_back.replica_id, version >= 3 ? -1 : -2);
    EXPECT_EQ(request_back.topics[0].partitions[0].current_leader_epoch, version >= 2 ? 2 : -1);
    EXPECT_EQ(request_back.topics[0].partitions[0].leader_epoch, 1);
    const OffsetForLeaderEpochResponse back = round_trip(response, version);
    EXPECT_EQ(back.throttle_time_ms, version >= 2 ? 6 : 0);
    EXPECT_EQ(back.topics[0].partitions[0].leader_epoch, version >= 1 ? 0 : -1);
    EXPECT_EQ(back.topics[0].partitions[0].end_offset, 10);
    EXPECT_EQ(back.topics[0].partitions[1].error_code, 75);
    EXPECT_TRUE(back.topics[1].partitions.empty());
  }
}

TEST(OffsetForLeaderEpochCodec, TruncatedBodiesFailAtEveryCut) {
  OffsetForLeaderEpochRequest epochs;
  epochs.topics = {{"a", {{0, 2, 1}}}};
  for (int16_t version = 0; version <= 4; ++version) {
    testing::expect_truncations_fail(epochs, version);
  }
}

}  // namespace
}  // namespace sluice::protocol
