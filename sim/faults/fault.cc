#include "sim/faults/fault.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>

#include "core/base/assert.h"

namespace sluice::sim {

using namespace std::chrono_literals;

namespace {

constexpr std::array<std::string_view, kFaultKinds> kNames = {
    "crash",     "power-loss", "restart", "partition",   "partition-one-way", "reset-connections",
    "latency-spike", "disk-full", "disk-errors", "clock-jump", "corrupt-segment",
    "crash-at-disk-op", "drop-acks0-forwards",
    "clock-skew", "reconnect-reorder", "reconnect-duplicate",
    "process-pause", "slow-disk", "stalled-fsync", "swizzle-clog", "read-corruption",
    "timer-jitter"};

}  // namespace

Duration default_fault_length(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCrash:
    case FaultKind::kPowerLoss:
    case FaultKind::kRestart:
    case FaultKind::kCorruptSegment:
    case FaultKind::kCrashAtDiskOp: return 1s;
    case FaultKind::kPartition:
    case FaultKind::kPartitionOneWay:
    case FaultKind::kLatencySpike:
    case FaultKind::kDiskFull:
    case FaultKind::kDropAcks0Forwards:
    case FaultKind::kClockSkew:
    case FaultKind::kSlowDisk:
    case FaultKind::kTimerJitter:
    case FaultKind::kStalledFsync: return 5s;
    case FaultKind::kProcessPause: return 3s;
    case FaultKind::kSwizzleClog: return 8s;
    case FaultKind::kReconnectReorder:
    case FaultKind::kReconnectDuplicate:
    case FaultKind::kResetConnections:
    case FaultKind::kDiskErrors:
    case FaultKind::kReadCorruption:
    case FaultKind::kClockJump: return 0s;
  }
  SLUICE_UNREACHABLE();
}

int64_t default_fault_amount(FaultKind kind) {
  switch (kind) {
    case FaultKind::kLatencySpike: return 200;        // ms
    case FaultKind::kDiskErrors: return 1;            // operations
    case FaultKind::kReadCorruption: return 1;        // reads
    case FaultKind::kCrashAtDiskOp: return 1;         // the next matching operation
    case FaultKind::kClockJump: return 3'600'000;     // an hour forwards
    case FaultKind::kClockSkew: return 100;           // parts per thousand: 10 % fast
    case FaultKind::kSlowDisk: return 200;            // ms, the tail's end
    case FaultKind::kStalledFsync: return 1000;       // ms a sync takes
    case FaultKind::kTimerJitter: return 20;          // ms a timer may fire late
    default: return 0;
  }
}

std::string default_fault_op(FaultKind kind) {
  if (kind == FaultKind::kDiskErrors) return "write";
  if (kind == FaultKind::kCrashAtDiskOp) return "metadata";
  return "";
}

bool fault_has_length(FaultKind kind) { return default_fault_length(kind) > 0s; }

std::string_view fault_kind_name(FaultKind kind) { return kNames.at(static_cast<size_t>(kind)); }

std::optional<FaultKind> parse_fault_kind(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (!kNames[i].empty() && kNames[i] == name) return static_cast<FaultKind>(i);
  }
  return std::nullopt;
}

Result<Duration> parse_duration(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return invalid_argument(fmt::format("duration '{}': expected a number with a unit (\"1.5s\")", text));
  double value = 0;
  try {
    value = std::stod(std::string(text.substr(0, end)));
  } catch (const std::exception&) {
    return invalid_argument(fmt::format("duration '{}': not a number", text));
  }
  const std::string_view unit = text.substr(end);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return invalid_argument(fmt::format("duration '{}': unknown unit '{}' (ns, us, ms, s, m, h)", text, unit));
  return Duration(static_cast<int64_t>(std::llround(value * scale)));
}

std::string format_duration(Duration d) {
  const int64_t ns = d.count();
  if (ns == 0) return "0s";
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) {
    const int64_t ms = ns / 1'000'000;
    return ms % 100 == 0 ? fmt::format("{}s", static_cast<double>(ms) / 1000.0) : fmt::format("{}ms", ms);
  }
  if (ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return fmt::format("{}ns", ns);
}

std::string to_toml(const Fault& fault) {
  std::string text = fmt::format("{{ at = \"{}\", kind = \"{}\", node = \"{}\"", format_duration(fault.at),
                                 fault_kind_name(fault.kind), fault.node);
  if (!fault.peer.empty()) text += fmt::format(", peer = \"{}\"", fault.peer);
  if (fault_has_length(fault.kind)) text += fmt::format(", length = \"{}\"", format_duration(fault.length));
  if (fault.amount != default_fault_amount(fault.kind) || fault.kind == FaultKind::kClockJump ||
      fault.kind == FaultKind::kClockSkew) {
    text += fmt::format(", amount = {}", fault.amount);
  }
  if (!fault.op.empty()) text += fmt::format(", op = \"{}\"", fault.op);
  if (!fault.path.empty()) text += fmt::format(", path = \"{}\"", fault.path);
  return text + " }";
}

std::string to_toml(const std::vector<Fault>& schedule) {
  std::string text = "schedule = [\n";
  for (const Fault& fault : schedule) text += "  " + to_toml(fault) + ",\n";
  return text + "]\n";
}

}  // namespace sluice::sim
