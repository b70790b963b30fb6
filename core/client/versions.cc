#include "core/client/versions.h"

#include <algorithm>

namespace sluice::client {

using protocol::ApiKey;

VersionRange client_versions(ApiKey api) {
  // The lower ends are where the request builders' layouts start (message format 2 for Produce and Fetch).
  switch (api) {
    case ApiKey::kProduce:
      return {3, 8};
    case ApiKey::kFetch:
      return {4, 12};
    case ApiKey::kListOffsets:
      return {1, 5};
    case ApiKey::kMetadata:
      return {1, 9};
    case ApiKey::kOffsetCommit:
      return {2, 8};
    case ApiKey::kOffsetFetch:
      return {1, 8};
    case ApiKey::kFindCoordinator:
      return {0, 4};
    case ApiKey::kJoinGroup:
      return {2, 6};
    case ApiKey::kHeartbeat:
      return {0, 4};
    case ApiKey::kLeaveGroup:
      return {0, 4};
    case ApiKey::kSyncGroup:
      return {0, 4};
    case ApiKey::kApiVersions:
      return {0, 3};
    case ApiKey::kCreateTopics:
      return {2, 7};
    case ApiKey::kDeleteTopics:
      return {1, 6};
    case ApiKey::kDeleteRecords:
      return {0, 2};
    case ApiKey::kInitProducerId:
      return {0, 4};
    case ApiKey::kDescribeConfigs:
      return {1, 3};
    case ApiKey::kIncrementalAlterConfigs:
      return {0, 1};
    case ApiKey::kDescribeQuorum:  // core/client/quorum.h
      return {0, 1};
    case ApiKey::kDescribeCluster:
      return {0, 1};
    default:
      return {};
  }
}

std::optional<int16_t> choose_version(VersionRange client, VersionRange broker) {
  if (client.empty() || broker.empty()) return std::nullopt;
  const int16_t version = std::min(client.max, broker.max);
  if (version < client.min || version < broker.min) return std::nullopt;
  return version;
}

}  // namespace sluice::client
