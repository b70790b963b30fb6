// Produce v0-11 and InitProducerId v0-4: kafka-python's Produce v3/v7 request frames and v2/v5 response bodies,
// hand-built flexible Produce v9/v10 bytes (with v10's tagged leader hints) and InitProducerId bytes (kafka-python
// 2.0.2 has no such class), and round trips at every version.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/protocol/header.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/produce.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::hex;
using testing::round_trip;

// kafka-python 2.0.2 (client id "kafka-python"), encoded offline with its own classes:
//   b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=PID,
//                                 producer_epoch=EPOCH, base_sequence=SEQ, batch_size=1 << 20)
//   b.append(i, timestamp=1700000000000 + i, key=b'k%d' % i, value=b'v%d' % i, headers=[])  for i in range(N)
// kBatch: PID=-1, EPOCH=-1, SEQ=-1, N=1.  kIdempotentBatch: PID=7, EPOCH=0, SEQ=0, N=2.
constexpr const char* kBatch =
    "0000000000000000 0000003c 00000000 02 4017795e 0000 00000000 0000018bcfe56800 0000018bcfe56800"
    " ffffffffffffffff ffff ffffffff 00000001 | 14000000046b3004763000";
constexpr const char* kIdempotentBatch =
    "0000000000000000 00000047 00000000 02 a2c6707b 0000 00000001 0000018bcfe56800 0000018bcfe56801"
    " 0000000000000007 0000 00000000 00000002 | 14000000046b3004763000 14000202046b3104763100";
// ProduceRequest[3](transactional_id=None, required_acks=-1, timeout=30000, topics=[('orders', [(0, kBatch)])]),
// correlation id 7.
constexpr const char* kProduceV3Request =
    "0000007e 0000 0003 00000007 000c6b61666b612d707974686f6e | ffff ffff 00007530 | 00000001 00066f7264657273"
    " 00000001 00000000 00000048";
// ProduceRequest[7](transactional_id=None, required_acks=1, timeout=1500,
//   topics=[('orders', [(1, kIdempotentBatch)]), ('logs', [(0, kBatch)])]), correlation id 8.
constexpr const char* kProduceV7RequestHead =
    "000000e3 0000 0007 00000008 000c6b61666b612d707974686f6e | ffff 0001 000005dc | 00000002 00066f7264657273"
    " 00000001 00000001 00000053";
constexpr const char* kProduceV7RequestMiddle = "0004 6c6f6773 00000001 00000000 00000048";
// ProduceResponse[5](topics=[('orders', [(0, 0, 42, -1, 3), (1, 87, -1, -1, -1)])], throttle_time_ms=0).
constexpr const char* kProduceV5ResponseBody =
    "00000001 00066f7264657273 00000002 | 00000000 0000 000000000000002a ffffffffffffffff 0000000000000003"
    " | 00000001 0057 ffffffffffffffff ffffffffffffffff ffffffffffffffff | 00000000";
// ProduceResponse[2](topics=[('t', [(2, 0, 5, 1700000000123)])], throttle_time_ms=9).
constexpr const char* kProduceV2ResponseBody =
    "00000001 000174 00000001 00000002 0000 0000000000000005 0000018bcfe5687b 00000009";

