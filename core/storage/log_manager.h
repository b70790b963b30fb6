// LogManager: every partition log of one broker's data directory, with its topic's configuration, and the
// broker-wide storage duties: the retention check every log.retention.check.interval.ms (seconds by default,
// Sluice's departure from Kafka's 5 minutes), the log cleaner (filthiest compacted log first, its progress kept in
// cleaner-offset-checkpoint, log.cleaner.backoff.ms between idle looks), disk-pressure refusal of appends, and a
// graceful close. Retention, the cleaner, DeleteRecords and delete-oldest take turns on one maintenance mutex:
// each moves segments, and a pass must not see its segments vanish under it.
//
// Layout: <data_dir>/<topic>-<partition>/ holds the partition's segments (partition_log.h) and topic.properties
// (the topic's config overrides, written atomically when the partition is created or its config altered).
//
// Topic changes are crash-safe (log_directories.cc): a partition directory is made under a staging name and renamed
// into place whole; a deleted one is first renamed to <topic>-<partition>.<topic id>.<token>-delete in one durable
// step (Kafka's -delete suffix) and its files go later, in the retention fiber. Creating several partitions at once
// writes an intent file first, so that a crash part-way leaves none of them at the next open; a deletion interrupted
// part-way is finished at the next open (every partition of the topic with the same id goes). Either way a crash
// leaves a topic whole or absent, never a topic with a missing partition.
//
// Declared effects (effects.h): with a sink, every removal or cut it makes on purpose is reported as it happens —
// a log start moved by retention, DeleteRecords or delete-oldest (right after the move, before any other fiber can
// see it), a cleaner pass (before its first swap), a torn tail cut by recovery, a partition created or deleted.
//
// Descriptors: every log's active segment keeps its three files open; the other segments close theirs and read
// through one SegmentFileCache of at most sluice.max.open.segment.files handles (segment_file_cache.h), so the
// descriptors a broker holds grow with its partitions, not with the segments its data has rolled through.
//
// Fibers: every call comes from fibers of the node that opened the manager. start() spawns the retention and
// cleaner fibers; close() stops them and closes every log.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/storage/broker_storage_config.h"
#include "core/storage/cleaner.h"
#include "core/storage/cleaner_checkpoint.h"
#include "core/storage/effects.h"
#include "core/storage/partition_log.h"
#include "core/storage/retention.h"
#include "core/storage/topic_partition.h"
#include "core/storage/topic_config.h"

namespace sluice::storage {

class LogManager {
 public:
  // Loads every partition directory under `data_dir` (creating the directory when missing). A partition that
  // refuses to load (interior damage, a damaged partition.state, an I/O error) stays offline with its reason
  // (offline_partition) and the others load: one bad partition does not keep the broker from the rest. Fails only
  // when the data directory itself cannot be made or listed.
  // `effects` (may be null) hears of every declared effect (effects.h) and must outlive the manager.
  static Result<std::unique_ptr<LogManager>> open(Env env, std::string data_dir, BrokerStorageConfig config,
                                                  EffectSink* effects = nullptr);
  ~LogManager();
  LogManager(const LogManager&) = delete;
  LogManager& operator=(const LogManager&) = delete;

  // Creates the partition with `config` (kAlreadyExists when present; an offline partition's reason when it is
  // offline). `topic_id` (the topic's UUID in Kafka's
  // text form, opaque here) is kept in the partition's `partition.metadata`, as Kafka does.
  Result<PartitionLog*> create_partition(const TopicPartition& tp, const TopicConfig& config,
                                         const std::string& topic_id = "");
  // Creates partitions [first, first + count) of `topic`, all or none: on an error the ones made are deleted again,
  // and a crash part-way leaves none of them at the next open. kAlreadyExists when one is present.
  Result<std::vector<PartitionLog*>> create_partitions(const std::string& topic, int32_t first, int32_t count,
                                                       const TopicConfig& config, const std::string& topic_id);
  // Closes the partition's log and retires its directory in one durable rename (DeleteTopics); its files are
  // removed later. An offline partition's directory goes too. kNotFound when absent.
  Status delete_partition(const TopicPartition& tp);
  // Removes the files of retired partition directories (the retention fiber calls it every check). Failures are
  // logged and retried at the next call. Returns how many directories are still to remove.
  size_t remove_retired_dirs();
  PartitionLog* find(const TopicPartition& tp) const;
  // For callers that suspend while using the log (reads, long polls): it stays valid even if the partition is
  // deleted meanwhile (its calls then fail as closed).
  std::shared_ptr<PartitionLog> find_shared(const TopicPartition& tp) const;
  const TopicConfig* topic_config(const TopicPartition& tp) const;
  // The topic id given at creation ("" when none was).
  std::string topic_id(const TopicPartition& tp) const;
  std::vector<TopicPartition> partitions() const;  // the loaded ones (find() answers them)

