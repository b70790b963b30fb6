// API messages: structs with a field list (serde.h) that also name their API, so that the version alone says
// whether a body is flexible. Every request and response struct in messages/ is one.
#pragma once

#include <concepts>
#include <cstdint>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/protocol/api_table.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

// struct MetadataRequest { static constexpr ApiKey kApiKey = ApiKey::kMetadata; ... serde ... };
template <typename T>
concept ApiMessage = Serde<T> && requires {
  { T::kApiKey } -> std::convertible_to<ApiKey>;
};

// Decodes a request or response body (the frame after its header) at `version`. Records fields point into `body`.
template <ApiMessage T>
Result<T> decode_message(ByteView body, int16_t version) {
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

// Appends the body of `msg` at `version` to `*out`.
template <ApiMessage T>
Status encode_message(const T& msg, int16_t version, Bytes* out) {
  return encode(msg, version, is_flexible(T::kApiKey, version), out);
}

}  // namespace sluice::protocol
