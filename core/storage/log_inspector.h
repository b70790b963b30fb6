// The reader behind `sluice log inspect DIR`: what a partition directory holds, without changing a byte (no
// recovery runs). It answers "why can I still read this expired message?" (seed 004): when the oldest live batch
// expires, when the next retention check will evict it, and what holds it back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "core/env/env.h"
#include "core/storage/leader_epoch_cache.h"
#include "core/storage/log_format.h"
#include "core/storage/topic_config.h"

namespace sluice::storage {

struct SegmentReport {
  std::string file;
  int64_t base_offset = 0;
  int64_t last_offset = -1;  // -1: empty
  uint64_t size_bytes = 0;       // the batches' bytes
  uint64_t preallocated_bytes = 0;  // zeros after the last batch (an active persisted segment), not damage
  int64_t batches = 0;
  int64_t records = 0;
  int64_t min_timestamp = -1;
  int64_t max_timestamp = -1;
  std::string damage;  // empty when every batch verifies
  // The first batch holding an offset at or above the log start (from partition.state) in this segment.
  int64_t first_live_offset = -1;
  int64_t first_live_batch_max_timestamp = -1;
};

struct PartitionReport {
  std::string dir;
  TopicConfig config;
  bool config_file_found = false;
  bool clean_shutdown_marker = false;
  std::optional<PartitionState> state;
  int64_t log_start_offset = 0;
  int64_t log_end_offset = 0;
  std::vector<SegmentReport> segments;
  std::vector<std::string> other_files;  // temporary files (.deleted, .cleaned, .swap) and strays
  // leader-epoch-checkpoint as the file says (an open drops entries outside [log start, log end)); nullopt when
  // there is none, and then `leader_epochs_problem` says why when it is there but does not decode.
  std::optional<std::vector<EpochEntry>> leader_epochs;
  std::string leader_epochs_problem;
  std::string retention;   // the explanation; see explain_retention
  std::string compaction;  // see explain_compaction
  std::optional<int64_t> cleaner_checkpoint;  // from <data dir>/cleaner-offset-checkpoint, when listed there
  std::optional<int64_t> next_eviction_ms;  // wall time of the next check that evicts something, if any is due
  // Why a broker does not load this partition (it keeps it offline, answering KAFKA_STORAGE_ERROR for it), as the
  // files show it by the loader's rules: a partition.state or topic.properties that does not decode, damage that
  // recovery scans below the recovery point, overlapping segments, a directory that cannot be read. Empty: it loads.
  std::string load_refusal;
};

struct InspectOptions {
  int64_t now_ms = 0;
  int64_t retention_check_interval_ms = 5000;
  int64_t cleaner_backoff_ms = 15000;
  TopicConfig broker_defaults;
};

Result<PartitionReport> inspect_partition(Env env, const std::string& dir, const InspectOptions& options);
// A data directory (its <topic>-<partition> subdirectories) or one partition directory. A subdirectory that cannot
// be read is reported with that as its load_refusal; the others are still inspected.
Result<std::vector<PartitionReport>> inspect_path(Env env, const std::string& path, const InspectOptions& options);

// How retention treats this partition now, and when the next eviction is due (nullopt: none is).
std::string explain_retention(const PartitionReport& report, const InspectOptions& options,
                              std::optional<int64_t>* next_eviction_ms);
// The dirty section, its ratio against min.cleanable.dirty.ratio, and what the cleaner will do and when.
std::string explain_compaction(const PartitionReport& report, const InspectOptions& options);
// "2026-01-01T00:00:00.000Z"; "-" for -1.
std::string format_timestamp(int64_t unix_ms);
std::string format_report(const PartitionReport& report);
std::string format_reports_json(const std::vector<PartitionReport>& reports);

}  // namespace sluice::storage
