#include "core/storage/log_inspector.h"

#include <algorithm>

#include "core/base/assert.h"
#include "core/storage/cleaner_checkpoint.h"
#include "core/storage/topic_partition.h"
#include "core/storage/record_batch.h"
#include "core/storage/segment.h"

namespace sluice::storage {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

// split_batches, except that a header that does not parse ends the batches instead of failing them all (unless it
// is the first): the damage is then reported at its own byte, after the batches before it.
Result<std::vector<BatchSpan>> valid_prefix(ByteView chunk, size_t* consumed) {
  Result<std::vector<BatchSpan>> spans = split_batches(chunk, consumed);
  if (spans.ok() || *consumed == 0) return spans;
  return split_batches(chunk.first(*consumed), consumed);
}

// Walks every batch of a .log file, in chunks, stopping at the first that does not verify.
Status scan_segment(File& file, int64_t live_from, SegmentReport& report) {
  SLUICE_ASSIGN_OR_RETURN(report.size_bytes, file.size());
  uint64_t position = 0;
  Bytes chunk;
  while (position < report.size_bytes) {
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(kChunkBytes, report.size_bytes - position)));
    SLUICE_ASSIGN_OR_RETURN(size_t got, file.pread(position, chunk));
    chunk.resize(got);
    size_t consumed = 0;
    Result<std::vector<BatchSpan>> spans = valid_prefix(chunk, &consumed);
    if (!spans.ok() || spans->empty()) {
      Result<BatchHeader> header = parse_batch_header(chunk);
      if (header.ok() && header->size_bytes() > chunk.size() && position + header->size_bytes() <= report.size_bytes) {
        chunk.resize(header->size_bytes());  // one batch larger than a chunk
        SLUICE_ASSIGN_OR_RETURN(got, file.pread(position, chunk));
        if (got == chunk.size()) spans = split_batches(chunk, &consumed);
      }
    }
    if (!spans.ok() || spans->empty()) {
      SLUICE_ASSIGN_OR_RETURN(const bool zeros, only_zeros(file, position, report.size_bytes));
      if (zeros) {
        report.preallocated_bytes = report.size_bytes - position;
        report.size_bytes = position;
        return Status();
      }
      report.damage = "no valid batch at byte " + std::to_string(position) +
                      (spans.ok() ? " (incomplete: a torn tail?)" : ": " + spans.status().message());
      return Status();
    }
    for (const BatchSpan& span : *spans) {
      const ByteView bytes = ByteView(chunk).subspan(span.position, span.header.size_bytes());
      if (!batch_crc_ok(bytes)) {
        report.damage = "CRC mismatch in the batch at byte " + std::to_string(position + span.position) +
                        " (offset " + std::to_string(span.header.base_offset) + ")";
        return Status();
      }
      if (report.batches == 0) report.base_offset = span.header.base_offset;
      ++report.batches;
      report.records += span.header.record_count;
      report.last_offset = span.header.last_offset();
      const int64_t first_ts = span.header.log_append_time() ? span.header.max_timestamp
                                                               : span.header.base_timestamp;
      if (first_ts >= 0 && (report.min_timestamp < 0 || first_ts < report.min_timestamp)) {
        report.min_timestamp = first_ts;
      }
      report.max_timestamp = std::max(report.max_timestamp, span.header.max_timestamp);
      if (report.first_live_offset < 0 && span.header.last_offset() >= live_from) {
        report.first_live_offset = std::max(live_from, span.header.base_offset);
        report.first_live_batch_max_timestamp = span.header.max_timestamp;
      }
    }
    position += consumed;
  }
  return Status();
}

Result<Bytes> read_file(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kRead));
  return read_whole_file(*file);
}

Status read_metadata(Env env, const std::string& dir, const InspectOptions& options, PartitionReport& report) {
  report.config = options.broker_defaults;
  const std::string config_path = join_path(dir, "topic.properties");
  SLUICE_ASSIGN_OR_RETURN(report.config_file_found, env.fs.exists(config_path));
  if (report.config_file_found) {
    SLUICE_ASSIGN_OR_RETURN(Bytes text, read_file(env.fs, config_path));
    Result<TopicConfig> config = TopicConfig::from_properties(as_chars(text), options.broker_defaults);
    if (config.ok()) {
      report.config = std::move(*config);
    } else {
      report.load_refusal = "topic.properties: " + config.status().message();
    }
  }
  SLUICE_ASSIGN_OR_RETURN(report.clean_shutdown_marker,
                          env.fs.exists(join_path(dir, std::string(kCleanShutdownFileName))));
  const std::string state_path = join_path(dir, std::string(kStateFileName));
  SLUICE_ASSIGN_OR_RETURN(bool has_state, env.fs.exists(state_path));
  if (has_state) {
    SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_file(env.fs, state_path));
    Result<PartitionState> state = decode_partition_state(bytes);
    if (state.ok()) {
      report.state = *state;
    } else if (report.load_refusal.empty()) {
      report.load_refusal = state.status().message() + " (it holds the log start offset). Run `sluice log repair " +
                            dir + "` to remove it";
    }
  }
  Result<std::optional<std::vector<EpochEntry>>> epochs = read_leader_epoch_checkpoint(env.fs, dir);
  if (epochs.ok()) {
    report.leader_epochs = std::move(*epochs);
  } else if (epochs.status().code() == Code::kCorruption) {
    report.leader_epochs_problem = epochs.status().message();
  } else {
    return std::move(epochs).take_status();
  }
  return Status();
}

