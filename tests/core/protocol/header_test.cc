// Request and response headers (v1/v2, v0/v1, the ApiVersions exception) and frames read from a Stream.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/protocol/error_codes.h"
#include "core/protocol/header.h"
#include "core/protocol/wire.h"
#include "tests/core/protocol/golden_frames.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::BufferStream;
using testing::hex;

// The frame's payload: everything after the size prefix.
Bytes payload_of(const Bytes& frame) { return Bytes(frame.begin() + kFrameSizeBytes, frame.end()); }

Bytes size_and_zeros(const char* size_hex, size_t zeros) {
  Bytes out = hex(size_hex);
  out.resize(out.size() + zeros, 0);
  return out;
}

TEST(Header, DecodesKafkaPythonV1) {
  const Bytes frame = payload_of(hex(golden::kMetadataV4Request));
  ByteView body;
  Result<RequestHeader> header = decode_request_header(frame, &body);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_EQ(header->api_key, ApiKey::kMetadata);
  EXPECT_EQ(header->api_version, 4);
  EXPECT_EQ(header->correlation_id, 5);
  EXPECT_EQ(header->client_id, std::optional<std::string>("kafka-python"));
  EXPECT_EQ(Bytes(body.begin(), body.end()), hex("00000001 00066f7264657273 00"));
}

TEST(Header, DecodesLibrdkafkaV2WithClassicClientId) {
  const Bytes frame = payload_of(hex(golden::kApiVersionsV3RequestLibrdkafka));
  ByteView body;
  Result<RequestHeader> header = decode_request_header(frame, &body);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_EQ(header->api_key, ApiKey::kApiVersions);
  EXPECT_EQ(header->api_version, 3);
  EXPECT_EQ(header->client_id, std::optional<std::string>("rdkafka"));
  EXPECT_EQ(body.size(), 18u);  // the tagged-field byte of the header was consumed (pitfall 4)
}

TEST(Header, NullClientIdInV2StillConsumesTags) {
  const Bytes frame = hex("0003 0009 0000002a ffff | 01 05 01 ff | 00");  // one unknown header tag, skipped
  ByteView body;
  Result<RequestHeader> header = decode_request_header(frame, &body);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_EQ(header->client_id, std::nullopt);
  EXPECT_EQ(header->correlation_id, 42);
  EXPECT_EQ(Bytes(body.begin(), body.end()), hex("00"));
}

TEST(Header, UnknownApiAndTruncatedHeadersFail) {
  ByteView body;
  Result<RequestHeader> unknown = decode_request_header(hex("0004 0000 00000001 ffff"), &body);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kNotSupported);
  EXPECT_EQ(unknown.status().protocol_error(), static_cast<int16_t>(ErrorCode::kUnsupportedVersion));
  const Bytes full = hex("0003 0009 0000002a 0001 63 00");
  for (size_t cut = 0; cut < full.size(); ++cut) {
    Result<RequestHeader> header = decode_request_header(ByteView(full).first(cut), &body);
    EXPECT_FALSE(header.ok()) << "cut at " << cut;
  }
  // A served API at an unsupported version decodes: the handler decides.
  Result<RequestHeader> high = decode_request_header(hex("0012 0009 00000001 ffff 00"), &body);
  ASSERT_TRUE(high.ok());
  EXPECT_FALSE(is_supported(high->api_key, high->api_version));
}

TEST(Header, RequestHeaderRoundTrip) {
  for (const RequestHeader& header : {RequestHeader{ApiKey::kMetadata, 9, 7, "c"},
                                      RequestHeader{ApiKey::kMetadata, 1, -1, std::nullopt},
                                      RequestHeader{ApiKey::kApiVersions, 3, 1, "rdkafka"}}) {
    Bytes out;
    ASSERT_TRUE(encode_request_header(header, &out).ok());
    out.push_back(0xee);
    ByteView body;
    Result<RequestHeader> back = decode_request_header(out, &body);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, header);
    EXPECT_EQ(body.size(), 1u);
  }
}

TEST(Header, ResponseHeaderVersions) {
  Bytes v0;
  encode_response_header(ApiKey::kMetadata, 8, 9, &v0);
  EXPECT_EQ(v0, hex("00000009"));
  Bytes v1;
  encode_response_header(ApiKey::kMetadata, 9, 9, &v1);
  EXPECT_EQ(v1, hex("00000009 00"));
  Bytes api_versions;
  encode_response_header(ApiKey::kApiVersions, 3, 9, &api_versions);
  EXPECT_EQ(api_versions, hex("00000009"));  // always v0 (pitfall 1)
  EXPECT_EQ(response_header_version(ApiKey::kApiVersions, 4), 0);
  EXPECT_EQ(request_header_version(ApiKey::kApiVersions, 3), 2);
  EXPECT_EQ(request_header_version(ApiKey::kProduce, 8), 1);
  ByteView body;
  Result<int32_t> corr = decode_response_header(hex("00000009 00 aa"), ApiKey::kMetadata, 9, &body);
  ASSERT_TRUE(corr.ok());
  EXPECT_EQ(*corr, 9);
  EXPECT_EQ(body.size(), 1u);
}

