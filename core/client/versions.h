// The versions of each API this client can build and read (requests.h), and the choice against a broker's
// ApiVersions answer: the highest version both sides support, as librdkafka and the Java client choose.
#pragma once

#include <cstdint>
#include <optional>

#include "core/protocol/api_table.h"

namespace sluice::client {

struct VersionRange {
  int16_t min = 0;
  int16_t max = -1;  // below min: not spoken
  bool empty() const { return max < min; }
};

// This client's range for `api`; empty for an API it never sends.
VersionRange client_versions(protocol::ApiKey api);
// min(client max, broker max), when it is within both ranges.
std::optional<int16_t> choose_version(VersionRange client, VersionRange broker);

}  // namespace sluice::client
