#include "core/protocol/header.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/base/big_endian.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/frame_reader.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {
namespace {

// int16 api_key, int16 api_version, int32 correlation_id, then the client id's int16 length.
constexpr size_t kRequestHeaderFixedBytes = 2 + 2 + 4 + 2;

size_t request_header_bytes(const RequestHeaderRef& header) {
  const size_t tagged_fields = request_header_version(header.api_key, header.api_version) == 2 ? 1 : 0;
  return kRequestHeaderFixedBytes + (header.client_id ? header.client_id->size() : 0) + tagged_fields;
}

// Writes the header's request_header_bytes at `at`; the client id is within kMaxStringBytes.
void write_request_header(const RequestHeaderRef& header, uint8_t* at) {
  store_be<int16_t>(at, static_cast<int16_t>(header.api_key));
  store_be<int16_t>(at + 2, header.api_version);
  store_be<int32_t>(at + 4, header.correlation_id);
  at += 8;
  if (header.client_id) {
    store_be<int16_t>(at, static_cast<int16_t>(header.client_id->size()));
    if (!header.client_id->empty()) std::memcpy(at + 2, header.client_id->data(), header.client_id->size());
    at += 2 + header.client_id->size();
  } else {
    store_be<int16_t>(at, -1);  // a null client id
    at += 2;
  }
  if (request_header_version(header.api_key, header.api_version) == 2) *at = 0;  // no tagged fields
}

size_t response_header_bytes(ApiKey api, int16_t version) { return response_header_version(api, version) == 1 ? 5 : 4; }

void write_response_header(ApiKey api, int16_t version, int32_t correlation_id, uint8_t* at) {
  store_be<int32_t>(at, correlation_id);
  if (response_header_version(api, version) == 1) at[4] = 0;  // no tagged fields
}

void write_frame_size(size_t size, uint8_t* at) {
  SLUICE_ASSERT(size <= static_cast<size_t>(INT32_MAX));
  store_be<int32_t>(at, static_cast<int32_t>(size));
}

}  // namespace

int request_header_version(ApiKey api, int16_t version) { return is_flexible(api, version) ? 2 : 1; }

int response_header_version(ApiKey api, int16_t version) {
  // ApiVersions keeps header v0 at every version so that a client can parse the answer before it knows the
  // broker's versions (KIP-511).
  if (api == ApiKey::kApiVersions) return 0;
  return is_flexible(api, version) ? 1 : 0;
}

Result<RequestHeader> decode_request_header(ByteView frame, ByteView* body) {
  Reader reader(frame);
  const int16_t key = reader.read_int16("request_api_key");
  const int16_t version = reader.read_int16("request_api_version");
  const int32_t correlation_id = reader.read_int32("correlation_id");
  if (!reader.ok()) return reader.status();
  const ApiInfo* api = find_api(key);
  if (api == nullptr) {
    return Status(Code::kNotSupported, fmt::format("unknown API key {} (correlation id {})", key, correlation_id),
                  static_cast<int16_t>(ErrorCode::kUnsupportedVersion));
  }
  RequestHeader header{api->key, version, correlation_id, reader.read_nullable_string("client_id", false)};
  if (api->flexible(version)) reader.read_tagged_fields("request header tagged fields");
  if (!reader.ok()) return reader.status();
  *body = frame.subspan(reader.position());
  return header;
}

Status encode_request_header(const RequestHeader& header, Bytes* out) {
  const RequestHeaderRef ref{header.api_key, header.api_version, header.correlation_id, header.client_id};
  if (ref.client_id && ref.client_id->size() > kMaxStringBytes) {  // as Writer::put_string says it
    return invalid_argument(
        fmt::format("field 'client_id': length {} exceeds the limit {}", ref.client_id->size(), kMaxStringBytes));
  }
  const size_t begin = out->size();
  out->resize(begin + request_header_bytes(ref));
  write_request_header(ref, out->data() + begin);
  return Status();
}

void encode_response_header(ApiKey api, int16_t version, int32_t correlation_id, Bytes* out) {
  const size_t begin = out->size();
  out->resize(begin + response_header_bytes(api, version));
  write_response_header(api, version, correlation_id, out->data() + begin);
}

size_t put_request_frame_head(const RequestHeaderRef& header, size_t body_bytes, MutableByteView room) {
  SLUICE_ASSERT(!header.client_id || header.client_id->size() <= kMaxStringBytes);
  const size_t header_bytes = request_header_bytes(header);
  SLUICE_ASSERT(room.size() >= kFrameSizeBytes + header_bytes);
  const size_t begin = room.size() - kFrameSizeBytes - header_bytes;
  write_frame_size(header_bytes + body_bytes, room.data() + begin);
  write_request_header(header, room.data() + begin + kFrameSizeBytes);
  return begin;
}

size_t put_response_frame_head(ApiKey api, int16_t version, int32_t correlation_id, size_t body_bytes,
                               MutableByteView room) {
  const size_t header_bytes = response_header_bytes(api, version);
  SLUICE_ASSERT(room.size() >= kFrameSizeBytes + header_bytes);
  const size_t begin = room.size() - kFrameSizeBytes - header_bytes;
  write_frame_size(header_bytes + body_bytes, room.data() + begin);
  write_response_header(api, version, correlation_id, room.data() + begin + kFrameSizeBytes);
  return begin;
}

Result<int32_t> decode_response_header(ByteView frame, ApiKey api, int16_t version, ByteView* body) {
  Reader reader(frame);
  const int32_t correlation_id = reader.read_int32("correlation_id");
  if (response_header_version(api, version) == 1) reader.read_tagged_fields("response header tagged fields");
  if (!reader.ok()) return reader.status();
  *body = frame.subspan(reader.position());
  return correlation_id;
}

size_t begin_frame(Bytes* out, size_t expected_bytes) {
  const size_t begin = out->size();
  // Most frames fit: without it the fields grow the buffer 4, 8, 16, ... bytes, a copy each time.
  out->reserve(begin + expected_bytes);
  out->resize(begin + kFrameSizeBytes);
  return begin;
}

void end_frame(Bytes* out, size_t begin, size_t bytes_sent_after) {
  const size_t size = out->size() - begin - kFrameSizeBytes + bytes_sent_after;
  SLUICE_ASSERT(size <= static_cast<size_t>(INT32_MAX));
  for (size_t i = 0; i < kFrameSizeBytes; ++i) {
    (*out)[begin + i] = static_cast<uint8_t>(size >> (8 * (kFrameSizeBytes - 1 - i)));
  }
}

Bytes encode_frame(ByteView payload) {
  Bytes out;
  out.reserve(kFrameSizeBytes + payload.size());
  const size_t begin = begin_frame(&out);
  out.insert(out.end(), payload.begin(), payload.end());
  end_frame(&out, begin);
  return out;
}

Result<std::optional<Bytes>> read_frame(Stream& stream, size_t max_frame_bytes) {
  // No read-ahead: nothing past this frame leaves the stream, so a caller may go on reading it directly.
  FrameReader reader(stream, max_frame_bytes, kFrameSizeBytes);
  SLUICE_ASSIGN_OR_RETURN(const std::optional<ByteView> frame, reader.next());
  SLUICE_ASSERT(reader.buffered() == 0);
  if (!frame.has_value()) return std::optional<Bytes>();
  return std::optional<Bytes>(Bytes(frame->begin(), frame->end()));
}

}  // namespace sluice::protocol
