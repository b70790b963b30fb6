// decode_message and encode_message refuse a version outside the message's kVersions: a body is never read or
// written in a layout its field list does not describe.
#include <gtest/gtest.h>

#include "core/protocol/error_codes.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/init_producer_id.h"

namespace sluice::protocol {
namespace {

TEST(Message, VersionsOutsideKVersionsAreRefusedBothWays) {
  static_assert(InitProducerIdRequest::kVersions.min == 0 && InitProducerIdRequest::kVersions.max == 5);
  Bytes body;
  ASSERT_TRUE(encode_message(InitProducerIdRequest{}, 5, &body).ok());
  EXPECT_TRUE(decode_message<InitProducerIdRequest>(body, 5).ok());
  // v6 would read v5's bytes fine: only the declared range stops it.
  const Result<InitProducerIdRequest> v6 = decode_message<InitProducerIdRequest>(body, 6);
  ASSERT_FALSE(v6.ok());
  EXPECT_EQ(v6.status().code(), Code::kNotSupported);
  EXPECT_EQ(to_error_code(v6.status()), ErrorCode::kUnsupportedVersion);
  EXPECT_NE(v6.status().message().find("InitProducerId v6"), std::string::npos) << v6.status().message();
  Bytes out;
  EXPECT_EQ(encode_message(InitProducerIdResponse{}, 6, &out).code(), Code::kInvalidArgument);
  EXPECT_TRUE(out.empty());
  // Below the range too: Fetch's field list starts at v4.
  EXPECT_EQ(encode_message(FetchRequest{}, 3, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(decode_message<FetchResponse>(body, -1).status().code(), Code::kNotSupported);
}

}  // namespace
}  // namespace sluice::protocol
