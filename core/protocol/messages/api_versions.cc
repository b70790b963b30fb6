#include "core/protocol/messages/api_versions.h"

#include "core/protocol/error_codes.h"
#include "core/protocol/header.h"

namespace sluice::protocol {
namespace {

ApiVersionsResponse::ApiVersion advertised(const ApiInfo& api) {
  return {static_cast<int16_t>(api.key), api.min_version, api.max_version};
}

}  // namespace

ApiVersionsResponse api_versions_response() {
  ApiVersionsResponse response;
  for (const ApiInfo& api : all_apis()) response.api_keys.push_back(advertised(api));
  return response;
}

Bytes unsupported_api_versions_frame(int32_t correlation_id) {
  ApiVersionsResponse response;
  response.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedVersion);
  response.api_keys.push_back(advertised(api_info(ApiKey::kApiVersions)));
  Result<Bytes> frame = encode_response_frame(response, 0, correlation_id);
  SLUICE_ASSERT(frame.ok());  // fixed content: nothing in it can be too long or null
  return std::move(frame).value();
}

}  // namespace sluice::protocol
