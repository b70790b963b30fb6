#include "core/protocol/header.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/frame_reader.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {
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
  Writer writer(out);
  writer.put_int16(static_cast<int16_t>(header.api_key));
  writer.put_int16(header.api_version);
  writer.put_int32(header.correlation_id);
  writer.put_nullable_string("client_id", header.client_id, false);
  if (request_header_version(header.api_key, header.api_version) == 2) writer.put_tagged_fields({});
  return writer.status();
}

void encode_response_header(ApiKey api, int16_t version, int32_t correlation_id, Bytes* out) {
  Writer writer(out);
  writer.put_int32(correlation_id);
  if (response_header_version(api, version) == 1) writer.put_tagged_fields({});
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