  // A partition whose directory did not load at open: find() does not know it, requests for it are answered with
  // `reason` (KAFKA_STORAGE_ERROR), and only a restart (after `sluice log repair`, or once the disk is healthy)
  // or its deletion ends it; except a load refused for lack of space (kNoSpace), which the retention fiber tries
  // again every kLoadAgainInterval (load_offline_again). A log that goes offline while loaded stays in find()
  // (PartitionLog::offline()).
  struct OfflinePartition {
    TopicConfig config;  // the broker defaults when its topic.properties did not load either
    std::string topic_id;
    Status reason;
  };
  const OfflinePartition* offline_partition(const TopicPartition& tp) const;
  std::vector<TopicPartition> offline_partitions() const;
  // Loads again the offline partitions whose load was refused for lack of space; returns those that loaded, each
  // also told to the listener (set_on_loaded_again). The retention fiber calls it every kLoadAgainInterval while
  // one waits, and after every retention check.
  std::vector<TopicPartition> load_offline_again();
  static constexpr Duration kLoadAgainInterval = std::chrono::seconds(2);
  // Hears of each partition load_offline_again brought back (the partition manager wraps it); empty to stop.
  void set_on_loaded_again(std::function<void(const TopicPartition&)> listener) {
    on_loaded_again_ = std::move(listener);
  }
  // Applies a new config to the partition at once (settings, retention) and persists it.
  Status alter_config(const TopicPartition& tp, const TopicConfig& config);

  // Appends after the disk-pressure check: above log.disk.usage.max.percent the append is refused with
  // KAFKA_STORAGE_ERROR (reads keep working), unless the delete-oldest policy frees space first.
  // `defer_sync`: see AppendOptions (the caller then waits on the partition's wait_for_durability).
  Result<AppendResult> append(const TopicPartition& tp, ByteView batches, bool defer_sync = false);
  // A replica's append (PartitionLog::append_as_replica: a leader's batches byte for byte) after the same
  // disk-pressure check.
  Result<AppendResult> append_as_replica(const TopicPartition& tp, ByteView batches, bool defer_sync = false);
  // A replica's suffix truncation (PartitionLog::truncate_to) on the maintenance turn, so that no cleaner pass,
  // retention check, DeleteRecords or delete-oldest works on the log meanwhile. A cleaner checkpoint above the new
  // log end comes down to the active segment's base (Kafka's maybeTruncateCleanerCheckpointToActiveSegmentBaseOffset):
  // the batches appended there later are dirty.
  Status truncate_to(const TopicPartition& tp, int64_t end_offset);

  // DeleteRecords: moves the log start to `offset` (kOffsetOutOfRange above the high watermark).
  Result<int64_t> delete_records(const TopicPartition& tp, int64_t offset);

  // One retention check over every partition at `now_ms`; returns what moved, by partition.
  Result<std::map<TopicPartition, RetentionResult>> run_retention(int64_t now_ms);
  // One cleaner round: the compacted partition with the highest dirty ratio among those past their gate gets one
  // pass, and its checkpoint is saved. nullopt when no partition needed cleaning.
  struct Cleaned {
    TopicPartition tp;
    CleanResult result;
  };
  Result<std::optional<Cleaned>> run_cleaner_once(int64_t now_ms);
  // Where the partition's dirty section starts (0 before its first pass).
  int64_t cleaner_checkpoint(const TopicPartition& tp) const;
  // Starts the retention fiber (every log.retention.check.interval.ms) and, with log.cleaner.enable, the cleaner.
  void start();
  // Graceful: stops the fiber, closes every log (flush + clean-shutdown marker). Later calls fail.
  Status close();

  const BrokerStorageConfig& config() const { return config_; }
  const std::string& data_dir() const { return data_dir_; }
  uint64_t appends_refused_for_space() const { return appends_refused_for_space_; }
  // The closed segments' open handles, shared by every log of this manager (sluice.max.open.segment.files).
  const SegmentFileCache& file_cache() const { return *file_cache_; }
  // How long a reading of the disk's usage is trusted: a disk filled by someone else is noticed within it.
  static constexpr Duration kDiskUsageRecheckInterval = std::chrono::milliseconds(100);

