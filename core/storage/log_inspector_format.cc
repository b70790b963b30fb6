// The words of `sluice log inspect`: the retention explanation, the human report and the JSON.
#include <fmt/core.h>

#include "core/base/assert.h"
#include "core/storage/log_config.h"
#include "core/storage/log_inspector.h"

namespace sluice::storage {
namespace {

// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's civil_from_days).
void civil_from_days(int64_t days, int64_t& year, unsigned& month, unsigned& day) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = static_cast<int64_t>(yoe) + era * 400 + (month <= 2 ? 1 : 0);
}

std::string seconds_text(int64_t ms) {
  return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0);
}

const SegmentReport* first_live_segment(const PartitionReport& r) {
  for (const SegmentReport& s : r.segments) {
    if (s.last_offset >= r.log_start_offset) return &s;
  }
  return nullptr;
}

std::string explain_time(const PartitionReport& r, const InspectOptions& o, std::optional<int64_t>* due) {
  const std::optional<int64_t> retention_ms = r.config.time_retention_ms();
  if (!retention_ms) return "retention.ms=-1: nothing expires by time.";
  const SegmentReport* live = first_live_segment(r);
  if (live == nullptr) return "retention.ms=" + std::to_string(*retention_ms) + ": the log holds no live batch.";
  int64_t newest = live->first_live_batch_max_timestamp;
  if (live->first_live_offset < 0 || live->first_live_offset < r.log_start_offset) newest = live->max_timestamp;
  if (newest < 0) return "the oldest live batch carries no timestamp: it never expires by time.";
  const int64_t expires = newest + *retention_ms;
  const std::string head = "retention.ms=" + std::to_string(*retention_ms) + ": the oldest live batch (from offset " +
                           std::to_string(std::max(live->first_live_offset, r.log_start_offset)) +
                           ") has its newest record at " + format_timestamp(newest) +
                           "; a batch goes only once its newest record is older than retention.ms. ";
  if (o.now_ms < expires) {
    *due = expires + o.retention_check_interval_ms;
    return head + "It expires at " + format_timestamp(expires) + " (in " + seconds_text(expires - o.now_ms) +
           ") and is evicted by the first retention check after that (checks run every " +
           seconds_text(o.retention_check_interval_ms) + ").";
  }
  *due = o.now_ms + o.retention_check_interval_ms;
  return head + "It expired at " + format_timestamp(expires) + "; a running broker evicts it within " +
         seconds_text(o.retention_check_interval_ms) + " (the retention check interval), unless it is at or above "
         "the high watermark.";
}

std::string explain_size(const PartitionReport& r, std::optional<int64_t>* due, const InspectOptions& o) {
  const std::optional<int64_t> limit = r.config.size_retention_bytes();
  if (!limit) return "retention.bytes=-1: no size limit.";
  uint64_t total = 0;
  for (const SegmentReport& s : r.segments) {
    if (s.last_offset >= r.log_start_offset) total += s.size_bytes;
  }
  if (total <= static_cast<uint64_t>(*limit)) {
    return "retention.bytes=" + std::to_string(*limit) + ": the log holds at most " + std::to_string(total) +
           " bytes, within the limit.";
  }
  *due = o.now_ms + o.retention_check_interval_ms;
  return "retention.bytes=" + std::to_string(*limit) + ": the log holds up to " + std::to_string(total) +
         " bytes; the oldest batches over the limit go at the next retention check.";
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

std::string format_timestamp(int64_t unix_ms) {
  if (unix_ms < 0) return "-";
  int64_t year = 0;
  unsigned month = 0;
  unsigned day = 0;
  const int64_t days = unix_ms / 86400000;
  const int64_t in_day = unix_ms % 86400000;
  civil_from_days(days, year, month, day);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", year, month, day, in_day / 3600000,
                     in_day / 60000 % 60, in_day / 1000 % 60, in_day % 1000);
}

