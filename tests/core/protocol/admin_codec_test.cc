// The admin APIs' codecs: CreateTopics, DeleteTopics, DeleteRecords, DescribeConfigs, AlterConfigs,
// IncrementalAlterConfigs, DescribeCluster and DescribeQuorum. Golden bytes from kafka-python 2.0.2 for the non-flexible versions it
// has (script at the end), hand-built bytes from Kafka 3.9's schemas for flexible ones, and round trips of messages
// using every field at every version.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/protocol/header.h"
#include "core/protocol/messages/alter_configs.h"
#include "core/protocol/messages/create_partitions.h"
#include "core/protocol/messages/create_topics.h"
#include "core/protocol/messages/delete_records.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_cluster.h"
#include "core/protocol/messages/describe_quorum.h"
#include "core/protocol/messages/describe_configs.h"
#include "core/protocol/messages/incremental_alter_configs.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::hex;
using testing::round_trip;

// kafka-python 2.0.2, client id "kafka-python".
// CreateTopicsRequest[3]([('orders', 3, 1, [], [('retention.ms', '3600000'), ('cleanup.policy', None)]),
//   ('t', -1, -1, [(0, [1])], [])], timeout=30000, validate_only=True), correlation id 7.
constexpr const char* kCreateTopicsV3Request =
    "0000007b 0013 0003 00000007 000c6b61666b612d707974686f6e | 00000002"
    " | 00066f7264657273 00000003 0001 00000000 00000002 000c726574656e74696f6e2e6d73 000733363030303030"
    "   000e636c65616e75702e706f6c696379 ffff"
    " | 000174 ffffffff ffff 00000001 00000000 00000001 00000001 00000000 | 00007530 | 01";
// CreateTopicsResponse[3](5, [('orders', 0, None), ('bad', 36, "Topic 'bad' already exists.")]).
constexpr const char* kCreateTopicsV3Response =
    "00000005 | 00000002 | 00066f7264657273 0000 ffff"
    " | 0003626164 0024 001b546f70696320276261642720616c7265616479206578697374732e";
// DeleteTopicsRequest[3](topics=['a', 'bc'], timeout=15000), correlation id 8.
constexpr const char* kDeleteTopicsV3Request =
    "00000025 0014 0003 00000008 000c6b61666b612d707974686f6e | 00000002 000161 00026263 | 00003a98";
// DeleteTopicsResponse[3](0, [('a', 0), ('bc', 3)]).
constexpr const char* kDeleteTopicsV3Response = "00000000 | 00000002 000161 0000 | 00026263 0003";
// DescribeConfigsRequest[2]([(2, 'orders', ['retention.ms']), (4, '1', None)], include_synonyms=True), id 9.
constexpr const char* kDescribeConfigsV2Request =
    "0000003e 0020 0002 00000009 000c6b61666b612d707974686f6e | 00000002"
    " | 02 00066f7264657273 00000001 000c726574656e74696f6e2e6d73 | 04 000131 ffffffff | 01";
// DescribeConfigsResponse[2](0, [(0, None, 2, 'orders', [('retention.ms', '3600000', False, 1, False,
//   [('retention.ms', '3600000', 1), ('log.retention.ms', '604800000', 5)])]), (3, 'gone', 2, 'x', [])]).
constexpr const char* kDescribeConfigsV2Response =
    "00000000 | 00000002 | 0000 ffff 02 00066f7264657273 00000001"
    " | 000c726574656e74696f6e2e6d73 000733363030303030 00 01 00 00000002"
    "   000c726574656e74696f6e2e6d73 000733363030303030 01 | 00106c6f672e726574656e74696f6e2e6d73 "
    "0009363034383030303030 05"
    " | 0003 0004676f6e65 02 000178 00000000";
