// ApiVersions v0-4: real client requests, kafka-python's response bytes, hand-built flexible bytes with tagged
// fields, round trips at every version, and the v0-layout answer to an unsupported version.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/protocol/error_codes.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/api_versions.h"
#include "tests/core/protocol/golden_frames.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::hex;
using testing::round_trip;

ApiVersionsRequest decode_request(const char* frame_hex, int16_t expected_version) {
  RequestHeader header;
  const ApiVersionsRequest request = testing::decode_request_frame<ApiVersionsRequest>(hex(frame_hex), &header);
  EXPECT_EQ(header.api_version, expected_version);
  return request;
}

TEST(ApiVersions, DecodesRealClientRequests) {
  EXPECT_EQ(decode_request(golden::kApiVersionsV0Request, 0).client_software_name, "");
  EXPECT_EQ(decode_request(golden::kApiVersionsV2Request, 2).client_software_name, "");
  const ApiVersionsRequest v3 = decode_request(golden::kApiVersionsV3RequestLibrdkafka, 3);
  EXPECT_EQ(v3.client_software_name, "librdkafka");
  EXPECT_EQ(v3.client_software_version, "2.0.2");
}

TEST(ApiVersions, RequestFramesMatchTheClients) {
  Result<Bytes> v0 = encode_request_frame(RequestHeader{ApiKey::kApiVersions, 0, 1, "kafka-python"},
                                          ApiVersionsRequest{});
  ASSERT_TRUE(v0.ok());
  EXPECT_EQ(*v0, hex(golden::kApiVersionsV0Request));
  Result<Bytes> v3 = encode_request_frame(RequestHeader{ApiKey::kApiVersions, 3, 1, "rdkafka"},
                                          ApiVersionsRequest{"librdkafka", "2.0.2"});
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(*v3, hex(golden::kApiVersionsV3RequestLibrdkafka));
}

TEST(ApiVersions, ResponseV1MatchesKafkaPython) {
  ApiVersionsResponse response;
  response.api_keys = {{0, 0, 8}, {18, 0, 3}};
  response.throttle_time_ms = 7;
  Bytes body;
  ASSERT_TRUE(encode_message(response, 1, &body).ok());
  EXPECT_EQ(body, hex(golden::kApiVersionsV1ResponseBody));
}

TEST(ApiVersions, ResponseV3FlexibleBytes) {
  ApiVersionsResponse response;
  response.api_keys = {{18, 0, 3}};
  Result<Bytes> plain = encode_response_frame(response, 3, 7);
  ASSERT_TRUE(plain.ok());
  // Header v0 even at v3 (no tagged-field byte after the correlation id), then a compact array of one entry with
  // its own empty tag block, the throttle time, and the body's empty tag block.
  EXPECT_EQ(*plain, hex("00000013 | 00000007 | 0000 | 02 0012 0000 0003 00 | 00000000 | 00"));

  response.finalized_features_epoch = 5;
  response.supported_features = std::vector<ApiVersionsResponse::SupportedFeature>{{"kraft.version", 0, 1}};
  Bytes body;
  ASSERT_TRUE(encode_message(response, 3, &body).ok());
  const Bytes expected = hex(
      "0000 | 02 0012 0000 0003 00 | 00000000 | 02"
      " | 00 14 02 0e6b726166742e76657273696f6e 0000 0001 00"  // tag 0: SupportedFeatures, 20 bytes
      " | 01 08 0000000000000005");                            // tag 1: FinalizedFeaturesEpoch
  EXPECT_EQ(body, expected);
  Result<ApiVersionsResponse> back = decode_message<ApiVersionsResponse>(body, 3);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->finalized_features_epoch, std::optional<int64_t>(5));
  ASSERT_TRUE(back->supported_features.has_value());
  EXPECT_EQ((*back->supported_features)[0].name, "kraft.version");
  EXPECT_FALSE(back->finalized_features.has_value());
  EXPECT_FALSE(back->zk_migration_ready.has_value());
}

TEST(ApiVersions, RoundTripsAtEveryVersion) {
  ApiVersionsResponse response = api_versions_response();
  response.throttle_time_ms = 3;
  response.finalized_features_epoch = 1;
  response.finalized_features = std::vector<ApiVersionsResponse::FinalizedFeature>{{"metadata.version", 21, 1}};
  response.zk_migration_ready = false;
  response.supported_features = std::vector<ApiVersionsResponse::SupportedFeature>{{"kraft.version", 0, 1}};
  for (int16_t version = 0; version <= 4; ++version) {
    const ApiVersionsResponse back = round_trip(response, version);
    ASSERT_EQ(back.api_keys.size(), all_apis().size());
    EXPECT_EQ(back.api_keys[3].api_key, 3);
    EXPECT_EQ(back.api_keys[3].max_version, 12);
    EXPECT_EQ(back.supported_features.has_value(), version >= 3);
    EXPECT_EQ(back.throttle_time_ms, version >= 1 ? 3 : 0);
    EXPECT_EQ(back.zk_migration_ready.has_value(), version >= 3);
    EXPECT_EQ(round_trip(ApiVersionsRequest{"sluice-test", "0.1"}, version).client_software_name,
              version >= 3 ? "sluice-test" : "");
  }
}

TEST(ApiVersions, AdvertisesTheWholeTable) {
  const ApiVersionsResponse response = api_versions_response();
  EXPECT_EQ(response.error_code, 0);
  ASSERT_EQ(response.api_keys.size(), all_apis().size());
  for (size_t i = 0; i < all_apis().size(); ++i) {
    EXPECT_EQ(response.api_keys[i].api_key, static_cast<int16_t>(all_apis()[i].key));
    EXPECT_EQ(response.api_keys[i].min_version, all_apis()[i].min_version);
    EXPECT_EQ(response.api_keys[i].max_version, all_apis()[i].max_version);
  }
}

TEST(ApiVersions, UnsupportedVersionAnswerHasTheV0Layout) {
  const Bytes frame = unsupported_api_versions_frame(7);
  EXPECT_EQ(frame, hex("00000010 | 00000007 | 0023 | 00000001 0012 0000 0004"));
  ByteView body;
  Result<int32_t> corr = decode_response_header(ByteView(frame).subspan(kFrameSizeBytes), ApiKey::kApiVersions, 5,
                                                &body);
  ASSERT_TRUE(corr.ok());
  Result<ApiVersionsResponse> response = decode_message<ApiVersionsResponse>(body, 0);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->error_code, static_cast<int16_t>(ErrorCode::kUnsupportedVersion));
  ASSERT_EQ(response->api_keys.size(), 1u);
  EXPECT_EQ(response->api_keys[0].max_version, 4);
}

}  // namespace
}  // namespace sluice::protocol
