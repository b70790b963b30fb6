// Request and response headers, and the int32 size-prefixed frames they travel in (kafka-protocol.md §1).
//
//   request header v1:  int16 api_key, int16 api_version, int32 correlation_id, client_id (classic nullable string)
//   request header v2:  v1 + tagged fields (when the API is flexible at that version; client_id stays classic)
//   response header v0: int32 correlation_id
//   response header v1: v0 + tagged fields; ApiVersions responses always use v0 (pitfall 1)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/network.h"
#include "core/protocol/api_table.h"
#include "core/protocol/message.h"

namespace sluice::protocol {

// Kafka's socket.request.max.bytes default.
inline constexpr size_t kDefaultMaxFrameBytes = 100 * 1024 * 1024;
inline constexpr size_t kFrameSizeBytes = 4;
// A frame's int32 size counts the header and body after it. A response header is at most 5 bytes (correlation id
// and an empty tagged-field block), so a response body may take up to this many.
inline constexpr size_t kMaxResponseHeaderBytes = 5;
inline constexpr size_t kMaxResponseBodyBytes = static_cast<size_t>(INT32_MAX) - kMaxResponseHeaderBytes;
// The room a broker builds a response body behind, so that its frame head (size and header) goes in front of it
// in the same buffer rather than a joined copy.
inline constexpr size_t kResponseHeadRoom = kFrameSizeBytes + kMaxResponseHeaderBytes;

struct RequestHeader {
  ApiKey api_key = ApiKey::kApiVersions;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;

  bool operator==(const RequestHeader&) const = default;
};

// A request header to write, its client id borrowed: a client writes its own into every request without a copy.
struct RequestHeaderRef {
  ApiKey api_key = ApiKey::kApiVersions;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string_view> client_id;
};

int request_header_version(ApiKey api, int16_t version);   // 1 or 2
int response_header_version(ApiKey api, int16_t version);  // 0 or 1

// Decodes the header at the front of a request frame (without its size prefix) and points `*body` at the rest.
// The header's tagged fields are skipped. A key the broker does not serve fails with kNotSupported carrying
// UNSUPPORTED_VERSION (Kafka closes the connection then); a served key at a version outside the advertised range
// decodes, and the caller decides (ApiVersions answers, kafka-protocol.md §1; other APIs close).
Result<RequestHeader> decode_request_header(ByteView frame, ByteView* body);
Status encode_request_header(const RequestHeader& header, Bytes* out);

void encode_response_header(ApiKey api, int16_t version, int32_t correlation_id, Bytes* out);

// The correlation id; `*body` gets the rest. For clients (tests, the simulator's workloads).
Result<int32_t> decode_response_header(ByteView frame, ApiKey api, int16_t version, ByteView* body);

// A frame's head, its int32 size (counting the header and the `body_bytes` after it) and its header, written at the
// end of `room`, the bytes reserved in front of a body already encoded behind them; returns where in `room` the
// frame starts. Straight stores: a head is written per request and per response, and building it through a Writer
// grew, zero-filled and trimmed a buffer each time. `room` must hold the head, and a request's client id must be
// at most kMaxStringBytes (both asserted; encode_request_header reports a long id as an error).
size_t put_request_frame_head(const RequestHeaderRef& header, size_t body_bytes, MutableByteView room);
size_t put_response_frame_head(ApiKey api, int16_t version, int32_t correlation_id, size_t body_bytes,
                               MutableByteView room);

// Building a frame in place: begin_frame appends a size placeholder and returns its offset, end_frame fills it in.
// `bytes_sent_after`: the frame continues in a buffer sent right after this one (a gathered write).
// `expected_bytes`: what to reserve.
inline constexpr size_t kTypicalFrameBytes = 512;
size_t begin_frame(Bytes* out, size_t expected_bytes = kTypicalFrameBytes);
void end_frame(Bytes* out, size_t begin, size_t bytes_sent_after = 0);
Bytes encode_frame(ByteView payload);

// Reads one frame's payload. nullopt when the stream ends cleanly before a frame starts; a stream ending inside a
// frame is kConnectionReset. A negative size or one above `max_frame_bytes` fails (kCorruption, INVALID_REQUEST)
// before anything is allocated: the caller closes the connection.
Result<std::optional<Bytes>> read_frame(Stream& stream, size_t max_frame_bytes = kDefaultMaxFrameBytes);

// A whole response frame: size, header (v0 or v1 by the API), body.
template <ApiMessage T>
Result<Bytes> encode_response_frame(const T& msg, int16_t version, int32_t correlation_id) {
  Bytes out;
  const size_t begin = begin_frame(&out);
  encode_response_header(T::kApiKey, version, correlation_id, &out);
  SLUICE_TRY(encode_message(msg, version, &out));
  end_frame(&out, begin);
  return out;
}

// A whole request frame, for clients. header.api_key must be T::kApiKey.
template <ApiMessage T>
Result<Bytes> encode_request_frame(const RequestHeader& header, const T& msg) {
  SLUICE_ASSERT(header.api_key == T::kApiKey);
  Bytes out;
  const size_t begin = begin_frame(&out);
  SLUICE_TRY(encode_request_header(header, &out));
  SLUICE_TRY(encode_message(msg, header.api_version, &out));
  end_frame(&out, begin);
  return out;
}

}  // namespace sluice::protocol