ProduceResponse::PartitionResponse answer(int32_t index, int16_t error_code, int64_t base_offset) {
  ProduceResponse::PartitionResponse partition;
  partition.index = index;
  partition.error_code = error_code;
  partition.base_offset = base_offset;
  return partition;
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

ProduceRequest decode_request(const Bytes& frame, RequestHeader* header) {
  const ProduceRequest request = testing::decode_request_frame<ProduceRequest>(frame, header);
  Result<Bytes> again = encode_request_frame(*header, request);
  EXPECT_TRUE(again.ok());
  if (again.ok()) {
    EXPECT_EQ(*again, frame) << "re-encoding gives the client's bytes back";
  }
  return request;
}

TEST(ProduceCodec, DecodesKafkaPythonV3Request) {
  const Bytes frame = concat({hex(kProduceV3Request), hex(kBatch)});
  RequestHeader header;
  const ProduceRequest request = decode_request(frame, &header);
  EXPECT_EQ(header.api_version, 3);
  EXPECT_EQ(header.correlation_id, 7);
  EXPECT_FALSE(request.transactional_id.has_value());
  EXPECT_EQ(request.acks, -1);
  EXPECT_EQ(request.timeout_ms, 30000);
  ASSERT_EQ(request.topic_data.size(), 1u);
  EXPECT_EQ(request.topic_data[0].name, "orders");
  ASSERT_EQ(request.topic_data[0].partition_data.size(), 1u);
  EXPECT_EQ(request.topic_data[0].partition_data[0].index, 0);
  const Bytes batch = hex(kBatch);
  const ByteView records = request.topic_data[0].partition_data[0].records.bytes();
  EXPECT_EQ(Bytes(records.begin(), records.end()), batch);
}

TEST(ProduceCodec, DecodesKafkaPythonV7RequestWithTwoTopics) {
  const Bytes frame =
      concat({hex(kProduceV7RequestHead), hex(kIdempotentBatch), hex(kProduceV7RequestMiddle), hex(kBatch)});
  RequestHeader header;
  const ProduceRequest request = decode_request(frame, &header);
  EXPECT_EQ(header.api_version, 7);
  EXPECT_EQ(request.acks, 1);
  EXPECT_EQ(request.timeout_ms, 1500);
  ASSERT_EQ(request.topic_data.size(), 2u);
  EXPECT_EQ(request.topic_data[0].partition_data[0].index, 1);
  EXPECT_EQ(request.topic_data[0].partition_data[0].records.bytes().size(), hex(kIdempotentBatch).size());
  EXPECT_EQ(request.topic_data[1].name, "logs");
  EXPECT_EQ(request.topic_data[1].partition_data[0].records.bytes().size(), hex(kBatch).size());
}

TEST(ProduceCodec, EncodesKafkaPythonResponses) {
  ProduceResponse v5;
  auto& topic = v5.responses.emplace_back();
  topic.name = "orders";
  topic.partition_responses.push_back(answer(0, 0, 42));
  topic.partition_responses.back().log_start_offset = 3;
  topic.partition_responses.push_back(answer(1, 87, -1));
  Bytes out;
  ASSERT_TRUE(encode_message(v5, 5, &out).ok());
  EXPECT_EQ(out, hex(kProduceV5ResponseBody));

  ProduceResponse v2;
  v2.throttle_time_ms = 9;
  v2.responses.push_back({"t", {answer(2, 0, 5)}});
  v2.responses[0].partition_responses[0].log_append_time_ms = 1700000000123;
  out.clear();
  ASSERT_TRUE(encode_message(v2, 2, &out).ok());
  EXPECT_EQ(out, hex(kProduceV2ResponseBody));
  Result<ProduceResponse> back = decode_message<ProduceResponse>(out, 2);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->responses[0].partition_responses[0].log_append_time_ms, 1700000000123);
}

TEST(ProduceCodec, RequestRoundTripsAtEveryVersion) {
  const Bytes batch = hex(kBatch);
  for (int16_t version = 0; version <= 11; ++version) {
    ProduceRequest request;
    request.transactional_id = "txn";
    request.acks = -1;
    request.timeout_ms = 100;
    request.topic_data.push_back({"a", {{0, Records::view(batch)}, {3, Records()}}});
    const ProduceRequest back = round_trip(request, version);  // its records view a freed buffer: sizes only
    EXPECT_EQ(back.transactional_id.has_value(), version >= 3) << "v" << version;
    EXPECT_EQ(back.acks, -1);
    ASSERT_EQ(back.topic_data.size(), 1u);
    ASSERT_EQ(back.topic_data[0].partition_data.size(), 2u);
    EXPECT_EQ(back.topic_data[0].partition_data[0].records.bytes().size(), batch.size());
    EXPECT_TRUE(back.topic_data[0].partition_data[1].records.is_null()) << "records are nullable";
  }
}

