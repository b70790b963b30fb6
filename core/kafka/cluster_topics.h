// ClusterTopics: what a broker adds in cluster mode (issue 22; BrokerConfig::cluster_mode()). It owns the node's
// cluster::ClusterNode (the metadata group, the raft host every partition group of the node runs in, broker
// registration) and two fibers:
//
//   - the partition reconciler: whenever the metadata image moves, local state follows it. Every topic of the
//     image is in the TopicTable (on every node, so that Metadata answers for all of them); each partition whose
//     replicas include this node has a local log, made a replica of its raft group (partition_group_id); config
//     overrides are altered; topics gone from the image lose their table entry, groups and partitions. It acts
//     only once this node's registration is applied (the image then holds everything committed before this
//     start), so that a restarted node replaying the metadata log never deletes data an old prefix of the log
//     no longer names.
//   - the leader reporter: when a partition this node hosts becomes leader (Partition's role hook sets
//     PartitionManager::leadership_changed), it proposes RecordLeader, so that nodes not hosting the partition can
//     answer Metadata with its leader. Also every second, which retries what a proposal did not settle. Every
//     leader.imbalance.check.interval.seconds it also hands leaderships back to preferred replicas.
//
// The handlers propose through it (CreateTopic, DeleteTopic, AlterTopicConfig, AllocateProducerIds) and then
// wait_reconciled(), which returns once the reconciler has followed the image as it was when they asked: an
// immediately following request on this node sees the change.
//
// Topics in BrokerStorageConfig::local_topics are the node's own and never touched here (none today:
// __consumer_offsets is replicated like any topic, and the group coordinator follows its partitions' leaders).
//
// Fibers: start() and shutdown() from the broker's main fiber; the rest from the node's fibers; stop() anywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/result.h"
#include "core/cluster/cluster_node.h"
#include "core/cluster/partition_manager.h"
#include "core/env/env.h"
#include "core/env/scheduler.h"
#include "core/kafka/broker_config.h"
#include "core/kafka/produce_forwarder.h"
#include "core/kafka/topics.h"

namespace sluice::kafka {

class ClusterTopics {
 public:
  // `config`, `partitions` and `topics` outlive this object. REQUIRES config.cluster_mode().
  ClusterTopics(Env env, const BrokerConfig& config, const std::string& data_dir, cluster::PartitionManager& partitions,
                TopicTable& topics);
  ~ClusterTopics();
  ClusterTopics(const ClusterTopics&) = delete;
  ClusterTopics& operator=(const ClusterTopics&) = delete;

  // Starts the ClusterNode (its storage in <data_dir>/__cluster_metadata, its transport on this node's voter
  // address) and spawns the reconciler and the leader reporter. Errors name the step.
  Status start();
  // Stops the ClusterNode (waiting proposals end with an unknown fate) and wakes the fibers. Never blocks.
  void stop();
  // stop(), then waits for the fibers and takes the ClusterNode down (its host's driver ends): from a fiber,
  // before the partition logs close.
  void shutdown();

  cluster::ClusterNode& node() { return *node_; }
  const cluster::ClusterNode& node() const { return *node_; }
  const cluster::metadata::MetadataImage& image() const { return node_->image(); }
  int32_t node_id() const { return config_.node_id; }
  // Produce's follower forwarding (produce_forwarder.h); closed by stop().
  ProduceForwarder& forwarder() { return forwarder_; }

  // ---- what the handlers propose (cluster_topics_admin.cc) ----
  // A new topic's record: a fresh id and Kafka's placement over the registered brokers (metadata/placement.h);
  // INVALID_REPLICATION_FACTOR when it asks for more replicas than brokers are registered. `overrides` in canonical
  // form (TopicConfig::overrides()).
  Result<cluster::metadata::CreateTopic> plan_topic(const std::string& name, int32_t partitions,
                                                    int16_t replication_factor,
                                                    std::map<std::string, std::string> overrides);
  // OK when the registered brokers, with these partitions added to what the image places on them, stay within
  // sluice.max.broker.partitions; else POLICY_VIOLATION naming the first broker past it. This node's view: two
  // concurrent proposals may together pass the limit by their sum.
  Status check_broker_partitions(const std::vector<cluster::metadata::PartitionReplicas>& added) const;
  // A fresh topic id (Kafka's Uuid.randomUuid), for a record with a manual assignment.
  cluster::metadata::TopicId new_topic_id();
  // Proposes the record and waits until it applied and this node's table has the topic. Errors: the record's
  // refusal (TOPIC_ALREADY_EXISTS, INVALID_REPLICA_ASSIGNMENT...) or REQUEST_TIMED_OUT (its fate unknown).
  Status create_topic(const cluster::metadata::CreateTopic& topic, Instant deadline);
  // The CreatePartitions record adding `added` partitions to `topic` (`assignment`: each new partition's replicas,
  // or empty for Kafka's placement continuing the topic's round robin, metadata/placement.h).
  Result<cluster::metadata::CreatePartitions> plan_partitions(const cluster::metadata::TopicImage& topic, int32_t added,
                                                              const std::vector<std::vector<int32_t>>& assignment);
  // Proposes the record and waits until it applied and this node's table has the new count.
  Status add_partitions(const cluster::metadata::CreatePartitions& record, Instant deadline);
  // DeleteTopic of the topic with this name and id; then waits until this node removed its partitions.
  Status delete_topic(const std::string& name, const cluster::metadata::TopicId& id, Instant deadline);
  // AlterTopicConfig of the keys whose override differs between `current` and `next` (set or deleted); nothing
  // is proposed when none does. Then waits until this node follows.
  Status alter_topic_config(const std::string& name, const cluster::metadata::TopicId& id,
                            const std::map<std::string, std::string>& current,
                            const std::map<std::string, std::string>& next, Instant deadline);

