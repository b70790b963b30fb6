// PartitionManager: the node's partitions (Kafka 3.9's ReplicaManager, as far as one node needs it). It wraps each
// partition the log manager holds in a cluster::Partition, creates, removes and reconfigures partitions for the
// topic table, and owns what the partitions share: the long polls' broker-wide signal and the ack-before-append
// mutation's queue. Handlers look partitions up here and never reach the log manager for partition data.
//
// Fibers: every call from the node's fibers. find() never suspends; create, remove and alter_config suspend on
// the file system. start() and stop() bracket the mutation's fiber; call stop() before the log manager closes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/mutations.h"
#include "core/cluster/deferred_appends.h"
#include "core/cluster/partition.h"
#include "core/cluster/partition_raft_log.h"
#include "core/raft/host.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/storage/log_manager.h"

namespace sluice::cluster {

class PartitionManager {
 public:
  // Wraps every partition `logs` loaded. `node_id` leads them all; with the ack-before-append mutation in
  // `mutations` produces are answered before their append (deferred_appends.h).
  PartitionManager(Env env, int32_t node_id, storage::LogManager& logs, const MutationSet& mutations);
  ~PartitionManager();
  PartitionManager(const PartitionManager&) = delete;
  PartitionManager& operator=(const PartitionManager&) = delete;

  // Starts the mutation's fiber, when it is planted.
  void start();
  // Appends what the mutation still holds (it was acknowledged). From a fiber, before the log manager closes.
  void stop();

  // The partition, or null: callers that suspend while using it keep the shared_ptr (it may be removed meanwhile).
  std::shared_ptr<Partition> find(std::string_view topic, int32_t partition) const;
  std::shared_ptr<Partition> find(const storage::TopicPartition& tp) const { return find(tp.topic, tp.partition); }
  // In TopicPartition's order.
  std::vector<storage::TopicPartition> partitions() const;
  // A partition whose log did not load at start (storage::LogManager::offline_partition): find() does not know it,
  // and requests for it are answered with its reason, KAFKA_STORAGE_ERROR, as Kafka's ReplicaManager answers for
  // an offline replica. remove() and alter_config() take it; null when the partition is not offline. One refused
  // for lack of space joins find() when a later retention check loads it (LogManager::load_offline_again).
  const storage::LogManager::OfflinePartition* offline(const storage::TopicPartition& tp) const {
    return logs_.offline_partition(tp);
  }
  std::vector<storage::TopicPartition> offline_partitions() const { return logs_.offline_partitions(); }

  // Creates the partition's log with `config` and `topic_id` (log_manager.h) and its Partition.
  Result<std::shared_ptr<Partition>> create(const storage::TopicPartition& tp, const storage::TopicConfig& config,
                                            const std::string& topic_id);
  // Creates partitions [first, first + count) of `topic` all or none (LogManager::create_partitions: a crash
  // part-way leaves none of them at the next start), each with its Partition.
  Result<std::vector<std::shared_ptr<Partition>>> create_partitions(const std::string& topic, int32_t first,
                                                                    int32_t count,
                                                                    const storage::TopicConfig& config,
                                                                    const std::string& topic_id);
  // Cluster mode: makes the partition (its log created or loaded) a replica in raft group `group` of `host`, whose
  // voters are `replicas`: its log becomes the group's log, its hard state is kept beside it, and the Partition
  // answering for it is replaced by a replicated one. Before host->start(), or from a fiber of the node once the
  // host adds groups while running. REQUIRES: the log manager runs with replicated_logs; the partition exists and
  // is not yet replicated.
  Result<std::shared_ptr<Partition>> replicate(const storage::TopicPartition& tp, raft::RaftHost& host,
                                               raft::GroupId group, std::vector<int32_t> replicas);
  // Replicated partitions whose raft group stopped because the disk refused space
  // (PartitionGroupStorage::stopped_for_space).
  std::vector<storage::TopicPartition> stopped_for_space() const;
  // Takes such a partition's group out of its host and adds it again on the same log and hard state, as a restart
  // of the node would: its raft state is read again from the disk. A disk still full stops it again. From a fiber
  // of the node. REQUIRES: stopped_for_space() lists `tp`.
  Result<std::shared_ptr<Partition>> restart_group(const storage::TopicPartition& tp);
  // Called (on the raft host's driver: it must not suspend) whenever a replica's raft group stops on a storage error.
  void set_on_group_stopped(std::function<void()> callback) { on_group_stopped_ = std::move(callback); }
  // Gone for lookups at once, then (replicated) its raft group leaves the host, then its log is closed and its
  // directory removed. kNotFound when absent. A replicated partition's removal waits for the host's driver: from a
  // fiber of the node.
  Status remove(const storage::TopicPartition& tp);
  // The partition's new config, persisted and in force at once (settings, retention, the produce checks).
  Status alter_config(const storage::TopicPartition& tp, const storage::TopicConfig& config);

  // Every long poll watches it beside its partitions' own signals (append_watch.h); a stopping broker notifies it
  // (their answer is due at once), and so do callers that appended behind the partitions' backs (tests).
  AppendSignal& broker_wide() { return broker_wide_; }
  void notify_appended() { broker_wide_.notify_all(); }
  // Set (never reset here) whenever a replicated partition's role, term or leader changes: the broker's leader
  // reporter resets it and looks at every partition.
  Event& leadership_changed() { return leadership_changed_; }

 private:
  std::shared_ptr<Partition> make_partition(const storage::TopicPartition& tp);

  Env env_;
  storage::LogManager& logs_;
  AppendSignal broker_wide_;
  Event leadership_changed_;
  std::unique_ptr<DeferredAppends> deferred_;  // only with the ack-before-append mutation
  PartitionContext context_;                   // refers to the members above
  int64_t replica_lag_time_max_ms_ = 30000;    // replica.lag.time.max.ms
  // Ordered by partition number first, then by the topic's length and bytes: every partition of every request is
  // looked up here, and comparing the topic's bytes at each level of the tree was 1.5 % of a simulated run. Only
  // lookups use this order: partitions() sorts its answer.
  struct NumberFirst {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      if (a.partition != b.partition) return a.partition < b.partition;
      const std::string_view x(a.topic);
      const std::string_view y(b.topic);
      return x.size() != y.size() ? x.size() < y.size() : x < y;
    }
  };
  struct Key {
    std::string_view topic;
    int32_t partition;
  };
  std::map<storage::TopicPartition, std::shared_ptr<Partition>, NumberFirst> partitions_;
  // A replicated partition's raft storage (its log and hard state), which its host reads until it stops.
  std::map<storage::TopicPartition, std::unique_ptr<PartitionGroupStorage>> group_storage_;
  std::function<void()> on_group_stopped_;
};

}  // namespace sluice::cluster
