// Requests read as Kafka reads them (handler.h decode_request): bytes after a request's body are ignored and
// counted, not a reason to close the connection. The case that needs it is librdkafka 2.15's all-topics Metadata
// v9+ (rd_kafka_MetadataRequest0): it reserves 4 bytes for the topic array's length and shrinks them to a compact
// varint only for a named list, so the all-topics body starts 00 00 00 00: a null array (every topic), then three
// zero bytes read as the next fields, and the fields it meant to send are left over.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/metadata.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::MetadataResponse;

void put_int16(Bytes& out, int16_t v) {
  out.push_back(static_cast<uint8_t>(static_cast<uint16_t>(v) >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

void put_int32(Bytes& out, int32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> shift));
}

// The frame librdkafka 2.15 writes for "every topic" at a flexible Metadata version, byte by byte from
// rd_kafka_MetadataRequest0 (independent of this codebase's encoder on purpose).
Bytes librdkafka_all_topics_metadata(int16_t version, int32_t correlation_id, bool allow_auto_create) {
  const std::string client_id = "rdkafka";
  Bytes frame;
  put_int16(frame, static_cast<int16_t>(protocol::ApiKey::kMetadata));  // request header v2
  put_int16(frame, version);
  put_int32(frame, correlation_id);
  put_int16(frame, static_cast<int16_t>(client_id.size()));
  frame.insert(frame.end(), client_id.begin(), client_id.end());
  frame.push_back(0x00);  // the header's empty tagged fields
  put_int32(frame, 0);    // rd_kafka_buf_write_arraycnt_pos: the topic count's placeholder, never shrunk
  frame.push_back(allow_auto_create ? 0x01 : 0x00);  // AllowAutoTopicCreation (v4+)
  if (version <= 10) frame.push_back(0x00);         // IncludeClusterAuthorizedOperations (v8-10)
  frame.push_back(0x00);                            // IncludeTopicAuthorizedOperations (v8+)
  frame.push_back(0x00);                            // the body's empty tagged fields
  Bytes sized;
  put_int32(sized, static_cast<int32_t>(frame.size()));
  sized.insert(sized.end(), frame.begin(), frame.end());
  return sized;
}

std::vector<std::string> topic_names(const MetadataResponse& response) {
  std::vector<std::string> names;
  for (const MetadataResponse::Topic& topic : response.topics) names.push_back(topic.name.value_or("<null>"));
  std::sort(names.begin(), names.end());
  return names;
}

TEST(RequestDecoding, LibrdkafkaAllTopicsMetadataIsAnsweredWithEveryTopicAndTheConnectionStaysOpen) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "alpha", 2);
    create_topic(env, broker, "beta", 1);
    const protocol::ApiInfo& metadata = protocol::api_info(protocol::ApiKey::kMetadata);
    int32_t correlation_id = 100;
    uint64_t noted = 0;
    for (int16_t version = 9; version <= metadata.max_version; ++version) {
      for (const bool allow_auto_create : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "Metadata v" << version << ", allow_auto_create " << allow_auto_create);
        ++correlation_id;
        ASSERT_TRUE(client.send_raw(librdkafka_all_topics_metadata(version, correlation_id, allow_auto_create)).ok());
        auto response = client.receive<MetadataResponse>(protocol::ApiKey::kMetadata, version);
        ASSERT_TRUE(response.ok()) << response.status().to_string();
        EXPECT_EQ(client.last_correlation_id(), correlation_id);
        EXPECT_EQ(topic_names(*response), (std::vector<std::string>{"alpha", "beta"}));
        EXPECT_EQ(broker.requests_with_trailing_bytes(), ++noted);
        // Still open: the next request on the connection is answered.
        auto versions = client.call<protocol::ApiVersionsResponse>(protocol::ApiVersionsRequest{}, 3);
        ASSERT_TRUE(versions.ok()) << versions.status().to_string();
      }
    }
    EXPECT_EQ(broker.open_connections(), 1u);
    EXPECT_EQ(broker.topics().all().size(), 2u) << "every topic was asked for: nothing is auto-created";
  }));
}

// A body that is well-formed to its end is not counted; a body cut short still closes the connection.
TEST(RequestDecoding, OnlyBytesPastACompleteBodyAreForgiven) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    protocol::MetadataRequest request;
    request.topics.reset();
    ASSERT_TRUE(client.call<MetadataResponse>(request, 9).ok());
    EXPECT_EQ(broker.requests_with_trailing_bytes(), 0u);

    KafkaClient cut = BrokerHarness::connect(env);
    Bytes frame = librdkafka_all_topics_metadata(9, 7, false);
    const size_t header_bytes = 4 + 2 + 2 + 4 + 2 + 7 + 1;  // size, key, version, correlation, client id, tags
    frame.resize(header_bytes + 2);                          // null topics, one bool: two fields short
    frame[3] = static_cast<uint8_t>(frame.size() - 4);
    ASSERT_TRUE(cut.send_raw(frame).ok());
    auto answer = cut.receive_frame();
    EXPECT_TRUE(!answer.ok() || !answer->has_value()) << "a truncated request closes the connection";
    EXPECT_EQ(broker.requests_with_trailing_bytes(), 0u);
  }));
}

}  // namespace
}  // namespace sluice::kafka
