// Metadata v0-12: kafka-python's request and response bytes, hand-built flexible v9 and v12 bytes (topic ids, null
// names), and round trips of a request and a response using every field at every version.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/protocol/header.h"
#include "core/protocol/messages/metadata.h"
#include "tests/core/protocol/golden_frames.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::hex;
using testing::round_trip;

// Decodes a kafka-python request frame and checks that encoding it again gives the client's bytes back.
MetadataRequest decode_request(const char* frame_hex) {
  const Bytes frame = hex(frame_hex);
  RequestHeader header;
  const MetadataRequest request = testing::decode_request_frame<MetadataRequest>(frame, &header);
  Result<Bytes> again = encode_request_frame(header, request);
  EXPECT_TRUE(again.ok());
  if (again.ok()) {
    EXPECT_EQ(*again, frame);
  }
  return request;
}

TEST(Metadata, DecodesKafkaPythonRequests) {
  const MetadataRequest v0 = decode_request(golden::kMetadataV0Request);
  ASSERT_TRUE(v0.topics.has_value());
  ASSERT_EQ(v0.topics->size(), 2u);
  EXPECT_EQ((*v0.topics)[1].name, "bb");
  EXPECT_FALSE(v0.all_topics(0));

  const MetadataRequest v1 = decode_request(golden::kMetadataV1NullRequest);
  EXPECT_FALSE(v1.topics.has_value());
  EXPECT_TRUE(v1.all_topics(1));

  const MetadataRequest v4 = decode_request(golden::kMetadataV4Request);
  EXPECT_EQ((*v4.topics)[0].name, "orders");
  EXPECT_FALSE(v4.allow_auto_topic_creation);

  const MetadataRequest v5 = decode_request(golden::kMetadataV5EmptyRequest);
  EXPECT_TRUE(v5.topics->empty());
  EXPECT_FALSE(v5.all_topics(5));  // from v1 an empty list means no topic
  EXPECT_TRUE(v5.allow_auto_topic_creation);
}

TEST(Metadata, V0EmptyListMeansAllAndNullIsRejected) {
  MetadataRequest request;
  EXPECT_TRUE(request.all_topics(0));
  request.topics.reset();
  Bytes out;
  EXPECT_EQ(encode_message(request, 0, &out).code(), Code::kInvalidArgument);  // v0 cannot say null
  EXPECT_FALSE(decode_message<MetadataRequest>(hex("ffffffff"), 0).ok());
}

TEST(Metadata, RequestV9FlexibleBytes) {
  MetadataRequest request;
  request.topics = std::vector<MetadataRequest::Topic>{{.name = "t"}};
  Result<Bytes> frame = encode_request_frame(RequestHeader{ApiKey::kMetadata, 9, 42, "c"}, request);
  ASSERT_TRUE(frame.ok());
  // Header v2 with a classic client id, then compact topics (each with its tag block), three bools, tags.
  EXPECT_EQ(*frame, hex("00000014 | 0003 0009 0000002a 0001 63 00 | 02 02 74 00 | 01 | 00 | 00 | 00"));
  Result<MetadataRequest> null_topics = decode_message<MetadataRequest>(hex("00 | 01 | 00 | 01 | 00"), 9);
  ASSERT_TRUE(null_topics.ok()) << null_topics.status().to_string();
  EXPECT_TRUE(null_topics->all_topics(9));
  EXPECT_TRUE(null_topics->include_topic_authorized_operations);
}

// librdkafka 2.15's all-topics v9 body: a 4-byte placeholder where the compact topic count goes, then
// AllowAutoTopicCreation (1 here), the two authorized-operations bools and the tag block. The strict codec refuses
// the bytes left over; the broker's decode_request reads the prefix (null topics, three zero bytes, then the 01 as
// one tagged field 0 of size 0) and counts the last byte.
TEST(Metadata, LibrdkafkaAllTopicsBodyIsRefusedStrictlyAndReadByTheBrokersDecode) {
  const Bytes body = hex("00000000 | 01 | 00 | 00 | 00");
  const Result<MetadataRequest> strict = decode_message<MetadataRequest>(body, 9);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("trailing"), std::string::npos) << strict.status().message();
  size_t trailing = 0;
  const Result<MetadataRequest> lenient = protocol::decode_request<MetadataRequest>(body, 9, &trailing);
  ASSERT_TRUE(lenient.ok()) << lenient.status().to_string();
  EXPECT_TRUE(lenient->all_topics(9));
  EXPECT_EQ(trailing, 1u);
  const Result<MetadataRequest> cut = protocol::decode_request<MetadataRequest>(hex("00 | 01"), 9, &trailing);
  EXPECT_FALSE(cut.ok()) << "a body cut short is still an error";
}

