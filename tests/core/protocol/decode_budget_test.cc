// The decode budget (wire.h kDecodeExpansion): a request whose arrays would decode into far more memory than its
// bytes is refused before its elements are built, whatever the message; realistic requests of the same size decode.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/base/big_endian.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/message.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {
namespace {

void put_be32(Bytes& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

// A Metadata v1 body naming `count` topics of `name_length` 'a's: int32 count, then int16 length + bytes each.
Bytes classic_names(uint32_t count, size_t name_length) {
  Bytes body;
  body.reserve(4 + count * (2 + name_length));
  put_be32(body, count);
  for (uint32_t i = 0; i < count; ++i) {
    body.push_back(static_cast<uint8_t>(name_length >> 8));
    body.push_back(static_cast<uint8_t>(name_length));
    body.insert(body.end(), name_length, 'a');
  }
  return body;
}

// Metadata v9 (flexible): uvarint count + 1, then per topic a compact empty name (1) and no tagged fields (0).
Bytes compact_empty_names(uint32_t count) {
  Bytes body;
  uint32_t n = count + 1;
  while (n >= 0x80) {
    body.push_back(static_cast<uint8_t>(n | 0x80));
    n >>= 7;
  }
  body.push_back(static_cast<uint8_t>(n));
  for (uint32_t i = 0; i < count; ++i) {
    body.push_back(1);
    body.push_back(0);
  }
  body.push_back(1);  // allow_auto_topic_creation
  body.push_back(0);  // include_topic_authorized_operations
  body.push_back(0);  // the request's tagged fields
  return body;
}

void expect_refused(const Result<MetadataRequest>& decoded) {
  ASSERT_FALSE(decoded.ok()) << "decoded " << decoded->topics->size() << " topics";
  EXPECT_EQ(to_error_code(decoded.status()), ErrorCode::kInvalidRequest);
  EXPECT_NE(decoded.status().message().find("topics"), std::string::npos) << decoded.status().message();
  EXPECT_NE(decoded.status().message().find("8x"), std::string::npos) << decoded.status().message();
}

TEST(DecodeBudget, MillionsOfEmptyNamesAreRefusedBeforeTheyAreBuilt) {
  size_t trailing = 0;
  // 2 MB of classic empty names would be 1M std::strings in 56-byte topics: 56 MB.
  expect_refused(decode_request<MetadataRequest>(classic_names(1'000'000, 0), 1, &trailing));
  expect_refused(decode_message<MetadataRequest>(classic_names(1'000'000, 0), 1));
  expect_refused(decode_request<MetadataRequest>(compact_empty_names(1'000'000), 9, &trailing));
}

TEST(DecodeBudget, RealisticRequestsOfTheSameSizeDecode) {
  size_t trailing = 0;
  // 100k names of 20 characters (2.2 MB).
  Result<MetadataRequest> named = decode_request<MetadataRequest>(classic_names(100'000, 20), 1, &trailing);
  ASSERT_TRUE(named.ok()) << named.status().to_string();
  EXPECT_EQ(named->topics->size(), 100'000u);
  // 100k lookups by id (v12: 18 bytes each, 56 in memory).
  MetadataRequest by_id;
  for (uint32_t i = 0; i < 100'000; ++i) {
    MetadataRequest::Topic& topic = by_id.topics->emplace_back();
    topic.name = std::nullopt;
    topic.topic_id.bytes[15] = static_cast<uint8_t>(i | 1);
    topic.topic_id.bytes[14] = static_cast<uint8_t>(i >> 8);
  }
  Bytes body;
  ASSERT_TRUE(encode_message(by_id, 12, &body).ok());
  Result<MetadataRequest> decoded = decode_request<MetadataRequest>(body, 12, &trailing);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->topics->size(), 100'000u);
  // A small request never meets the budget, however empty its elements (kDecodeAllowanceBytes).
  EXPECT_TRUE(decode_request<MetadataRequest>(classic_names(1000, 0), 1, &trailing).ok());
}

// A struct with a tagged field holding an array: its elements are charged to the message's one budget.
struct Holder {
  std::optional<std::vector<std::string>> names;  // tag 0

  template <class Io>
  void serde(Io& io) {
    io.tagged("names", names, 0);
  }
};

TEST(DecodeBudget, TaggedFieldsAndTheirArraysCountToo) {
  // A tagged-field block of 200k empty fields: 2 bytes each on the wire, a 24-byte entry each when read.
  Bytes block;
  const uint32_t fields = 200'000;
  uint32_t n = fields;
  while (n >= 0x80) {
    block.push_back(static_cast<uint8_t>(n | 0x80));
    n >>= 7;
  }
  block.push_back(static_cast<uint8_t>(n));
  for (uint32_t i = 0; i < fields; ++i) {
    block.push_back(5);  // tag 5 (unknown)
    block.push_back(0);  // size 0
  }
  Holder holder;
  Status status = decode(block, 0, true, &holder);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(to_error_code(status), ErrorCode::kInvalidRequest);

  // Tag 0 holding 300k empty compact strings (1 byte each, 32 in memory).
  Bytes inner;
  uint32_t count = 300'000 + 1;
  while (count >= 0x80) {
    inner.push_back(static_cast<uint8_t>(count | 0x80));
    count >>= 7;
  }
  inner.push_back(static_cast<uint8_t>(count));
  inner.insert(inner.end(), 300'000, 1);
  Bytes message = {1, 0};  // one tagged field, tag 0
  uint32_t size = static_cast<uint32_t>(inner.size());
  while (size >= 0x80) {
    message.push_back(static_cast<uint8_t>(size | 0x80));
    size >>= 7;
  }
  message.push_back(static_cast<uint8_t>(size));
  message.insert(message.end(), inner.begin(), inner.end());
  status = decode(message, 0, true, &holder);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("names"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace sluice::protocol