// The v0 layouts: CreateTopicsRequest[0]([('orders', 3, 1, [], [('retention.ms', '3600000')])], timeout=30000), id
// 11 (no validate_only); CreateTopicsResponse[0]([('orders', 0), ('bad', 36)]) (no error message);
// DeleteTopicsRequest[0](['a', 'bc'], 15000), id 12; DeleteTopicsResponse[0]([('a', 0), ('bc', 3)]) (no throttle);
// DescribeConfigsRequest[0]([(2, 'orders', ['retention.ms', 'cleanup.policy'])]), id 13 (no include_synonyms);
// DescribeConfigsResponse[0](0, [(0, None, 2, 'orders', [('retention.ms', '3600000', False, False, False),
//   ('cleanup.policy', 'delete', False, True, False)])]) (is_default in place of config_source, no synonyms).
constexpr const char* kCreateTopicsV0Request =
    "0000004b 0013 0000 0000000b 000c6b61666b612d707974686f6e | 00000001 | 00066f7264657273 00000003 0001 00000000"
    " 00000001 000c726574656e74696f6e2e6d73 000733363030303030 | 00007530";
constexpr const char* kCreateTopicsV0Response = "00000002 | 00066f7264657273 0000 | 0003626164 0024";
constexpr const char* kDeleteTopicsV0Request =
    "00000025 0014 0000 0000000c 000c6b61666b612d707974686f6e | 00000002 000161 00026263 | 00003a98";
constexpr const char* kDeleteTopicsV0Response = "00000002 000161 0000 | 00026263 0003";
constexpr const char* kDescribeConfigsV0Request =
    "00000045 0020 0000 0000000d 000c6b61666b612d707974686f6e | 00000001"
    " | 02 00066f7264657273 00000002 000c726574656e74696f6e2e6d73 000e636c65616e75702e706f6c696379";
constexpr const char* kDescribeConfigsV0Response =
    "00000000 | 00000001 | 0000 ffff 02 00066f7264657273 00000002"
    " | 000c726574656e74696f6e2e6d73 000733363030303030 00 00 00 | 000e636c65616e75702e706f6c696379 000664656c657465 "
    "00 01 00";
// AlterConfigsRequest[1]([(2, 'orders', [('retention.ms', '7200000'), ('segment.bytes', None)])], False), id 10.
constexpr const char* kAlterConfigsV1Request =
    "00000050 0021 0001 0000000a 000c6b61666b612d707974686f6e | 00000001 | 02 00066f7264657273 00000002"
    " | 000c726574656e74696f6e2e6d73 000737323030303030 | 000d7365676d656e742e6279746573 ffff | 00";
// AlterConfigsResponse[0](0, [(0, None, 2, 'orders'), (40, 'Invalid value', 2, 'x')]): v1 is v0 (kafka-python's
// AlterConfigsResponse[1] is mistakenly its request class).
constexpr const char* kAlterConfigsV1Response =
    "00000000 | 00000002 | 0000 ffff 02 00066f7264657273 | 0028 000d496e76616c69642076616c7565 02 000178";

// Decodes a kafka-python request frame and checks that encoding it again gives the same bytes.
template <ApiMessage T>
T decode_golden_request(const char* frame_hex) {
  const Bytes frame = hex(frame_hex);
  RequestHeader header;
  const T request = testing::decode_request_frame<T>(frame, &header);
  Result<Bytes> again = encode_request_frame(header, request);
  EXPECT_TRUE(again.ok()) << again.status().to_string();
  if (again.ok()) {
    EXPECT_EQ(*again, frame);
  }
  return request;
}