std::string explain_compaction(const PartitionReport& report, const InspectOptions& options) {
  if (!report.config.compacted()) return "cleanup.policy does not include compact: nothing is compacted.";
  std::vector<SegmentInfo> segments;
  for (const SegmentReport& s : report.segments) {
    SegmentInfo info;
    info.base_offset = s.base_offset;
    info.next_offset = s.last_offset >= 0 ? s.last_offset + 1 : s.base_offset;
    info.size_bytes = s.size_bytes;
    info.max_timestamp = s.max_timestamp;
    info.first_batch_max_timestamp = s.first_live_batch_max_timestamp;
    segments.push_back(info);
  }
  const CleanerOptions cleaner = cleaner_options_for(report.config, BrokerStorageConfig{});
  const LogBounds bounds{report.log_start_offset, report.log_end_offset};
  const DirtyReport dirt =
      measure_dirt(segments, bounds, report.cleaner_checkpoint.value_or(0), cleaner, options.now_ms);
  std::string text = fmt::format(
      "dirty section [{}, {}): {} dirty bytes, {} clean bytes, dirty ratio {:.3f} (min.cleanable.dirty.ratio={}). ",
      dirt.first_dirty, dirt.first_uncleanable, dirt.dirty_bytes, dirt.clean_bytes, dirt.dirty_ratio(),
      cleaner.min_cleanable_dirty_ratio);
  if (dirt.cleanable(cleaner)) {
    text += fmt::format("The cleaner will clean it at its next look (within {}).",
                        seconds_text(options.cleaner_backoff_ms));
  } else {
    text += "Not cleaned yet: the ratio must be strictly above the minimum (or max.compaction.lag.ms pass).";
  }
  if (!segments.empty()) {
    text += fmt::format(" Records from offset {} (the active segment, and any newer than min.compaction.lag.ms={})"
                        " are never cleaned: duplicates there stay readable until the segment rolls.",
                        dirt.first_uncleanable, cleaner.min_compaction_lag_ms);
  }
  return text;
}

std::string explain_retention(const PartitionReport& report, const InspectOptions& options,
                              std::optional<int64_t>* next_eviction_ms) {
  *next_eviction_ms = std::nullopt;
  if (!report.config.retention_enabled()) {
    return "cleanup.policy=" + std::string(report.config.compacted() ? "compact" : "(none)") +
           ": retention never deletes by time or size.";
  }
  std::optional<int64_t> by_time;
  std::optional<int64_t> by_size;
  std::string text = explain_time(report, options, &by_time) + " " + explain_size(report, &by_size, options);
  if (by_time || by_size) *next_eviction_ms = std::min(by_time.value_or(INT64_MAX), by_size.value_or(INT64_MAX));
  return text;
}

std::string format_report(const PartitionReport& r) {
  std::string out = "partition " + r.dir + "\n";
  out += "  config: ";
  out += r.config_file_found ? "topic.properties" : "broker defaults (no topic.properties)";
  for (const auto& [key, value] : r.config.overrides()) out += ", " + key + "=" + value;
  out += "\n  log start " + std::to_string(r.log_start_offset) + ", log end " + std::to_string(r.log_end_offset) +
         ", high watermark " + std::to_string(r.log_end_offset) + " (single node: the log end once loaded)";
  out += r.state ? ", recovery point " + std::to_string(r.state->recovery_point) : ", no partition.state";
  out += r.clean_shutdown_marker ? "\n  last stop: clean (marker present; the next open trusts the files)\n"
                                 : "\n  last stop: unclean or running (the next open scans from the recovery point)\n";
  if (!r.load_refusal.empty()) out += "  NOT LOADED: a broker keeps it offline: " + r.load_refusal + "\n";
  out += "  segments:\n";
  for (const SegmentReport& s : r.segments) {
    out += fmt::format("    {}  offsets {}-{}  {} batches  {} records  {} bytes  time {} .. {}\n", s.file,
                       s.base_offset, s.last_offset, s.batches, s.records, s.size_bytes,
                       format_timestamp(s.min_timestamp), format_timestamp(s.max_timestamp));
    if (s.preallocated_bytes > 0) {
      out += fmt::format("      then {} preallocated bytes (zeros)\n", s.preallocated_bytes);
    }
    if (!s.damage.empty()) out += "      DAMAGE: " + s.damage + "\n";
  }
  for (const std::string& f : r.other_files) out += "  other file: " + f + "\n";
  if (r.leader_epochs.has_value()) {
    out += "  leader epochs (epoch from offset):";
    for (const EpochEntry& e : *r.leader_epochs) out += fmt::format(" {} from {},", e.epoch, e.start_offset);
    if (r.leader_epochs->empty()) out += " none recorded,";
    out.back() = '\n';
  } else {
    out += "  leader epochs: " +
           (r.leader_epochs_problem.empty() ? "no leader-epoch-checkpoint" : "DAMAGED: " + r.leader_epochs_problem) +
           " (the next open rebuilds it from the batches)\n";
  }
  out += "  retention: " + r.retention + "\n";
  if (r.next_eviction_ms) out += "  next eviction due: " + format_timestamp(*r.next_eviction_ms) + "\n";
  out += "  compaction: " + r.compaction + "\n";
  return out;
}

