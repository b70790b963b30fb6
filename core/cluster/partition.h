// Partition: one topic-partition as the Kafka handlers see it, between their validated requests and the partition's
// log (Kafka 3.9's kafka.cluster.Partition). Handlers reach partition data only through it: produce (the acks=all
// in-sync check, batch validation, the CreateTime max-timestamp correction, the topic's compression, the idempotent
// producer check, the append, waking long polls, and the wait for the acknowledgement), fetch (bounded by the high
// watermark, fenced by the leader epoch, the diverging-epoch check), ListOffsets, OffsetForLeaderEpoch and
// DeleteRecords.
//
// On one node this node leads every partition in kInitialLeaderEpoch, its only replica is the whole ISR, the high
// watermark is the log's (the log end, or what is synced of it for a `persisted` topic), and an acknowledgement
// waits only for a `persisted` topic's sync. Replication changes those answers inside this class — leader(),
// leader_epoch(), in_sync_replicas(), high_watermark() = the commit index, wait_acknowledged() = quorum commit —
// and not its callers (core/cluster/README.md).
//
// Fibers: every call from the node's fibers; most may suspend. Callers hold the shared_ptr across suspensions: the
// partition may be removed meanwhile (DeleteTopics), and its calls then fail with UNKNOWN_TOPIC_OR_PARTITION.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/cluster/append_watch.h"
#include "core/cluster/leader_epoch.h"
#include "core/cluster/producer_state.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/raft/host.h"
#include "core/storage/log_manager.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "core/storage/topic_config.h"
#include "core/storage/topic_partition.h"

namespace sluice::cluster {

class DeferredAppends;

// Kafka's acks: how many copies must hold a produce before it is answered.
enum class Acks : int16_t { kNone = 0, kLeader = 1, kAll = -1 };
// nullopt for a value outside {-1, 0, 1} (INVALID_REQUIRED_ACKS).
std::optional<Acks> acks_from_wire(int16_t acks);

// Which end of the log a reader may see (Kafka's FetchIsolation): consumers stop at the high watermark; other
// replica ids of ListOffsets (the -2 debug consumer) see up to the log end.
enum class ReadUpTo { kHighWatermark, kLogEnd };

// What every partition of a node shares; the PartitionManager owns it and outlives its partitions' calls.
struct PartitionContext {
  Env env;
  int32_t node_id;
  storage::LogManager& logs;
  AppendSignal& broker_wide;            // long polls watch it beside their partitions' signals: a stop notifies it
  DeferredAppends* deferred = nullptr;  // the ack-before-append mutation's queue; null unless it is planted
  Event* leadership_changed = nullptr;  // set whenever a replicated partition's role, term or leader changes
  MutationSet mutations;                // planted bugs of replicated partitions (acks-all-before-quorum, ...)
};

// A replicated partition's raft group (cluster mode): the node's host drives it, its log is the partition log
// (partition_raft_log.h), and its voters are the partition's replicas.
struct ReplicaGroup {
  raft::RaftHost* host = nullptr;
  raft::GroupId group = 0;
  std::vector<int32_t> replicas;  // the voters, preferred leader first
  // replica.lag.time.max.ms: a follower heard from within it and holding the committed prefix is in sync.
  Duration replica_lag_max = std::chrono::seconds(30);
};

// One produce's outcome on a partition.
struct Appended {
  storage::AppendResult result;  // offsets, LogAppendTime, log start
  bool duplicate = false;        // an idempotent retry: nothing was appended, `result` holds the original's offsets
  // The answer must wait for wait_acknowledged(end_offset(), acks, deadline) first: today a `persisted` topic's sync.
  bool awaits_acknowledgement = false;
  // The leader epoch the batch was appended in (its raft term): an acks=all wait commits this entry or fails.
  int32_t leader_epoch = -1;
  int64_t end_offset() const { return result.last_offset + 1; }
};

// Where a fetch reads from and what it believes of the leader (Kafka's FetchRequest.PartitionData).
struct FetchPosition {
  int64_t offset = 0;
  int32_t current_leader_epoch = kUndefinedEpoch;  // -1: not checked
  int32_t last_fetched_epoch = kUndefinedEpoch;    // v12+: -1 skips the diverging-epoch check
};

struct PartitionRead {
  storage::ReadResult data;  // whole batches below the high watermark, and the offsets when it was read
  // Set when the fetcher's last fetched epoch ended before its fetch offset: no records, truncate to this first.
  std::optional<EpochEndOffset> diverging;
};

// ListOffsets' answer for one partition (Kafka's TimestampAndOffset).
struct TimestampAndOffset {
  int64_t timestamp = -1;
  int64_t offset = -1;
  int32_t leader_epoch = kUndefinedEpoch;
};

class Partition : public std::enable_shared_from_this<Partition> {
 public:
  // `replica_group`: a replicated partition (cluster mode); nullopt on one node. The caller adds the group to the
  // host with hooks() before it starts reporting.
  Partition(PartitionContext& context, storage::TopicPartition tp, storage::TopicConfig config, std::string topic_id,
            std::shared_ptr<storage::PartitionLog> log, std::optional<ReplicaGroup> replica_group = std::nullopt);
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  const storage::TopicPartition& topic_partition() const { return tp_; }
  const storage::TopicConfig& config() const { return config_; }
  const std::string& topic_id() const { return topic_id_; }