MetadataResponse sample_response() {
  MetadataResponse response;
  response.throttle_time_ms = 0;
  response.brokers = {{1, "h1", 9092, std::nullopt}, {2, "h2", 9093, "r1"}};
  response.cluster_id = "c1";
  response.controller_id = 1;
  MetadataResponse::Topic t{.error_code = 0, .name = "t", .partitions = {}};
  t.partitions = {{0, 0, 1, -1, {1, 2}, {1}, {2}}, {6, 1, -1, -1, {2, 1}, {}, {}}};
  response.topics = {t, MetadataResponse::Topic{.error_code = 3, .name = "u", .is_internal = true, .partitions = {}}};
  return response;
}

TEST(Metadata, ResponsesMatchKafkaPython) {
  Bytes v5;
  ASSERT_TRUE(encode_message(sample_response(), 5, &v5).ok());
  EXPECT_EQ(v5, hex(golden::kMetadataV5ResponseBody));

  MetadataResponse small;
  small.brokers = {{1, "h1", 9092, std::nullopt}};
  small.topics = {MetadataResponse::Topic{.name = "t", .partitions = {{0, 0, 1, -1, {1}, {1}, {}}}}};
  Bytes v0;
  ASSERT_TRUE(encode_message(small, 0, &v0).ok());
  EXPECT_EQ(v0, hex(golden::kMetadataV0ResponseBody));
  Result<MetadataResponse> back = decode_message<MetadataResponse>(v0, 0);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->topics[0].partitions[0].leader_id, 1);
  EXPECT_EQ(back->controller_id, -1);  // absent in v0: the default
}

TEST(Metadata, ResponseV9FlexibleBytes) {
  MetadataResponse response;
  response.brokers = {{1, "h1", 9092, std::nullopt}};
  response.cluster_id = "c1";
  response.controller_id = 1;
  response.topics = {MetadataResponse::Topic{.name = "t", .partitions = {{0, 0, 1, 5, {1}, {1}, {}}}}};
  Result<Bytes> frame = encode_response_frame(response, 9, 3);
  ASSERT_TRUE(frame.ok());
  const Bytes expected = hex(
      "00000049 | 00000003 00"                                        // size, header v1 (tag block)
      " | 00000000"                                                   // throttle
      " | 02 00000001 036831 00002384 00 00"                          // brokers: rack null, tags
      " | 036331 | 00000001"                                          // cluster id, controller
      " | 02 0000 0274 00"                                            // topics: error, name, is_internal
      " | 02 0000 00000000 00000001 00000005 02 00000001 02 00000001 01 00"  // one partition
      " | 80000000 00"                                                // topic authorized operations, tags
      " | 80000000 | 00");                                            // cluster authorized operations, tags
  EXPECT_EQ(*frame, expected);
}

Uuid sample_id() {
  Uuid id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<uint8_t>(i + 1);
  return id;
}

constexpr const char* kSampleIdHex = "0102030405060708090a0b0c0d0e0f10";

TEST(Metadata, RequestV12ByTopicIdWithANullName) {
  MetadataRequest request;
  request.topics = std::vector<MetadataRequest::Topic>{{.topic_id = sample_id(), .name = std::nullopt}};
  request.allow_auto_topic_creation = false;
  Bytes body;
  ASSERT_TRUE(encode_message(request, 12, &body).ok());
  // Topics: the id, a null compact name (0), the topic's tags; auto creation, topic operations; tags. v11 dropped
  // the cluster operations flag.
  const Bytes expected = hex(std::string("02 ") + kSampleIdHex + " 00 00 | 00 | 00 | 00");
  EXPECT_EQ(body, expected);
  Result<MetadataRequest> back = decode_message<MetadataRequest>(expected, 12);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ((*back->topics)[0].topic_id, sample_id());
  EXPECT_FALSE((*back->topics)[0].name.has_value());
  EXPECT_TRUE(back->by_topic_id());
  // Before v10 the id does not exist and the name may not be null.
  Bytes v9;
  EXPECT_EQ(encode_message(request, 9, &v9).code(), Code::kInvalidArgument);
}

