// LogManager: every partition log of one broker's data directory, with its topic's configuration, and the
// broker-wide storage duties: the retention check every log.retention.check.interval.ms (seconds by default,
// Sluice's departure from Kafka's 5 minutes), disk-pressure refusal of appends, and a graceful close.
//
// Layout: <data_dir>/<topic>-<partition>/ holds the partition's segments (partition_log.h) and topic.properties
// (the topic's config overrides, written atomically when the partition is created or its config altered).
//
// Fibers: every call comes from fibers of the node that opened the manager. start() spawns the retention fiber;
// close() stops it and closes every log.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/storage/broker_storage_config.h"
#include "core/storage/partition_log.h"
#include "core/storage/retention.h"
#include "core/storage/topic_config.h"

namespace sluice::storage {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
  std::string dir_name() const { return topic + "-" + std::to_string(partition); }
  std::string to_string() const { return dir_name(); }
};

class LogManager {
 public:
  // Loads every partition directory under `data_dir` (creating the directory when missing). A partition that
  // refuses to load (interior damage) fails the whole open with its message: nothing is served half-loaded.
  static Result<std::unique_ptr<LogManager>> open(Env env, std::string data_dir, BrokerStorageConfig config);
  ~LogManager();
  LogManager(const LogManager&) = delete;
  LogManager& operator=(const LogManager&) = delete;

  // Creates the partition with `config` (kAlreadyExists when present).
  Result<PartitionLog*> create_partition(const TopicPartition& tp, const TopicConfig& config);
  PartitionLog* find(const TopicPartition& tp) const;
  const TopicConfig* topic_config(const TopicPartition& tp) const;
  std::vector<TopicPartition> partitions() const;
  // Applies a new config to the partition at once (settings, retention) and persists it.
  Status alter_config(const TopicPartition& tp, const TopicConfig& config);

  // Appends after the disk-pressure check: above log.disk.usage.max.percent the append is refused with
  // KAFKA_STORAGE_ERROR (reads keep working), unless the delete-oldest policy frees space first.
  Result<AppendResult> append(const TopicPartition& tp, ByteView batches);

  // One retention check over every partition at `now_ms`; returns what moved, by partition.
  Result<std::map<TopicPartition, RetentionResult>> run_retention(int64_t now_ms);
  // Starts the retention fiber (every log.retention.check.interval.ms).
  void start();
  // Graceful: stops the fiber, closes every log (flush + clean-shutdown marker). Later calls fail.
  Status close();

  const BrokerStorageConfig& config() const { return config_; }
  const std::string& data_dir() const { return data_dir_; }
  uint64_t appends_refused_for_space() const { return appends_refused_for_space_; }

  struct Entry {
    TopicConfig config;
    std::unique_ptr<PartitionLog> log;
  };

 private:
  LogManager(Env env, std::string data_dir, BrokerStorageConfig config);
  Status load_partition(const std::string& name);
  Status write_config(const TopicPartition& tp, const TopicConfig& config);
  Status check_disk_pressure(const TopicPartition& tp);
  Status free_oldest(const TopicPartition& tp);
  void retention_loop();

  Env env_;
  std::string data_dir_;
  BrokerStorageConfig config_;
  std::map<TopicPartition, Entry> entries_;
  bool closed_ = false;
  bool started_ = false;
  Event stop_;
  FiberRef retention_fiber_;
  uint64_t appends_refused_for_space_ = 0;
};

// "orders-3" → {orders, 3}; nullopt when the name does not end in "-<partition>".
std::optional<TopicPartition> parse_partition_dir(std::string_view name);

}  // namespace sluice::storage