  // ---- Leadership: on one node this node, in one epoch, its only (in-sync) replica; replicated, the raft group's ----
  bool replicated() const { return replica_group_.has_value(); }
  // The leader's node id; -1 while a replicated partition knows none.
  int32_t leader() const;
  bool is_leader() const;
  // This node's log went offline while loaded (a failed sync or write, PartitionLog::offline): on one node the
  // partition has no leader until a restart, as Kafka's offline log directory; reads and writes answer
  // KAFKA_STORAGE_ERROR.
  bool storage_offline() const;
  int32_t leader_epoch() const { return leader_epoch_; }
  std::vector<int32_t> replicas() const;
  // The leader's view: itself and the followers heard from within replica.lag.time.max.ms that hold the committed
  // prefix. A follower does not know it and answers the replicas.
  std::vector<int32_t> in_sync_replicas() const;
  // The raft group's callbacks (replicated only): role and term changes, commit index advances.
  raft::GroupHooks hooks();
  // Long polls watch it (append_watch.h): notified by every append, high watermark move and leadership change,
  // and when the partition is removed or replaced.
  AppendSignal& appends() { return appends_; }
  // A request's CurrentLeaderEpoch: kNone when it matches (or is -1), else FENCED_ / UNKNOWN_LEADER_EPOCH.
  ErrorCode check_leader_epoch(int32_t current_leader_epoch) const {
    return check_current_leader_epoch(current_leader_epoch, leader_epoch_);
  }
  // OffsetForLeaderEpoch (Kafka's lastOffsetForLeaderEpoch): the epoch fence, then the end of the largest epoch
  // <= `epoch` (-1 / -1 when undefined).
  Result<EpochEndOffset> last_offset_for_leader_epoch(int32_t current_leader_epoch, int32_t epoch) const;

  // ---- Offsets. Invariant: log start <= high watermark <= log end. ----
  int64_t log_start_offset() const;
  int64_t high_watermark() const;
  int64_t log_end_offset() const;

  // ---- Produce ----
  // Appends one partition's records from a Produce request (Partition.appendRecordsToLeader with LogValidator):
  // NOT_ENOUGH_REPLICAS for acks=all below min.insync.replicas, then the batch's validation (its per-record errors
  // into `*record_errors`), the CreateTime max timestamp, the topic's compression, and for producer ids >= 0 the
  // idempotence rules, which may answer a retry with its original offsets. The answer may go out at once unless
  // `awaits_acknowledgement`. Wakes long polls when something was appended.
  Result<Appended> append_records(ByteView records, Acks acks, std::vector<storage::RecordError>* record_errors);
  // Returns once the offsets below `end_offset` are acknowledged at `acks` (today: synced, for a `persisted`
  // topic, at every acks level). An error replaces the produce's answer for this partition. `deadline` is the
  // produce's timeout_ms from its arrival: a quorum wait gives up there with REQUEST_TIMED_OUT (Kafka's
  // DelayedProduce); a local sync is never abandoned, so one node does not use it.
  // A replicated partition: acks=all waits for the quorum's commit of the entry appended in `leader_epoch`
  // (Appended::leader_epoch), then until min.insync.replicas replicas hold it (NOT_ENOUGH_REPLICAS_AFTER_APPEND when
  // too few are left), and answers NOT_LEADER_OR_FOLLOWER when it can no longer say, REQUEST_TIMED_OUT at the
  // deadline; acks=0/1 do not wait.
  Status wait_acknowledged(int64_t end_offset, Acks acks, Instant deadline, int32_t leader_epoch = -1);

