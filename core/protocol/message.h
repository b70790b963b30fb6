// API messages: structs with a field list (serde.h) that also name their API, so that the version alone says
// whether a body is flexible, and the versions their field list describes, so that no body is read or written in a
// layout nobody wrote down. Every request and response struct in messages/ is one.
#pragma once

#include <concepts>
#include <cstdint>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/protocol/api_table.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

// The versions a message's field list describes: Kafka's "validVersions" for the API, or the part of them written
// so far. Independent of api_table.h's advertised range, which must lie inside it (the API version table test).
struct MessageVersions {
  int16_t min = 0;
  int16_t max = 0;

  constexpr bool contains(int16_t version) const { return version >= min && version <= max; }
};

// struct MetadataRequest {
//   static constexpr ApiKey kApiKey = ApiKey::kMetadata;
//   static constexpr MessageVersions kVersions{0, 9};
//   ... serde ...
// };
template <typename T>
concept ApiMessage = Serde<T> && requires {
  { T::kApiKey } -> std::convertible_to<ApiKey>;
  { T::kVersions } -> std::convertible_to<MessageVersions>;
};

// The refusal of a version outside a message's kVersions: `code` is kNotSupported for a body received (a client
// error), kInvalidArgument for one to send (a caller's bug).
Status undescribed_version(ApiKey api, int16_t version, MessageVersions described, Code code);

// Decodes a request or response body (the frame after its header) at `version`. Records fields point into `body`.
template <ApiMessage T>
Result<T> decode_message(ByteView body, int16_t version) {
  if (!T::kVersions.contains(version)) {
    return undescribed_version(T::kApiKey, version, T::kVersions, Code::kNotSupported);
  }
  T msg;
  SLUICE_TRY(decode(body, version, is_flexible(T::kApiKey, version), &msg));
  return msg;
}

// A request body as the broker reads it: the bytes after the message are ignored, as Kafka ignores them, and
// counted in `*trailing` (serde.h decode_leading).
template <ApiMessage T>
Result<T> decode_request(ByteView body, int16_t version, size_t* trailing) {
  T msg;
  SLUICE_TRY(decode_leading(body, version, is_flexible(T::kApiKey, version), &msg, trailing));
  return msg;
}

// Appends the body of `msg` at `version` to `*out`, which must not grow past `max_bytes` (serde.h encode).
template <ApiMessage T>
Status encode_message(const T& msg, int16_t version, Bytes* out, size_t max_bytes = SIZE_MAX) {
  if (!T::kVersions.contains(version)) {
    return undescribed_version(T::kApiKey, version, T::kVersions, Code::kInvalidArgument);
  }
  return encode(msg, version, is_flexible(T::kApiKey, version), out, max_bytes);
}

}  // namespace sluice::protocol
