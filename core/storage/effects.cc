#include "core/storage/effects.h"

#include <fmt/format.h>

namespace sluice::storage {
namespace {

std::string_view kind_name(LogEffect::Kind kind) {
  switch (kind) {
    case LogEffect::Kind::kLogStartAdvanced: return "log-start-advanced";
    case LogEffect::Kind::kCompacted: return "compacted";
    case LogEffect::Kind::kTruncatedOnRecovery: return "truncated-on-recovery";
    case LogEffect::Kind::kPartitionCreated: return "partition-created";
    case LogEffect::Kind::kPartitionDeleted: return "partition-deleted";
  }
  return "unknown";
}

std::string_view reason_name(LogEffect::Reason reason) {
  switch (reason) {
    case LogEffect::Reason::kNone: return "";
    case LogEffect::Reason::kRetentionTime: return "retention.ms";
    case LogEffect::Reason::kRetentionBytes: return "retention.bytes";
    case LogEffect::Reason::kDeleteRecords: return "DeleteRecords";
    case LogEffect::Reason::kDiskPressure: return "disk-pressure";
  }
  return "unknown";
}

}  // namespace

std::string to_string(const LogEffect& effect) {
  std::string out = fmt::format("{} {}", kind_name(effect.kind), effect.tp.to_string());
  if (effect.from >= 0 || effect.to >= 0) out += fmt::format(" [{}, {})", effect.from, effect.to);
  if (effect.reason != LogEffect::Reason::kNone) out += fmt::format(" by {}", reason_name(effect.reason));
  if (effect.now_ms >= 0) out += fmt::format(" now_ms={}", effect.now_ms);
  if (effect.delete_retention_ms >= 0) out += fmt::format(" delete.retention.ms={}", effect.delete_retention_ms);
  return out;
}

}  // namespace sluice::storage