TEST(ProduceCodec, ResponseFieldsAppearFromTheirVersions) {
  for (int16_t version = 0; version <= 11; ++version) {
    ProduceResponse response;
    response.throttle_time_ms = 5;
    response.node_endpoints = std::vector<NodeEndpoint>{{1, "h1", 9092, std::nullopt}};
    ProduceResponse::PartitionResponse partition = answer(1, 87, -1);
    partition.current_leader = LeaderIdAndEpoch{1, 3};
    partition.log_append_time_ms = 77;
    partition.log_start_offset = 9;
    partition.record_errors.push_back({2, "record 2 has no key"});
    partition.record_errors.push_back({4, std::nullopt});
    partition.error_message = "bad batch";
    response.responses.push_back({"t", {partition}});
    const ProduceResponse back = round_trip(response, version);
    const ProduceResponse::PartitionResponse& p = back.responses[0].partition_responses[0];
    EXPECT_EQ(p.error_code, 87);
    EXPECT_EQ(back.throttle_time_ms, version >= 1 ? 5 : 0) << "v" << version;
    EXPECT_EQ(p.log_append_time_ms, version >= 2 ? 77 : -1) << "v" << version;
    EXPECT_EQ(p.log_start_offset, version >= 5 ? 9 : -1) << "v" << version;
    EXPECT_EQ(p.record_errors.size(), version >= 8 ? 2u : 0u) << "v" << version;
    EXPECT_EQ(p.error_message.has_value(), version >= 8) << "v" << version;
    EXPECT_EQ(p.current_leader.has_value(), version >= 10) << "v" << version;
    EXPECT_EQ(back.node_endpoints.has_value(), version >= 10) << "v" << version;
    if (version >= 8) {
      EXPECT_EQ(p.record_errors[0].batch_index_error_message, "record 2 has no key");
      EXPECT_FALSE(p.record_errors[1].batch_index_error_message.has_value());
    }
  }
}

TEST(ProduceCodec, V8ResponseLayout) {
  ProduceResponse response;
  ProduceResponse::PartitionResponse partition = answer(0, 32, -1);
  partition.record_errors.push_back({1, std::nullopt});
  response.responses.push_back({"t", {partition}});
  Bytes out;
  ASSERT_TRUE(encode_message(response, 8, &out).ok());
  EXPECT_EQ(out, hex("00000001 000174 00000001 00000000 0020 ffffffffffffffff ffffffffffffffff ffffffffffffffff"
                     " 00000001 00000001 ffff | ffff | 00000000"));
}

TEST(ProduceCodec, FlexibleV9RequestBytes) {
  const Bytes batch = hex(kBatch);
  ProduceRequest request;
  request.acks = 1;
  request.timeout_ms = 1500;
  request.topic_data.push_back({"t", {{0, Records::view(batch)}}});
  Bytes out;
  ASSERT_TRUE(encode_message(request, 9, &out).ok());
  // Null compact transactional id, acks, timeout; compact topics, name, partitions, records as compact bytes
  // (uvarint length + 1 = 0x49), each struct's empty tag block; the body's.
  const Bytes head = hex("00 | 0001 000005dc | 02 0274 02 00000000 49");
  const Bytes tail = hex("00 00 | 00");
  EXPECT_EQ(out, concat({head, batch, tail}));
}