TEST(Metadata, ResponseV12NullNameAndTopicId) {
  MetadataResponse response;
  response.controller_id = 1;
  response.topics = {
      MetadataResponse::Topic{.error_code = 100, .name = std::nullopt, .topic_id = sample_id(), .partitions = {}}};
  Bytes body;
  ASSERT_TRUE(encode_message(response, 12, &body).ok());
  const Bytes expected = hex(std::string("00000000 | 01 | 00 | 00000001") +  // throttle, no brokers, null cluster id
                             " | 02 0064 00 " + kSampleIdHex + " 00 01 80000000 00"  // one topic, null name
                             " | 00");
  EXPECT_EQ(body, expected);
  Result<MetadataResponse> back = decode_message<MetadataResponse>(expected, 12);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_FALSE(back->topics[0].name.has_value());
  EXPECT_EQ(back->topics[0].topic_id, sample_id());
  Bytes v11;
  EXPECT_EQ(encode_message(response, 11, &v11).code(), Code::kInvalidArgument) << "names are nullable from v12";
}

TEST(Metadata, RoundTripsAtEveryVersion) {
  MetadataResponse response = sample_response();
  response.throttle_time_ms = 12;
  response.topics[0].partitions[0].leader_epoch = 4;
  response.topics[0].topic_authorized_operations = 0x0f;
  response.cluster_authorized_operations = 0x1f;
  response.topics[0].topic_id = sample_id();
  MetadataRequest request;
  request.topics = std::vector<MetadataRequest::Topic>{{.name = "a"}, {.topic_id = sample_id(), .name = "b"}};
  request.allow_auto_topic_creation = false;
  request.include_topic_authorized_operations = true;
  request.include_cluster_authorized_operations = true;
  for (int16_t version = 0; version <= 12; ++version) {
    const MetadataResponse back = round_trip(response, version);
    EXPECT_EQ(back.throttle_time_ms, version >= 3 ? 12 : 0);
    EXPECT_EQ(back.brokers[1].rack, version >= 1 ? std::optional<std::string>("r1") : std::nullopt);
    EXPECT_EQ(back.cluster_id, version >= 2 ? std::optional<std::string>("c1") : std::nullopt);
    EXPECT_EQ(back.controller_id, version >= 1 ? 1 : -1);
    EXPECT_EQ(back.topics[1].is_internal, version >= 1);
    EXPECT_EQ(back.topics[0].partitions[0].leader_epoch, version >= 7 ? 4 : -1);
    EXPECT_EQ(back.topics[0].partitions[0].offline_replicas.size(), version >= 5 ? 1u : 0u);
    EXPECT_EQ(back.topics[0].topic_authorized_operations, version >= 8 ? 0x0f : kAuthorizedOperationsOmitted);
    EXPECT_EQ(back.cluster_authorized_operations,
              version >= 8 && version <= 10 ? 0x1f : kAuthorizedOperationsOmitted);
    EXPECT_EQ(back.topics[0].topic_id, version >= 10 ? sample_id() : Uuid::zero());
    const MetadataRequest request_back = round_trip(request, version);
    EXPECT_EQ(request_back.topics->size(), 2u);
    EXPECT_EQ((*request_back.topics)[1].name, "b");
    EXPECT_EQ((*request_back.topics)[1].topic_id, version >= 10 ? sample_id() : Uuid::zero());
    EXPECT_EQ(request_back.allow_auto_topic_creation, version < 4);
    EXPECT_EQ(request_back.include_topic_authorized_operations, version >= 8);
    EXPECT_EQ(request_back.include_cluster_authorized_operations, version >= 8 && version <= 10);
  }
}

TEST(Metadata, TruncatedResponsesFailAtEveryCut) {
  for (int16_t version : {0, 5, 9, 10, 12}) {
    Bytes body;
    ASSERT_TRUE(encode_message(sample_response(), version, &body).ok());
    for (size_t cut = 0; cut < body.size(); ++cut) {
      EXPECT_FALSE(decode_message<MetadataResponse>(ByteView(body).first(cut), version).ok())
          << "version " << version << " cut " << cut;
    }
  }
}

}  // namespace
}  // namespace sluice::protocol