std::string to_hex(ByteView bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

template <ApiMessage T>
void expect_body(const T& msg, int16_t version, const char* body_hex) {
  Bytes out;
  ASSERT_TRUE(encode_message(msg, version, &out).ok());
  EXPECT_EQ(to_hex(out), to_hex(hex(body_hex))) << "version " << version;
  Result<T> back = decode_message<T>(hex(body_hex), version);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
}

// An empty (not null) config list; `{}` would make the optional null.
const std::vector<CreateTopicsResponse::Config> kNoConfigs;

Uuid sample_id() {
  Uuid id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<uint8_t>(i + 1);
  return id;
}

// --- CreateTopics ---

TEST(AdminCodec, CreateTopicsV3RequestFromKafkaPython) {
  const auto request = decode_golden_request<CreateTopicsRequest>(kCreateTopicsV3Request);
  ASSERT_EQ(request.topics.size(), 2u);
  EXPECT_EQ(request.topics[0].name, "orders");
  EXPECT_EQ(request.topics[0].num_partitions, 3);
  EXPECT_EQ(request.topics[0].replication_factor, 1);
  ASSERT_EQ(request.topics[0].configs.size(), 2u);
  EXPECT_EQ(request.topics[0].configs[0].value, "3600000");
  EXPECT_FALSE(request.topics[0].configs[1].value.has_value());
  EXPECT_EQ(request.topics[1].num_partitions, -1);
  ASSERT_EQ(request.topics[1].assignments.size(), 1u);
  EXPECT_EQ(request.topics[1].assignments[0].broker_ids, std::vector<int32_t>{1});
  EXPECT_EQ(request.timeout_ms, 30000);
  EXPECT_TRUE(request.validate_only);
}

TEST(AdminCodec, CreateTopicsV3ResponseMatchesKafkaPython) {
  CreateTopicsResponse response;
  response.throttle_time_ms = 5;
  response.topics.push_back({"orders", {}, 0, std::nullopt, std::nullopt, 3, 1, {}});
  response.topics.push_back({"bad", {}, 36, "Topic 'bad' already exists.", std::nullopt, -1, -1, {}});
  expect_body(response, 3, kCreateTopicsV3Response);
}

TEST(AdminCodec, CreateTopicsV7ResponseFlexibleBytes) {
  CreateTopicsResponse response;
  CreateTopicsResponse::Topic topic{"t", sample_id(), 0, std::nullopt, int16_t{29}, 1, 1, kNoConfigs};
  topic.configs->push_back({"a", "b", false, 5, false});
  response.topics.push_back(topic);
  // Compact arrays and strings; the topic's tagged TopicConfigErrorCode (tag 0, 2 bytes) before its end.
  expect_body(response, 7,
              "00000000 | 02 | 0274 0102030405060708090a0b0c0d0e0f10 0000 00 00000001 0001"
              " | 02 0261 0262 00 05 00 00 | 01 00 02 001d | 00");
}

TEST(AdminCodec, CreateTopicsRoundTripsAtEveryVersion) {
  CreateTopicsRequest request;
  request.topics.push_back({"a", 2, 1, {{0, {1}}, {1, {1}}}, {{"retention.ms", "1"}, {"x", std::nullopt}}});
  request.timeout_ms = 1234;
  request.validate_only = true;
  CreateTopicsResponse response;
  response.throttle_time_ms = 3;
  response.topics.push_back({"a", sample_id(), 40, "bad", std::nullopt, 2, 1, kNoConfigs});
  response.topics[0].configs->push_back({"retention.ms", "1", true, 1, false});
  response.topics.push_back({"b", {}, 0, std::nullopt, std::nullopt, -1, -1, std::nullopt});  // null configs (v5+)
  for (int16_t v = 0; v <= 7; ++v) {
    const CreateTopicsRequest back = round_trip(request, v);
    EXPECT_EQ(back.topics[0].assignments[1].partition_index, 1);
    EXPECT_EQ(back.validate_only, v >= 1);
    const CreateTopicsResponse answer = round_trip(response, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 2 ? 3 : 0);
    EXPECT_EQ(answer.topics[0].error_message, v >= 1 ? std::optional<std::string>("bad") : std::nullopt);
    EXPECT_EQ(answer.topics[0].topic_id, v >= 7 ? sample_id() : Uuid::zero());
    EXPECT_EQ(answer.topics[0].num_partitions, v >= 5 ? 2 : -1);
    EXPECT_EQ(answer.topics[0].configs->size(), v >= 5 ? 1u : 0u);
    EXPECT_EQ(answer.topics[1].configs.has_value(), v < 5);
  }
}

TEST(AdminCodec, CreateTopicsV0FromKafkaPython) {
  const auto request = decode_golden_request<CreateTopicsRequest>(kCreateTopicsV0Request);
  ASSERT_EQ(request.topics.size(), 1u);
  EXPECT_EQ(request.topics[0].num_partitions, 3);
  EXPECT_EQ(request.topics[0].configs[0].value, "3600000");
  EXPECT_FALSE(request.validate_only);
  CreateTopicsResponse response;
  response.throttle_time_ms = 5;  // not in v0
  response.topics.push_back({"orders", {}, 0, std::nullopt, std::nullopt, 3, 1, {}});
  response.topics.push_back({"bad", {}, 36, "Topic 'bad' already exists.", std::nullopt, -1, -1, {}});
  expect_body(response, 0, kCreateTopicsV0Response);
}

// --- DeleteTopics ---

TEST(AdminCodec, DeleteTopicsV0FromKafkaPython) {
  const auto request = decode_golden_request<DeleteTopicsRequest>(kDeleteTopicsV0Request);
  EXPECT_EQ(request.topic_names, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(request.timeout_ms, 15000);
  DeleteTopicsResponse response;
  response.throttle_time_ms = 5;  // not in v0
  response.responses.push_back({"a", {}, 0, std::nullopt});
  response.responses.push_back({"bc", {}, 3, std::nullopt});
  expect_body(response, 0, kDeleteTopicsV0Response);
}

TEST(AdminCodec, DeleteTopicsV3FromKafkaPython) {
  const auto request = decode_golden_request<DeleteTopicsRequest>(kDeleteTopicsV3Request);
  EXPECT_EQ(request.topic_names, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(request.timeout_ms, 15000);
  DeleteTopicsResponse response;
  response.responses.push_back({"a", {}, 0, std::nullopt});
  response.responses.push_back({"bc", {}, 3, std::nullopt});
  expect_body(response, 3, kDeleteTopicsV3Response);
}

TEST(AdminCodec, DeleteTopicsV6ByNameOrIdFlexibleBytes) {
  DeleteTopicsRequest request;
  request.topics.push_back({"a", Uuid::zero()});
  request.topics.push_back({std::nullopt, sample_id()});
  request.timeout_ms = 1000;
  // Topics[] replaces TopicNames[]: a compact nullable name and a uuid each, then the timeout.
  expect_body(request, 6,
              "03 | 0261 00000000000000000000000000000000 00 | 00 0102030405060708090a0b0c0d0e0f10 00 | 000003e8 | 00");
  DeleteTopicsResponse response;
  response.responses.push_back({std::nullopt, sample_id(), 100, "no topic has that id"});
  const DeleteTopicsResponse back = round_trip(response, 6);
  EXPECT_FALSE(back.responses[0].name.has_value());
  Bytes out;
  EXPECT_EQ(encode_message(response, 5, &out).code(), Code::kInvalidArgument);  // a null name needs v6
}

TEST(AdminCodec, DeleteTopicsRoundTripsAtEveryVersion) {
  DeleteTopicsRequest request;
  request.topics.push_back({"x", Uuid::zero()});
  request.topic_names = {"x", "y"};
  request.timeout_ms = 5;
  DeleteTopicsResponse response;
  response.throttle_time_ms = 2;
  response.responses.push_back({"x", sample_id(), 3, "gone"});
  for (int16_t v = 0; v <= 6; ++v) {
    const DeleteTopicsRequest back = round_trip(request, v);
    EXPECT_EQ(back.topics.size(), v >= 6 ? 1u : 0u);
    EXPECT_EQ(back.topic_names.size(), v >= 6 ? 0u : 2u);
    const DeleteTopicsResponse answer = round_trip(response, v);
    EXPECT_EQ(answer.throttle_time_ms, v >= 1 ? 2 : 0);
    EXPECT_EQ(answer.responses[0].topic_id, v >= 6 ? sample_id() : Uuid::zero());
    EXPECT_EQ(answer.responses[0].error_message.has_value(), v >= 5);
  }
}

// --- DeleteRecords ---

TEST(AdminCodec, DeleteRecordsBytesAndRoundTrips) {
  DeleteRecordsRequest request;
  request.topics.push_back({"t", {{0, -1}, {2, 40}}});
  request.timeout_ms = 100;
  expect_body(request, 0, "00000001 000174 00000002 00000000 ffffffffffffffff 00000002 0000000000000028 | 00000064");
  expect_body(request, 2, "02 0274 03 00000000 ffffffffffffffff 00 00000002 0000000000000028 00 00 | 00000064 | 00");
  DeleteRecordsResponse response;
  response.throttle_time_ms = 1;
  response.topics.push_back({"t", {{0, 7, 0}, {2, -1, 1}}});
  for (int16_t v = 0; v <= 2; ++v) {
    EXPECT_EQ(round_trip(request, v).topics[0].partitions[1].offset, 40);
    EXPECT_EQ(round_trip(response, v).topics[0].partitions[0].low_watermark, 7);
  }
}

// --- DescribeConfigs ---

TEST(AdminCodec, DescribeConfigsV2FromKafkaPython) {
  const auto request = decode_golden_request<DescribeConfigsRequest>(kDescribeConfigsV2Request);
  ASSERT_EQ(request.resources.size(), 2u);
  EXPECT_EQ(request.resources[0].resource_type, 2);
  EXPECT_EQ(request.resources[0].configuration_keys, std::vector<std::string>{"retention.ms"});
  EXPECT_EQ(request.resources[1].resource_name, "1");
  EXPECT_FALSE(request.resources[1].configuration_keys.has_value());
  EXPECT_TRUE(request.include_synonyms);

  DescribeConfigsResponse response;
  DescribeConfigsResponse::Config config{"retention.ms", "3600000", false, false, 1, false, {}, 0, std::nullopt};
  config.synonyms = {{"retention.ms", "3600000", 1}, {"log.retention.ms", "604800000", 5}};
  response.results.push_back({0, std::nullopt, 2, "orders", {config}});
  response.results.push_back({3, "gone", 2, "x", {}});
  expect_body(response, 2, kDescribeConfigsV2Response);
}

TEST(AdminCodec, DescribeConfigsV0FromKafkaPython) {
  const auto request = decode_golden_request<DescribeConfigsRequest>(kDescribeConfigsV0Request);
  ASSERT_EQ(request.resources.size(), 1u);
  EXPECT_EQ(request.resources[0].configuration_keys->size(), 2u);
  EXPECT_FALSE(request.include_synonyms);
  DescribeConfigsResponse response;
  response.results.push_back({0, std::nullopt, 2, "orders", {}});
  // config_source, the synonyms, the type and the documentation have no place in v0: only is_default travels.
  response.results[0].configs.push_back(
      {"retention.ms", "3600000", false, false, 1, false, {{"retention.ms", "1", 1}}, 5, "doc"});
  response.results[0].configs.push_back({"cleanup.policy", "delete", false, true, 5, false, {}, 7, std::nullopt});
  expect_body(response, 0, kDescribeConfigsV0Response);
}

// v4 is flexible: compact strings and arrays (a null key list is 00), a tagged-field block per struct.
TEST(AdminCodec, DescribeConfigsV4FlexibleBytes) {
  DescribeConfigsRequest request;
  request.resources.push_back({2, "t", std::nullopt});
  request.include_synonyms = true;
  expect_body(request, 4, "02 | 02 0274 00 00 | 01 | 00 | 00");
  DescribeConfigsResponse response;
  response.results.push_back({0, std::nullopt, 2, "t", {}});
  response.results[0].configs.push_back({"a", "b", false, false, 5, false, {}, 3, std::nullopt});
  expect_body(response, 4, "00000000 | 02 | 0000 00 02 0274 02 | 0261 0262 00 05 00 01 03 00 00 | 00 | 00");
}

TEST(AdminCodec, DescribeConfigsRoundTripsAtEveryVersion) {
  DescribeConfigsRequest request;
  request.resources.push_back({2, "t", std::vector<std::string>{"a", "b"}});
  request.resources.push_back({4, "1", std::nullopt});
  request.include_synonyms = true;
  request.include_documentation = true;
  DescribeConfigsResponse response;
  response.throttle_time_ms = 9;
  DescribeConfigsResponse::Config config{"a", std::nullopt, true, true, 4, true, {{"s", "v", 4}}, 5, "doc"};
  response.results.push_back({0, std::nullopt, 2, "t", {config}});
  for (int16_t v = 0; v <= 4; ++v) {
    const DescribeConfigsRequest back = round_trip(request, v);
    EXPECT_EQ(back.include_synonyms, v >= 1);
    EXPECT_EQ(back.include_documentation, v >= 3);
    EXPECT_FALSE(back.resources[1].configuration_keys.has_value());
    const DescribeConfigsResponse::Config answer = round_trip(response, v).results[0].configs[0];
    EXPECT_EQ(answer.is_default, v == 0);
    EXPECT_EQ(answer.config_source, v >= 1 ? 4 : -1);
    EXPECT_EQ(answer.synonyms.size(), v >= 1 ? 1u : 0u);
    EXPECT_EQ(answer.config_type, v >= 3 ? 5 : 0);
    EXPECT_EQ(answer.documentation, v >= 3 ? std::optional<std::string>("doc") : std::nullopt);
  }
}

// --- AlterConfigs and IncrementalAlterConfigs ---

TEST(AdminCodec, AlterConfigsV1FromKafkaPython) {
  const auto request = decode_golden_request<AlterConfigsRequest>(kAlterConfigsV1Request);
  ASSERT_EQ(request.resources.size(), 1u);
  ASSERT_EQ(request.resources[0].configs.size(), 2u);
  EXPECT_EQ(request.resources[0].configs[0].value, "7200000");
  EXPECT_FALSE(request.resources[0].configs[1].value.has_value());
  EXPECT_FALSE(request.validate_only);
  AlterConfigsResponse response;
  response.responses.push_back({0, std::nullopt, 2, "orders"});
  response.responses.push_back({40, "Invalid value", 2, "x"});
  expect_body(response, 1, kAlterConfigsV1Response);
}

TEST(AdminCodec, AlterConfigsAndIncrementalRoundTrips) {
  AlterConfigsRequest alter;
  alter.resources.push_back({2, "t", {{"a", "1"}, {"b", std::nullopt}}});
  alter.validate_only = true;
  AlterConfigsResponse alter_response;
  alter_response.responses.push_back({42, "why", 4, "1"});
  for (int16_t v = 0; v <= 2; ++v) {
    EXPECT_TRUE(round_trip(alter, v).validate_only);
    EXPECT_EQ(round_trip(alter_response, v).responses[0].error_message, "why");
  }
  IncrementalAlterConfigsRequest incremental;
  incremental.resources.push_back({2, "t", {{"cleanup.policy", 2, "compact"}, {"retention.ms", 1, std::nullopt}}});
  IncrementalAlterConfigsResponse incremental_response;
  incremental_response.responses.push_back({0, std::nullopt, 2, "t"});
  for (int16_t v = 0; v <= 1; ++v) {
    EXPECT_EQ(round_trip(incremental, v).resources[0].configs[1].config_operation, 1);
    EXPECT_EQ(round_trip(incremental_response, v).responses[0].resource_name, "t");
  }
  IncrementalAlterConfigsRequest one;
  one.resources.push_back({2, "t", {{"a", 0, "b"}}});
  // v1 is flexible: compact everything, a tagged-field block per struct.
  expect_body(one, 1, "02 | 02 0274 02 | 0261 00 0262 00 | 00 | 00 | 00");
}

// --- DescribeCluster ---

TEST(AdminCodec, DescribeClusterBytesAndRoundTrips) {
  DescribeClusterRequest request;
  request.include_cluster_authorized_operations = true;
  expect_body(request, 0, "01 00");
  request.endpoint_type = kEndpointTypeControllers;
  expect_body(request, 1, "01 02 00");
  DescribeClusterResponse response;
  response.cluster_id = "c";
  response.controller_id = 1;
  response.brokers.push_back({1, "h", 9092, std::nullopt});
  expect_body(response, 0, "00000000 0000 00 | 0263 00000001 | 02 00000001 0268 00002384 00 00 | 80000000 | 00");
  expect_body(response, 1, "00000000 0000 00 01 | 0263 00000001 | 02 00000001 0268 00002384 00 00 | 80000000 | 00");
  EXPECT_EQ(round_trip(response, 1).brokers[0].port, 9092);
}

// --- DescribeQuorum ---

// Hand-built from Kafka 3.9's DescribeQuorumRequest.json / DescribeQuorumResponse.json: flexible from v0 (compact
// arrays and strings, a tagged-field block per struct); v1 adds a replica's two timestamps.
TEST(AdminCodec, DescribeQuorumBytesAndRoundTrips) {
  const char* kName = "13 5f5f636c75737465725f6d65746164617461";  // "__cluster_metadata", length + 1
  DescribeQuorumRequest request;
  request.topics.push_back({kClusterMetadataTopic, {{0}}});
  const std::string request_body = fmt::format("02 | {} | 02 00000000 00 | 00 | 00", kName);
  expect_body(request, 0, request_body.c_str());
  expect_body(request, 1, request_body.c_str());

  DescribeQuorumResponse response;
  DescribeQuorumResponse::Partition partition{.partition_index = 0, .error_code = 0, .leader_id = 1,
                                              .leader_epoch = 5, .high_watermark = 7};
  partition.current_voters.push_back({.replica_id = 1, .log_end_offset = 8, .last_fetch_timestamp = 10,
                                      .last_caught_up_timestamp = 11});
  response.topics.push_back({kClusterMetadataTopic, {partition}});
  const std::string v0 = fmt::format(
      "0000 | 02 {} | 02 00000000 0000 00000001 00000005 0000000000000007"
      " | 02 00000001 0000000000000008 00 | 01 | 00 | 00 | 00",
      kName);
  expect_body(response, 0, v0.c_str());
  const std::string v1 = fmt::format(
      "0000 | 02 {} | 02 00000000 0000 00000001 00000005 0000000000000007"
      " | 02 00000001 0000000000000008 000000000000000a 000000000000000b 00 | 01 | 00 | 00 | 00",
      kName);
  expect_body(response, 1, v1.c_str());
  const DescribeQuorumResponse back = round_trip(response, 1);
  ASSERT_EQ(back.topics.size(), 1u);
  ASSERT_EQ(back.topics[0].partitions.size(), 1u);
  EXPECT_EQ(back.topics[0].partitions[0].current_voters[0].last_caught_up_timestamp, 11);
  EXPECT_EQ(round_trip(response, 0).topics[0].partitions[0].current_voters[0].last_fetch_timestamp, -1)
      << "v0 carries no timestamps: the default, -1, as Kafka's";
}

// --- CreatePartitions ---

// kafka-python 2.0.2: CreatePartitionsRequest[1](topic_partitions=[('t', (3, [[1, 2]])), ('u', (2, None))],
// timeout=5000, validate_only=False).encode() (its response classes do not encode).
TEST(AdminCodec, CreatePartitionsBytesAndRoundTrips) {
  CreatePartitionsRequest request;
  request.topics.push_back({"t", 3, std::vector<CreatePartitionsRequest::Assignment>{{{1, 2}}}});
  request.topics.push_back({"u", 2, std::nullopt});
  request.timeout_ms = 5000;
  const char* kV1 = "00000002 | 0001 74 00000003 00000001 00000002 00000001 00000002 | 0001 75 00000002 ffffffff |"
                    " 00001388 00";
  expect_body(request, 0, kV1);
  expect_body(request, 1, kV1);
  // v2 is flexible: compact arrays and strings (a null array is 00), a tagged-field block per struct.
  expect_body(request, 2, "03 | 0274 00000003 02 03 00000001 00000002 00 00 | 0275 00000002 00 00 | 00001388 00 00");
  EXPECT_FALSE(round_trip(request, 3).topics[1].assignments.has_value());
  EXPECT_EQ(round_trip(request, 3).topics[0].assignments->at(0).broker_ids.size(), 2u);

  CreatePartitionsResponse response;
  response.throttle_time_ms = 5;
  response.results.push_back({"t", 37, "no"});
  response.results.push_back({"u", 0, std::nullopt});
  expect_body(response, 1, "00000005 00000002 | 0001 74 0025 0002 6e6f | 0001 75 0000 ffff");
  expect_body(response, 2, "00000005 03 | 0274 0025 03 6e6f 00 | 0275 0000 00 00 | 00");
  for (int16_t v = 0; v <= 3; ++v) {
    EXPECT_EQ(round_trip(response, v).results[0].error_message, "no") << v;
    EXPECT_FALSE(round_trip(response, v).results[1].error_message.has_value()) << v;
  }
}

// The kafka-python script (run with /usr/bin/python3):
//   from kafka.protocol.parser import KafkaProtocol
//   from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse, ...
//   def frame(req, cid):
//       p = KafkaProtocol(client_id='kafka-python'); p.send_request(req, correlation_id=cid)
//       return p.send_bytes().hex()
//   print(frame(CreateTopicsRequest[3](create_topic_requests=[...], timeout=30000, validate_only=True), 7))
//   r = CreateTopicsResponse[3](throttle_time_ms=5, topic_errors=[...]); print(r.encode().hex())

}  // namespace
}  // namespace sluice::protocol
