// The APIs the broker serves, with the version range it advertises (kafka-protocol.md §2, verified against five
// real clients) and the first flexible version of each (Kafka 3.9's schemas, "flexibleVersions"). This table is
// the version firewall: ApiVersions advertises it, the request header's layout and every body's encoding follow
// from it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "core/base/assert.h"

namespace sluice::protocol {

// First flexible version of an API that has none.
inline constexpr int16_t kNeverFlexible = std::numeric_limits<int16_t>::max();

// X(name, key, advertised min, advertised max, first flexible version)
// Produce, Fetch, ListOffsets, Metadata and ApiVersions reach Kafka 3.9's maxima. Produce is advertised from 0
// although v0-2 are refused: librdkafka stops compressing when the range does not start at 0 (pitfall 3,
// KAFKA-18659). Produce v0-2 and Fetch v0-3 carry message formats 0 and 1, which Kafka 3.9 converts to and from the
// stored format 2; this broker stores and serves format 2 only (core/protocol/README.md, "Versions not served").
// Metadata v10+ carries topic ids only together with Fetch v13+, which resolves them (pitfall 11).
#define SLUICE_KAFKA_APIS(X)                       \
  X(Produce, 0, 0, 11, 9)                          \
  X(Fetch, 1, 4, 17, 12)                           \
  X(ListOffsets, 2, 0, 9, 6)                       \
  X(Metadata, 3, 0, 12, 9)                         \
  X(OffsetCommit, 8, 0, 9, 8)                      \
  X(OffsetFetch, 9, 0, 9, 6)                       \
  X(FindCoordinator, 10, 0, 6, 3)                  \
  X(JoinGroup, 11, 0, 9, 6)                        \
  X(Heartbeat, 12, 0, 4, 4)                        \
  X(LeaveGroup, 13, 0, 5, 4)                       \
  X(SyncGroup, 14, 0, 5, 4)                        \
  X(DescribeGroups, 15, 0, 5, 5)                   \
  X(ListGroups, 16, 0, 5, 3)                       \
  X(ApiVersions, 18, 0, 4, 3)                      \
  X(CreateTopics, 19, 0, 7, 5)                     \
  X(DeleteTopics, 20, 0, 6, 4)                     \
  X(DeleteRecords, 21, 0, 2, 2)                    \
  X(InitProducerId, 22, 0, 5, 2)                   \
  X(OffsetForLeaderEpoch, 23, 0, 4, 4)             \
  X(DescribeConfigs, 32, 0, 4, 4)                  \
  X(AlterConfigs, 33, 0, 2, 2)                     \
  X(CreatePartitions, 37, 0, 3, 2)                 \
  X(DeleteGroups, 42, 0, 2, 2)                     \
  X(IncrementalAlterConfigs, 44, 0, 1, 1)          \
  X(OffsetDelete, 47, 0, 0, kNeverFlexible)        \
  X(DescribeQuorum, 55, 0, 1, 0)                   \
  X(DescribeCluster, 60, 0, 1, 0)

enum class ApiKey : int16_t {
#define SLUICE_KAFKA_API_ENUM(name, key, min, max, flexible_from) k##name = (key),
  SLUICE_KAFKA_APIS(SLUICE_KAFKA_API_ENUM)
#undef SLUICE_KAFKA_API_ENUM
};

struct ApiInfo {
  ApiKey key;
  std::string_view name;  // "Metadata"
  int16_t min_version;    // advertised
  int16_t max_version;
  int16_t flexible_from;  // kNeverFlexible when no version is

  bool supports(int16_t version) const { return version >= min_version && version <= max_version; }
  // Also meaningful outside the advertised range: the request header of an unsupported ApiVersions v4 is still v2.
  bool flexible(int16_t version) const { return version >= flexible_from; }
};

namespace detail {

inline constexpr std::array kApis = {
#define SLUICE_KAFKA_API_INFO(name, key, min, max, flexible_from) \
  ApiInfo{ApiKey::k##name, #name, (min), (max), (flexible_from)},
    SLUICE_KAFKA_APIS(SLUICE_KAFKA_API_INFO)
#undef SLUICE_KAFKA_API_INFO
};

static_assert(std::ranges::is_sorted(kApis, {}, &ApiInfo::key), "keep SLUICE_KAFKA_APIS ordered by key");

// Every request and response looks its API up several times (header versions, flexible encodings): an index by
// key answers at once, where a binary search cost 1 % of a simulated run. Inline, with the table, so that a lookup
// by a constant key (a message's kApiKey) folds away.
inline constexpr int16_t kKeyLimit = static_cast<int16_t>(kApis.back().key) + 1;
inline constexpr std::array<int8_t, kKeyLimit> kIndexByKey = [] {
  std::array<int8_t, kKeyLimit> index{};
  index.fill(-1);
  for (size_t i = 0; i < kApis.size(); ++i) index[static_cast<size_t>(kApis[i].key)] = static_cast<int8_t>(i);
  return index;
}();
static_assert(kApis.size() <= 127, "kIndexByKey holds int8_t positions");

}  // namespace detail

// Every API served, ordered by key.
inline std::span<const ApiInfo> all_apis() { return detail::kApis; }
// nullptr for a key the broker does not serve.
inline const ApiInfo* find_api(int16_t key) {
  if (key < 0 || key >= detail::kKeyLimit) return nullptr;
  const int8_t at = detail::kIndexByKey[static_cast<size_t>(key)];
  return at < 0 ? nullptr : &detail::kApis[static_cast<size_t>(at)];
}
inline const ApiInfo& api_info(ApiKey key) {
  const ApiInfo* info = find_api(static_cast<int16_t>(key));
  SLUICE_ASSERT(info != nullptr);  // every ApiKey enumerator comes from the table
  return *info;
}
inline std::string_view api_name(ApiKey key) { return api_info(key).name; }
inline bool is_flexible(ApiKey key, int16_t version) { return api_info(key).flexible(version); }
inline bool is_supported(ApiKey key, int16_t version) { return api_info(key).supports(version); }

}  // namespace sluice::protocol