// The partition's entry of the data directory's cleaner checkpoint; a missing or unreadable file is no entry.
Status read_cleaner_checkpoint(Env env, const std::string& dir, PartitionReport& report) {
  const std::optional<TopicPartition> tp = parse_partition_dir(file_name_of(dir));
  if (!tp.has_value()) return Status();
  Result<CleanerCheckpoints> checkpoints = read_cleaner_checkpoints(env.fs, parent_dir(dir));
  if (!checkpoints.ok()) return Status();
  auto it = checkpoints->find(*tp);
  if (it != checkpoints->end()) report.cleaner_checkpoint = it->second;
  return Status();
}

// The loader's verdict on what the scan found (log_loader.cc): an unclean open scans from the segment holding the
// recovery point; damage in a scanned closed segment is a torn tail only at or above a recorded recovery point
// (the segments after it then go), else it refuses the load. Segments below are trusted (reads refuse damage).
std::string load_refusal_of(const PartitionReport& r) {
  const int64_t recovery_point = r.state ? r.state->recovery_point : 0;
  int64_t scan_from = r.segments.empty() ? 0 : r.segments.front().base_offset;
  for (const SegmentReport& s : r.segments) {
    if (s.base_offset <= recovery_point) scan_from = s.base_offset;
  }
  for (size_t i = 0; i + 1 < r.segments.size(); ++i) {
    const SegmentReport& s = r.segments[i];
    const SegmentReport& next = r.segments[i + 1];
    const std::string repair = ". Run `sluice log repair " + r.dir + "`";
    if (s.last_offset >= next.base_offset) {
      return s.file + " ends at offset " + std::to_string(s.last_offset + 1) + ", past the base of the next segment " +
             std::to_string(next.base_offset) + repair;
    }
    if (s.damage.empty() || r.clean_shutdown_marker || s.base_offset < scan_from) continue;
    const int64_t damaged_at = s.last_offset >= 0 ? s.last_offset + 1 : s.base_offset;
    const bool torn_tail = r.state && next.base_offset > recovery_point && damaged_at >= recovery_point;
    if (!torn_tail) return s.file + ": " + s.damage + ", in a closed segment: damage, not a torn tail" + repair;
  }
  return "";
}

}  // namespace

Result<PartitionReport> inspect_partition(Env env, const std::string& dir, const InspectOptions& options) {
  PartitionReport report;
  report.dir = dir;
  SLUICE_TRY(read_metadata(env, dir, options, report));
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env.fs.list(dir));
  for (const DirEntry& entry : entries) {
    const std::optional<SegmentFileName> name = parse_segment_file_name(entry.name);
    if (name && name->suffix == kLogSuffix) {
      SegmentReport segment;
      segment.file = entry.name;
      segment.base_offset = name->base_offset;
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env.fs.open(join_path(dir, entry.name), OpenMode::kRead));
      SLUICE_TRY(scan_segment(*file, report.state ? report.state->log_start_offset : 0, segment));
      report.segments.push_back(std::move(segment));
    } else if (!name || (name->suffix != kIndexSuffix && name->suffix != kTimeIndexSuffix)) {
      if (entry.name != "topic.properties" && entry.name != "partition.metadata" && entry.name != kStateFileName &&
          entry.name != kCleanShutdownFileName && entry.name != kLeaderEpochFileName) {
        report.other_files.push_back(entry.name);
      }
    }
  }
  const int64_t first_base = report.segments.empty() ? 0 : report.segments.front().base_offset;
  report.log_start_offset = std::max(first_base, report.state ? report.state->log_start_offset : 0);
  report.log_end_offset = report.log_start_offset;
  for (const SegmentReport& s : report.segments) {
    if (s.last_offset >= 0) report.log_end_offset = std::max(report.log_end_offset, s.last_offset + 1);
  }
  if (report.load_refusal.empty()) report.load_refusal = load_refusal_of(report);
  report.retention = explain_retention(report, options, &report.next_eviction_ms);
  SLUICE_TRY(read_cleaner_checkpoint(env, dir, report));
  report.compaction = explain_compaction(report, options);
  return report;
}

Result<std::vector<PartitionReport>> inspect_path(Env env, const std::string& path, const InspectOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env.fs.list(path));
  const bool is_partition = std::any_of(entries.begin(), entries.end(), [](const DirEntry& e) {
    std::optional<SegmentFileName> name = parse_segment_file_name(e.name);
    return (name && name->suffix == kLogSuffix) || e.name == kStateFileName;
  });
  std::vector<PartitionReport> reports;
  if (is_partition) {
    SLUICE_ASSIGN_OR_RETURN(PartitionReport report, inspect_partition(env, path, options));
    reports.push_back(std::move(report));
    return reports;
  }
  for (const DirEntry& entry : entries) {
    if (!entry.is_directory) continue;
    const std::string dir = join_path(path, entry.name);
    Result<PartitionReport> report = inspect_partition(env, dir, options);
    if (!report.ok()) {
      PartitionReport unreadable;
      unreadable.dir = dir;
      unreadable.config = options.broker_defaults;
      unreadable.load_refusal = "it cannot be read: " + report.status().to_string();
      reports.push_back(std::move(unreadable));
      continue;
    }
    reports.push_back(std::move(*report));
  }
  return reports;
}

}  // namespace sluice::storage