TEST(ProduceCodec, V10ResponseCarriesTheLeaderHintsAsTags) {
  ProduceResponse response;
  ProduceResponse::PartitionResponse partition = answer(0, 6, -1);  // NOT_LEADER_OR_FOLLOWER
  partition.current_leader = LeaderIdAndEpoch{2, 7};
  response.responses.push_back({"t", {partition}});
  response.node_endpoints = std::vector<NodeEndpoint>{{2, "h2", 9093, "r"}};
  Bytes out;
  ASSERT_TRUE(encode_message(response, 10, &out).ok());
  EXPECT_EQ(out, hex("02 0274 02 00000000 0006 ffffffffffffffff ffffffffffffffff ffffffffffffffff"
                     " 01 00"                       // no record errors, null error message
                     " 01 00 09 00000002 00000007 00"  // tag 0: CurrentLeader (leader 2, epoch 7, its tags)
                     " 00 | 00000000"                // the topic's tags; throttle time
                     " | 01 00 0f 02 00000002 036832 00002385 0272 00"));  // tag 0: NodeEndpoints
  Result<ProduceResponse> back = decode_message<ProduceResponse>(out, 10);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->responses[0].partition_responses[0].current_leader->leader_epoch, 7);
  EXPECT_EQ((*back->node_endpoints)[0].rack, "r");
  Bytes v9;
  ASSERT_TRUE(encode_message(response, 9, &v9).ok());
  EXPECT_EQ(v9.size(), out.size() - 11 - 17) << "v9 has neither tag";
}

TEST(ProduceCodec, TruncatedRecordsFailToDecode) {
  Bytes frame = concat({hex(kProduceV3Request), hex(kBatch)});
  frame.pop_back();
  ByteView body;
  Result<RequestHeader> header = decode_request_header(ByteView(frame).subspan(kFrameSizeBytes), &body);
  ASSERT_TRUE(header.ok());
  EXPECT_FALSE(decode_message<ProduceRequest>(body, 3).ok());
}

TEST(InitProducerIdCodec, ClassicV1Bytes) {
  InitProducerIdRequest request;
  request.transaction_timeout_ms = 60000;
  Bytes out;
  ASSERT_TRUE(encode_message(request, 1, &out).ok());
  EXPECT_EQ(out, hex("ffff 0000ea60"));  // null transactional id, timeout
  InitProducerIdResponse response{.throttle_time_ms = 0, .error_code = 0, .producer_id = 1000, .producer_epoch = 0};
  out.clear();
  ASSERT_TRUE(encode_message(response, 1, &out).ok());
  EXPECT_EQ(out, hex("00000000 0000 00000000000003e8 0000"));
}

// What librdkafka's idempotent producer sends: v4, flexible, null transactional id, producer id and epoch -1.
TEST(InitProducerIdCodec, FlexibleV4Bytes) {
  Result<InitProducerIdRequest> request =
      decode_message<InitProducerIdRequest>(hex("00 7fffffff ffffffffffffffff ffff 00"), 4);
  ASSERT_TRUE(request.ok()) << request.status().to_string();
  EXPECT_FALSE(request->transactional_id.has_value());
  EXPECT_EQ(request->transaction_timeout_ms, 0x7fffffff);
  EXPECT_EQ(request->producer_id, -1);
  EXPECT_EQ(request->producer_epoch, -1);
  InitProducerIdResponse response{.throttle_time_ms = 0, .error_code = 0, .producer_id = 5, .producer_epoch = 0};
  Bytes out;
  ASSERT_TRUE(encode_message(response, 4, &out).ok());
  EXPECT_EQ(out, hex("00000000 0000 0000000000000005 0000 00"));
}

TEST(InitProducerIdCodec, RoundTripsAtEveryVersion) {
  for (int16_t version = 0; version <= 5; ++version) {
    InitProducerIdRequest request{.transactional_id = "tx", .transaction_timeout_ms = 9, .producer_id = 12,
                                  .producer_epoch = 3};
    const InitProducerIdRequest back = round_trip(request, version);
    EXPECT_EQ(back.transactional_id, "tx");
    EXPECT_EQ(back.transaction_timeout_ms, 9);
    EXPECT_EQ(back.producer_id, version >= 3 ? 12 : -1) << "v" << version;
    EXPECT_EQ(back.producer_epoch, version >= 3 ? 3 : -1) << "v" << version;
    InitProducerIdResponse response{.throttle_time_ms = 1, .error_code = 53, .producer_id = -1,
                                    .producer_epoch = -1};
    const InitProducerIdResponse answer = round_trip(response, version);
    EXPECT_EQ(answer.error_code, 53);
    EXPECT_EQ(answer.producer_epoch, -1);
  }
}

}  // namespace
}  // namespace sluice::protocol
