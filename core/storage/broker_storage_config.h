// Broker-level storage settings, under Kafka's names where Kafka has them, and the broker defaults of every topic
// config (log.retention.hours, log.segment.bytes, log.cleanup.policy, ...: each topic key's broker_synonym).
//
// Sluice departs from Kafka here on purpose (storage-semantics.md, top):
//   log.retention.check.interval.ms defaults to 5000, not 300000, so an expired record stops being readable
//   within seconds;
//   log.disk.usage.max.percent (default 95) and log.disk.pressure.policy (reject | delete-oldest, default reject)
//   are Sluice's: above the threshold, appends are refused (reject) or the oldest data goes first (delete-oldest).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/storage/topic_config.h"

namespace sluice::storage {

enum class DiskPressurePolicy : uint8_t { kReject, kDeleteOldest };

struct BrokerStorageConfig {
  // Bytes of the cleaner's key → offset map per entry: a 16-byte key digest and an 8-byte offset (Kafka's MD5 map).
  static constexpr int64_t kOffsetMapEntryBytes = 24;

  int64_t log_retention_check_interval_ms = 5000;
  bool log_cleaner_enable = true;
  int64_t log_cleaner_backoff_ms = 15000;
  int64_t log_cleaner_dedupe_buffer_size = 128 * 1024 * 1024;
  double log_cleaner_io_buffer_load_factor = 0.9;
  int32_t log_cleaner_io_buffer_size = 512 * 1024;
  int64_t log_flush_scheduler_interval_ms = std::numeric_limits<int64_t>::max();
  int32_t log_flush_offset_checkpoint_interval_ms = 60000;
  int32_t log_flush_start_offset_checkpoint_interval_ms = 60000;
  int32_t log_disk_usage_max_percent = 95;
  DiskPressurePolicy log_disk_pressure_policy = DiskPressurePolicy::kReject;
  // Sluice: how many closed segments' .log files the broker keeps open at once (SegmentFileCache), beyond the three
  // files of each partition's active segment.
  int32_t max_open_segment_files = 512;
  // What a topic gets for every key it does not override. Its retention.ms follows Kafka's precedence:
  // log.retention.ms, else log.retention.minutes, else log.retention.hours (168), a negative result meaning -1;
  // segment.ms is log.roll.ms else log.roll.hours; segment.jitter.ms is log.roll.jitter.ms else
  // log.roll.jitter.hours; flush.ms is log.flush.interval.ms else log.flush.scheduler.interval.ms.
  TopicConfig topic_defaults;
  // Known bugs planted for the simulator's checkers (core/base/mutations.h): the broker copies
  // kafka::BrokerConfig::mutations here. Empty in the real world.
  MutationSet mutations;
  // Cluster mode: every partition log is its raft group's log (core/cluster/partition_raft_log.h). Its high
  // watermark is the group's commit index, set from outside, and the raft host, not the log, decides when it syncs
  // (a `persisted` topic's group counts only synced entries). Not a Kafka setting: the node sets it.
  bool replicated_logs = false;
  // With replicated_logs: topics whose logs stay local to this node all the same (their high watermark follows the
  // log end, as on one node). The broker lists __consumer_offsets until consumer groups are replicated.
  std::set<std::string> local_topics;

  // Parses the storage keys of a broker's key → string settings. Keys this does not know are left to the broker
  // (is_storage_key tells them apart). Invalid values give INVALID_CONFIG naming the key and what it accepts.
  static Result<BrokerStorageConfig> from_map(const std::map<std::string, std::string>& settings);

  // Whether from_map reads `name` (its own knobs and the topic configs' broker synonyms).
  static bool is_storage_key(std::string_view name);
};

}  // namespace sluice::storage