  // ---- Reads ----
  // Whole batches from `position.offset` up to the high watermark, at most `max_bytes` (Kafka's fetchRecords):
  // the leader-epoch fence, the diverging-epoch check, then the read. With `min_one_batch` the first batch comes
  // whole whatever its size (KIP-74); without it a first batch over `max_bytes` is left out and max_bytes 0 reads
  // nothing (only the range check and the offsets). OFFSET_OUT_OF_RANGE outside [log start, log end].
  Result<PartitionRead> read(const FetchPosition& position, size_t max_bytes, bool min_one_batch);
  // ListOffsets v1+ (Kafka's fetchOffsetForTimestamp): `timestamp` is a time or one of ListOffsets' special values
  // (latest, earliest, earliest local, max timestamp, latest tiered); nullopt when no offset answers it.
  Result<std::optional<TimestampAndOffset>> offset_for_timestamp(int64_t timestamp, ReadUpTo up_to,
                                                                 int32_t current_leader_epoch);
  // ListOffsets v0 (Kafka's legacyFetchOffsetsForTimestamp): up to `max_offsets` segment bases, newest first, of
  // segments dated at or before `timestamp` (-1: latest, -2: earliest); a consumer's view stops at the high
  // watermark. A segment is dated by its largest record timestamp (the Env has no file times).
  std::vector<int64_t> legacy_offsets_before(int64_t timestamp, int32_t max_offsets, ReadUpTo up_to) const;

  // ---- DeleteRecords ----
  // Moves the log start to `offset` (-1: the high watermark) and returns the new log start (Kafka's
  // deleteRecordsOnLeader): POLICY_VIOLATION unless cleanup.policy has delete, OFFSET_OUT_OF_RANGE below -1 or above
  // the high watermark. Replicated: the leader moves its own log start, its raft group carries it to the followers
  // (each moves its own, never past its commit index), and the answer waits until every follower heard from within
  // an election timeout reports a log start at least as high (Kafka's DelayedDeleteRecords on the low watermark);
  // REQUEST_TIMED_OUT at `deadline` (the move stands), NOT_LEADER_OR_FOLLOWER when leadership moves meanwhile.
  Result<int64_t> delete_records(int64_t offset, Instant deadline = Instant::max());

  // The partition's idempotent producers, rebuilt from its log when needed (tests, inspection).
  Result<const PartitionProducers*> producers();

 private:
  friend class DeferredAppends;
  friend class PartitionManager;

  // Appends a batch that passed append_records' checks: idempotent ones through the producer state. `defer_sync`
  // as in storage::AppendOptions.
  Result<Appended> append_validated(ByteView batch, const storage::BatchHeader& header, bool defer_sync);
  Result<Appended> append_idempotent(ByteView batch, const storage::BatchHeader& header, bool defer_sync);
  Result<storage::AppendResult> append_to_log(ByteView batch, bool defer_sync);
  // The replicated append: proposes the batch to the raft group and returns once the leader appended it.
  Result<storage::AppendResult> append_replicated(ByteView batch, int32_t* leader_epoch);
  Status wait_replicated(int64_t end_offset, int32_t leader_epoch, Instant deadline);
  Status wait_high_watermark(int64_t end_offset, int32_t leader_epoch, Instant deadline);
  // After the commit: until min.insync.replicas replicas hold the records (partition_replicated.cc).
  Status wait_min_insync_copies(int64_t end_offset, int32_t leader_epoch, Instant deadline);
  // DeleteRecords on a replicated partition: returns `log_start` once every follower heard from recently reports a
  // log start at least as high (partition_replicated.cc).
  Result<int64_t> wait_followers_log_start(int64_t log_start, int32_t leader_epoch, Instant deadline);
  void on_role_change(raft::Role role, raft::Term term, raft::NodeId leader);
  void on_commit(raft::Index commit);
  // Raft is about to cut committed records (a `replicated` group's documented loss): the high watermark may go back
  // to `end_offset`.
  void on_committed_cut(int64_t end_offset);
  Status not_leader() const;
  EpochEndOffset epoch_end_offset(int32_t requested) const;
  Status check_in_sync_replicas(Acks acks) const;
  Status check_not_removed() const;
  Result<PartitionRead> read_up_to_high_watermark(int64_t offset, size_t max_bytes, bool min_one_batch);
  void set_config(const storage::TopicConfig& config) { config_ = config; }
  void notify_appended() { appends_.notify_all(); }
  // Asserts the offsets' order and that neither the log start nor the log end ever went back.
  void check_offsets() const;

  PartitionContext& context_;
  const storage::TopicPartition tp_;
  storage::TopicConfig config_;  // kept equal to the log manager's by PartitionManager::alter_config
  const std::string topic_id_;
  const std::shared_ptr<storage::PartitionLog> log_;
  const std::optional<ReplicaGroup> replica_group_;
  int32_t leader_epoch_ = kInitialLeaderEpoch;  // replicated: the raft term
  raft::Role role_ = raft::Role::kFollower;     // replicated only
  int32_t leader_id_ = -1;                      // replicated only
  ProducerState producer_state_;
  AppendSignal appends_;
  // The largest log start and log end seen, for check_offsets.
  mutable int64_t seen_log_start_ = 0;
  mutable int64_t seen_log_end_ = 0;
  mutable int64_t seen_high_watermark_ = 0;
};

}  // namespace sluice::cluster