std::string format_reports_json(const std::vector<PartitionReport>& reports) {
  std::string out = "[";
  for (size_t i = 0; i < reports.size(); ++i) {
    const PartitionReport& r = reports[i];
    out += i ? ",{" : "{";
    out += "\"dir\":";
    append_json_string(out, r.dir);
    out += ",\"log_start_offset\":" + std::to_string(r.log_start_offset) +
           ",\"log_end_offset\":" + std::to_string(r.log_end_offset) +
           ",\"high_watermark\":" + std::to_string(r.log_end_offset) +
           ",\"recovery_point\":" + (r.state ? std::to_string(r.state->recovery_point) : "null") +
           ",\"clean_shutdown\":" + (r.clean_shutdown_marker ? "true" : "false") + ",\"overrides\":{";
    bool first = true;
    for (const auto& [key, value] : r.config.overrides()) {
      if (!first) out += ",";
      first = false;
      append_json_string(out, key);
      out += ":";
      append_json_string(out, value);
    }
    out += "},\"segments\":[";
    for (size_t j = 0; j < r.segments.size(); ++j) {
      const SegmentReport& s = r.segments[j];
      out += j ? ",{" : "{";
      out += "\"file\":";
      append_json_string(out, s.file);
      out += ",\"base_offset\":" + std::to_string(s.base_offset) + ",\"last_offset\":" + std::to_string(s.last_offset) +
             ",\"batches\":" + std::to_string(s.batches) + ",\"records\":" + std::to_string(s.records) +
             ",\"size_bytes\":" + std::to_string(s.size_bytes) +
             ",\"preallocated_bytes\":" + std::to_string(s.preallocated_bytes) + ",\"min_timestamp\":" +
             std::to_string(s.min_timestamp) + ",\"max_timestamp\":" + std::to_string(s.max_timestamp) +
             ",\"damage\":";
      append_json_string(out, s.damage);
      out += "}";
    }
    out += "],\"leader_epochs\":";
    if (r.leader_epochs.has_value()) {
      out += "[";
      for (size_t j = 0; j < r.leader_epochs->size(); ++j) {
        const EpochEntry& e = (*r.leader_epochs)[j];
        out += fmt::format("{}{{\"epoch\":{},\"start_offset\":{}}}", j ? "," : "", e.epoch, e.start_offset);
      }
      out += "]";
    } else {
      out += "null";
    }
    out += ",\"load_refusal\":";
    append_json_string(out, r.load_refusal);
    out += ",\"retention\":";
    append_json_string(out, r.retention);
    out += ",\"next_eviction_ms\":" + (r.next_eviction_ms ? std::to_string(*r.next_eviction_ms) : "null");
    out += ",\"compaction\":";
    append_json_string(out, r.compaction);
    out += "}";
  }
  return out + "]\n";
}

}  // namespace sluice::storage
