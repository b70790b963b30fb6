#include "core/protocol/header.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/base/limits.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/wire.h"

namespace sluice::protocol {
namespace {

int32_t read_be32(const std::array<uint8_t, kFrameSizeBytes>& b) {
  return static_cast<int32_t>((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3]);
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

size_t begin_frame(Bytes* out) {
  const size_t begin = out->size();
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
  std::array<uint8_t, kFrameSizeBytes> prefix{};
  SLUICE_ASSIGN_OR_RETURN(const size_t first, stream.read_some(prefix));
  if (first == 0) return std::optional<Bytes>();
  SLUICE_TRY(read_exact(stream, MutableByteView(prefix).subspan(first)));
  const int32_t size = read_be32(prefix);
  if (size < 0 || static_cast<size_t>(size) > max_frame_bytes) {
    return malformed(fmt::format("frame size {} is outside [0, {}]", size, max_frame_bytes));
  }
  // The buffer grows with the bytes that arrive, never to the declared size up front: a peer that declares 100 MiB
  // and sends nothing holds one chunk. Capacity doubles (bounded by the frame), so copying stays linear.
  const size_t total = static_cast<size_t>(size);
  Bytes payload;
  while (payload.size() < total) {
    const size_t done = payload.size();
    const size_t chunk = std::min(total - done, limits::kStreamReadChunkBytes);
    if (payload.capacity() < done + chunk) payload.reserve(std::min(total, std::max(done + chunk, 2 * done)));
    payload.resize(done + chunk);
    SLUICE_TRY(read_exact(stream, MutableByteView(payload).subspan(done)));
  }
  return std::optional<Bytes>(std::move(payload));
}

}  // namespace sluice::protocol