TEST(Header, OverlongClientIdFails) {
  Bytes out;
  const Status s = encode_request_header({ApiKey::kMetadata, 9, 1, std::string(kMaxStringBytes + 1, 'c')}, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("client_id"), std::string::npos) << s.message();
}

// The frame begin_frame, encode_request_header and end_frame build for `header` and a body of `body_bytes` sent
// after it.
Bytes request_frame_head(const RequestHeader& header, size_t body_bytes) {
  Bytes out;
  const size_t begin = begin_frame(&out);
  EXPECT_TRUE(encode_request_header(header, &out).ok());
  end_frame(&out, begin, body_bytes);
  return out;
}

// A head goes at the end of the room, right before the body; the bytes before it stay as they were.
TEST(Frame, RequestHeadInTheRoomBeforeTheBody) {
  for (const RequestHeader& header : {RequestHeader{ApiKey::kMetadata, 9, 7, "client"},  // v2: tagged fields
                                      RequestHeader{ApiKey::kMetadata, 8, -1, ""},        // v1
                                      RequestHeader{ApiKey::kProduce, 11, 3, std::nullopt}}) {
    const Bytes expected = request_frame_head(header, 300);
    Bytes room(expected.size() + 3, 0xee);
    const size_t from = put_request_frame_head(
        {header.api_key, header.api_version, header.correlation_id, header.client_id}, 300, room);
    EXPECT_EQ(from, 3u);
    EXPECT_EQ(room, concat(std::array<ByteView, 2>{hex("eeeeee"), expected}));
  }
  Bytes exact(request_frame_head({ApiKey::kFetch, 17, 1, "c"}, 0).size());
  EXPECT_EQ(put_request_frame_head({ApiKey::kFetch, 17, 1, "c"}, 0, exact), 0u);
  EXPECT_EQ(exact, hex("0000000c | 0001 0011 00000001 0001 63 00"));
}

TEST(Frame, ResponseHeadInTheRoomBeforeTheBody) {
  Bytes room(kResponseHeadRoom, 0xee);
  EXPECT_EQ(put_response_frame_head(ApiKey::kMetadata, 9, 5, 2, room), 0u);  // header v1: the room exactly
  EXPECT_EQ(room, hex("00000007 00000005 00"));
  room.assign(kResponseHeadRoom, 0xee);
  EXPECT_EQ(put_response_frame_head(ApiKey::kMetadata, 8, 5, 2, room), 1u);
  EXPECT_EQ(room, hex("ee 00000006 00000005"));
  room.assign(kResponseHeadRoom, 0xee);
  EXPECT_EQ(put_response_frame_head(ApiKey::kApiVersions, 3, -2, 0, room), 1u);  // always v0 (pitfall 1)
  EXPECT_EQ(room, hex("ee 00000004 fffffffe"));
}

TEST(Frame, EncodeFrameAndInPlace) {
  EXPECT_EQ(encode_frame(hex("aabb")), hex("00000002 aabb"));
  Bytes out = hex("ff");
  const size_t begin = begin_frame(&out);
  out.push_back(0x01);
  end_frame(&out, begin);
  EXPECT_EQ(out, hex("ff | 00000001 01"));
}

TEST(Frame, ReadsFramesInPieces) {
  Bytes two = hex(golden::kApiVersionsV0Request);
  const Bytes second = hex(golden::kMetadataV1NullRequest);
  two.insert(two.end(), second.begin(), second.end());
  BufferStream stream(two, 3);
  Result<std::optional<Bytes>> a = read_frame(stream);
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ(**a, payload_of(hex(golden::kApiVersionsV0Request)));
  Result<std::optional<Bytes>> b = read_frame(stream);
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ(**b, payload_of(second));
  Result<std::optional<Bytes>> end = read_frame(stream);
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());  // clean end of stream between frames
}

TEST(Frame, BadSizesFailBeforeAllocating) {
  BufferStream negative(hex("ffffffff 00"));
  Result<std::optional<Bytes>> a = read_frame(negative);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));
  BufferStream huge(hex("7fffffff 00"));
  EXPECT_EQ(read_frame(huge).status().code(), Code::kCorruption);
  BufferStream over_limit(size_and_zeros("00000011", 17));
  EXPECT_EQ(read_frame(over_limit, 16).status().code(), Code::kCorruption);
  BufferStream at_limit(size_and_zeros("00000010", 16));
  EXPECT_TRUE(read_frame(at_limit, 16).ok());
}

TEST(Frame, StreamEndingInsideAFrameIsAReset) {
  BufferStream in_size(hex("0000"));
  EXPECT_EQ(read_frame(in_size).status().code(), Code::kConnectionReset);
  BufferStream in_payload(hex("00000004 0102"));
  EXPECT_EQ(read_frame(in_payload).status().code(), Code::kConnectionReset);
}

}  // namespace
}  // namespace sluice::protocol
