// Helpers for the protocol tests: spaced hex (so golden bytes can be grouped by field), round trips, and a Stream
// over a fixed buffer.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/env/network.h"
#include "core/protocol/header.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol::testing {

// "0012 0003 | 00" -> bytes; spaces and '|' separate fields for the reader and are ignored.
inline Bytes hex(std::string_view text) {
  Bytes out;
  int high = -1;
  for (char c : text) {
    if (c == ' ' || c == '|' || c == '\n') continue;
    const int v = c <= '9' ? c - '0' : c - 'a' + 10;
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>(high * 16 + v));
      high = -1;
    }
  }
  EXPECT_EQ(high, -1) << "odd number of hex digits";
  return out;
}

template <Serde T>
Bytes encoded(const T& msg, int16_t version, bool flexible) {
  Bytes out;
  const Status status = encode(msg, version, flexible, &out);
  EXPECT_TRUE(status.ok()) << status.to_string();
  return out;
}

template <Serde T>
T decoded(ByteView in, int16_t version, bool flexible) {
  T msg;
  const Status status = decode(in, version, flexible, &msg);
  EXPECT_TRUE(status.ok()) << status.to_string();
  return msg;
}

// Encodes, decodes and encodes again at `version`; the two encodings must match, and the decoded message is
// returned for field checks.
template <ApiMessage T>
T round_trip(const T& msg, int16_t version) {
  Bytes first;
  Status status = encode_message(msg, version, &first);
  EXPECT_TRUE(status.ok()) << status.to_string();
  Result<T> back = decode_message<T>(first, version);
  EXPECT_TRUE(back.ok()) << back.status().to_string();
  if (!back.ok()) return T{};
  Bytes second;
  status = encode_message(*back, version, &second);
  EXPECT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(first, second) << "version " << version;
  return std::move(back).value();
}

// Decodes a whole request frame (size, header, body of type T at the header's version); `*header` gets the header.
template <ApiMessage T>
T decode_request_frame(const Bytes& frame, RequestHeader* header) {
  ByteView body;
  Result<RequestHeader> decoded_header = decode_request_header(ByteView(frame).subspan(kFrameSizeBytes), &body);
  EXPECT_TRUE(decoded_header.ok()) << decoded_header.status().to_string();
  if (!decoded_header.ok()) return T{};
  EXPECT_EQ(decoded_header->api_key, T::kApiKey);
  *header = *decoded_header;
  Result<T> msg = decode_message<T>(body, header->api_version);
  EXPECT_TRUE(msg.ok()) << msg.status().to_string();
  return msg.ok() ? std::move(msg).value() : T{};
}

// Decodes a request frame recorded from a real client and checks that encoding it again gives the same bytes.
template <ApiMessage T>
T golden_request(const Bytes& frame) {
  RequestHeader header;
  const T request = decode_request_frame<T>(frame, &header);
  Result<Bytes> again = encode_request_frame(header, request);
  EXPECT_TRUE(again.ok()) << again.status().to_string();
  if (again.ok()) {
    EXPECT_EQ(*again, frame);
  }
  return request;
}

// Checks that `msg` encodes at `version` to exactly `expected` and that those bytes decode again.
template <ApiMessage T>
void expect_encodes_to(const T& msg, int16_t version, const Bytes& expected) {
  Bytes out;
  const Status status = encode_message(msg, version, &out);
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(out, expected) << "version " << version;
  Result<T> back = decode_message<T>(expected, version);
  EXPECT_TRUE(back.ok()) << back.status().to_string();
}

// Every strict prefix of `msg`'s encoding at `version` must fail to decode, with an error rather than a crash.
template <ApiMessage T>
void expect_truncations_fail(const T& msg, int16_t version) {
  Bytes body;
  ASSERT_TRUE(encode_message(msg, version, &body).ok());
  for (size_t cut = 0; cut < body.size(); ++cut) {
    EXPECT_FALSE(decode_message<T>(ByteView(body).first(cut), version).ok()) << "version " << version << " cut " << cut;
  }
}

// A stream that is only read: writes are dropped, and it has no addresses.
class ReadOnlyStream : public Stream {
 public:
  Status write_all(ByteView) override { return Status(); }
  void close() override {}
  Address peer() const override { return {}; }
  Address local() const override { return {}; }
};

// Serves `data` in reads of at most `chunk` bytes, then end of stream.
class BufferStream : public ReadOnlyStream {
 public:
  explicit BufferStream(Bytes data, size_t chunk = 1 << 20) : data_(std::move(data)), chunk_(chunk) {}

  Result<size_t> read_some(MutableByteView out) override {
    ++reads_;
    const size_t n = std::min({out.size(), chunk_, data_.size() - pos_});
    std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(pos_), n, out.begin());
    pos_ += n;
    return n;
  }
  size_t reads() const { return reads_; }

 private:
  Bytes data_;
  size_t chunk_;
  size_t pos_ = 0;
  size_t reads_ = 0;
};

}  // namespace sluice::protocol::testing
