#include "core/protocol/message.h"

#include <fmt/format.h>

#include "core/protocol/error_codes.h"

namespace sluice::protocol {

Status undescribed_version(ApiKey api, int16_t version, MessageVersions described, Code code) {
  return Status(code,
                fmt::format("{} v{} has no layout here: its messages describe v{}-{}", api_name(api), version,
                            described.min, described.max),
                static_cast<int16_t>(ErrorCode::kUnsupportedVersion));
}

}  // namespace sluice::protocol
