// ApiVersions (18): the handler table with the advertised ranges of protocol/api_table.h. Versions outside the
// range never reach here (the connection answers them in v0 layout). No version lists supported or finalized
// features: this broker has no feature flags (metadata.version, group.version and the like describe KRaft and KIP-848
// machinery it does not run), and the absent FinalizedFeaturesEpoch reads as -1, "unknown". So v4, which only lets a
// broker list a feature whose minimum version is 0 (KAFKA-17011), answers exactly as v3.
#include "core/kafka/dispatch.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/messages/api_versions.h"

namespace sluice::kafka {
namespace {

Result<protocol::ApiVersionsResponse> api_versions(RequestContext& ctx, const protocol::ApiVersionsRequest& request) {
  if (!request.client_software_name.empty()) {
    ctx.env.log.debug("client {} {} from {}", request.client_software_name, request.client_software_version,
                      ctx.peer.to_string());
  }
  protocol::ApiVersionsResponse response;
  for (const HandlerEntry& entry : handler_table()) {
    const protocol::ApiInfo& api = protocol::api_info(entry.key);
    response.api_keys.push_back({static_cast<int16_t>(api.key), api.min_version, api.max_version});
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_api_versions(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, api_versions);
}

}  // namespace sluice::kafka