  // Proposes `batch` to the metadata and waits for its outcomes (ClusterNode::propose).
  Result<std::vector<Status>> propose(const cluster::metadata::Batch& batch, Instant deadline);
  // Waits until the reconciler has followed the image as it is now; false at the deadline or when stopping.
  bool wait_reconciled(Instant deadline);
  // This node's image holds everything committed before it started (its registration applied) and the reconciler
  // has followed it at least once, so its topic table has every topic of the cluster. Until then it cannot tell a
  // topic the cluster has from one it lacks, nor count the brokers (Kafka: a broker serves only once it has caught up
  // with the metadata log).
  bool caught_up() const { return node_->registered() && stats_.passes > 0; }
  // A producer-id block of this node, [first, end), allocated through the metadata (Kafka's AllocateProducerIds):
  // never handed to another node, nor again after a restart.
  Result<std::pair<int64_t, int64_t>> allocate_producer_ids(Instant deadline);

  // Called on the reconciler's fiber (it must not block) with the name of each topic that left the cluster
  // metadata. Set before start().
  void set_topic_removed_observer(std::function<void(const std::string&)> observer) {
    topic_removed_ = std::move(observer);
  }

  struct Stats {
    uint64_t passes = 0;           // reconciler passes
    uint64_t partitions_made = 0;  // partitions created or replicated
    uint64_t partitions_removed = 0;
    uint64_t leaders_reported = 0;  // RecordLeader records applied
    uint64_t leadership_handed_back = 0;  // transfers to a preferred replica started (auto.leader.rebalance)
    uint64_t new_partitions_handed_over = 0;  // a new partition's first leader handing it to the preferred replica
  };
  const Stats& stats() const { return stats_; }

 private:
  // kInvalidArgument when the data directory holds a single node's topics and no cluster metadata.
  Status refuse_single_node_topics();
  void reconcile_loop();
  // One pass; false when something failed (the next pass retries it).
  bool reconcile();
  // A replica here is offline, or its raft group stopped, for lack of space: reconcile again soon.
  bool awaiting_space() const;
  void restart_groups_stopped_for_space();
  void restart_metadata_group_stopped_for_space();
  bool restart_due(std::optional<Instant>& last_restart) const;
  std::map<storage::TopicPartition, std::optional<Instant>> restarted_at_;  // restarts of groups stopped for space
  std::optional<Instant> metadata_restarted_at_;
  bool remove_strays();
  const char* stray_reason(const storage::TopicPartition& tp, const std::string& topic_id) const;
  bool follow_topic(const cluster::metadata::TopicImage& topic);
  Status host_partition(const cluster::metadata::TopicImage& topic, int32_t partition,
                        const storage::TopicConfig& config);
  Status remove_partition(const storage::TopicPartition& tp, const char* why);
  bool is_local_topic(const std::string& name) const;
  // Proposes one record and waits for the reconciler to follow: the record's outcome.
  Status propose_and_follow(cluster::metadata::Record record, Instant deadline);
  // Calls `visit` for each replicated partition this node leads that the image places, with that placement's
  // topic (never suspends).
  using LedPartitionVisitor = std::function<void(const storage::TopicPartition&, cluster::Partition&,
                                                 const cluster::metadata::TopicImage&)>;
  void for_each_led_partition(const LedPartitionVisitor& visit);
  void report_loop();
  void report_leaders();
  // auto.leader.rebalance: hands each partition this node leads back to its preferred replica when that one is in
  // sync (Kafka's preferred leader election, decided here by the leader instead of a controller). `fresh_only`:
  // only the partitions of fresh_partitions_, whatever auto.leader.rebalance says (a new partition's first leader).
  void hand_back_leaderships(bool fresh_only);

  Env env_;
  const BrokerConfig& config_;
  std::string data_dir_;
  cluster::PartitionManager& partitions_;
  TopicTable& topics_;
  std::unique_ptr<cluster::ClusterNode> node_;
  ProduceForwarder forwarder_;
  FiberRef reconciler_;
  FiberRef reporter_;
  Instant next_balance_;             // when the leader reporter next runs hand_back_leaderships()
  // Partitions whose raft group this node joined new (term 0), with when: Kafka's controller makes a new partition's
  // preferred replica its leader, so whichever replica wins the first election hands it over (report_loop) once the
  // preferred one is in sync. Forgotten once handed over or led by the preferred, or after kFreshWindow.
  std::map<storage::TopicPartition, Instant> fresh_partitions_;
  uint64_t reconciled_version_ = 0;  // the ClusterNode::version() the last finished pass followed
  WaitQueue reconciled_;
  bool started_ = false;
  bool stopping_ = false;
  Stats stats_;
  std::function<void(const std::string&)> topic_removed_;
};

}  // namespace sluice::kafka