  struct Entry {
    TopicConfig config;
    std::shared_ptr<PartitionLog> log;  // shared: a fiber suspended in a call keeps a deleted log alive
    std::string topic_id;
  };

 private:
  LogManager(Env env, std::string data_dir, BrokerStorageConfig config, EffectSink* effects);
  void load_partition(const std::string& name);  // into entries_, or offline_ with the reason
  Result<std::unique_ptr<PartitionLog>> open_partition_log(const TopicPartition& tp, const TopicConfig& config);
  Status offline_reason(const TopicPartition& tp, const Status& loaded) const;  // logged as it is made
  Status delete_offline_partition(const TopicPartition& tp);
  // Retires the partition's directory: one durable rename; its files go in remove_retired_dirs().
  Status retire_partition_dir(const TopicPartition& tp, const std::string& topic_id);
  // log_directories.cc: what a crash interrupted. Before loading: staging directories removed, retired ones queued;
  // after: unfinished creations undone, unfinished deletions finished.
  Status sweep_directories_before_load(std::vector<std::string>& intents);
  Status finish_interrupted_changes(const std::vector<std::string>& intents);
  Status undo_interrupted_creation(const std::string& intent_name);
  std::string new_token();
  // The topic's, with the planted mutations; a replicated log's high watermark and syncs are its raft group's.
  LogSettings settings_for(const TopicPartition& tp, const TopicConfig& config) const;
  int64_t wall_ms() const;
  void report(const LogEffect& effect) const;
  void report_recovery(const TopicPartition& tp, const PartitionLog& log) const;
  // Reports a log start moved by `reason`, decided at `now_ms`.
  LogStartMoved reporter(const TopicPartition& tp, LogEffect::Reason reason, int64_t now_ms) const;
  RetentionHooks retention_hooks(const TopicPartition& tp, int64_t now_ms) const;
  Status write_config(const std::string& dir, const TopicConfig& config);
  Status check_disk_pressure(const TopicPartition& tp);
  // append and append_as_replica: the lookup, the disk-pressure check, the accounting of what was written.
  Result<AppendResult> append_with(const TopicPartition& tp, ByteView batches, bool defer_sync, bool as_replica);
  // Percent of the data directory's file system in use, rounded down; from the last reading while it is fresh.
  Result<int64_t> disk_used_percent(bool reread);
  Status free_oldest(const TopicPartition& tp);
  // The data directory's cleaner-offset-checkpoint after a change of `tp`'s entry (log_manager_cleaner.cc).
  Status save_cleaner_checkpoints(const TopicPartition& tp, PartitionLog& log);
  void retention_loop();
  bool awaiting_space() const;  // a partition's load was refused for lack of space
  void cleaner_loop();
  std::optional<TopicPartition> filthiest(int64_t now_ms) const;

  Env env_;
  std::string data_dir_;
  BrokerStorageConfig config_;
  EffectSink* effects_;  // null: nobody listens (the real world)
  std::map<TopicPartition, Entry> entries_;
  std::map<TopicPartition, OfflinePartition> offline_;
  std::function<void(const TopicPartition&)> on_loaded_again_;
  bool closed_ = false;
  bool started_ = false;
  Event stop_;
  FiberRef retention_fiber_;
  FiberRef cleaner_fiber_;
  Mutex maintenance_;
  std::shared_ptr<SegmentFileCache> file_cache_;  // shared with the segments, which readers may keep past close()
  CleanerCheckpoints cleaner_checkpoints_;
  std::set<TopicPartition> uncleanable_;  // a pass failed: skipped until restart, as Kafka does
  std::vector<std::string> retired_dirs_;  // names under data_dir_ whose files are still to remove
  // Names' tokens: a stream of its own, so that topic changes leave the node's other draws as they were.
  Random token_random_;
  uint64_t appends_refused_for_space_ = 0;
  // The last statvfs of the data directory. A reading stays fresh for kDiskUsageRecheckInterval, and only while
  // this broker's appends since it cannot have reached the threshold: a statvfs per append is two system calls.
  struct DiskUsageReading {
    bool valid = false;
    Instant read_at{};
    int64_t used_percent = 0;
    uint64_t total_bytes = 0;
    uint64_t appended_since = 0;
  };
  DiskUsageReading disk_usage_;
};

}  // namespace sluice::storage
