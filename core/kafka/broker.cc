#include "core/kafka/broker.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/group/records.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

// After a failed accept (out of descriptors, say), wait this long instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

// Kafka's offsets.commit.timeout.ms default: how long a coordinator's write waits for the quorum.
constexpr auto kOffsetsCommitTimeout = std::chrono::seconds(5);
// How long creating __consumer_offsets through the cluster metadata may take.
constexpr auto kOffsetsTopicCreation = std::chrono::seconds(10);

// The group coordinator's view of the topic table; it creates __consumer_offsets over the broker's defaults, in
// cluster mode through the cluster metadata with offsets.topic.replication.factor replicas (capped at the
// registered brokers).
class CoordinatorTopics final : public group::TopicCatalog {
 public:
  CoordinatorTopics(Env env, TopicTable& topics, const BrokerConfig& config, ClusterTopics* cluster)
      : env_(env), topics_(topics), config_(config), cluster_(cluster) {}

  std::optional<Facts> find(const std::string& topic) const override {
    const TopicInfo* info = topics_.find(topic);
    if (info == nullptr) return std::nullopt;
    return Facts{info->partitions, info->config.consumer_offset_durability == storage::Durability::kPersisted};
  }

  Status create(const std::string& topic, int32_t partitions,
                const std::map<std::string, std::string>& overrides) override {
    if (cluster_ == nullptr) {
      SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig config,
                              storage::TopicConfig::from_overrides(overrides, config_.storage.topic_defaults));
      return topics_.create(topic, partitions, config).status();
    }
    // Compacted on every replica, as on one node: the cleaner keeps a replicated log's batch offsets
    // (core/cluster/README.md, "Retention, DeleteRecords and compaction on replicas").
    SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig config,
                            storage::TopicConfig::from_overrides(overrides, config_.storage.topic_defaults));
    const size_t brokers = cluster_->image().broker_ids().size();
    if (!cluster_->caught_up() || brokers == 0) {
      return kafka_error(ErrorCode::kCoordinatorNotAvailable, "this node has not caught up with the cluster yet");
    }
    const auto wanted = static_cast<size_t>(std::max<int16_t>(config_.group.offsets_topic_replication_factor, 1));
    const auto replicas = static_cast<int16_t>(std::min(brokers, wanted));
    SLUICE_ASSIGN_OR_RETURN(cluster::metadata::CreateTopic record,
                            cluster_->plan_topic(topic, partitions, replicas, config.overrides()));
    return cluster_->create_topic(record, env_.clock.now() + kOffsetsTopicCreation);
  }

 private:
  Env env_;
  TopicTable& topics_;
  const BrokerConfig& config_;
  ClusterTopics* cluster_;
};

// Cluster mode: the coordinator's writes go through the leader's Partition and wait for the quorum (acks=all).
class ReplicatedOffsets final : public group::OffsetsPartitions {
 public:
  ReplicatedOffsets(Env env, cluster::PartitionManager& partitions, MutationSet mutations)
      : env_(env), partitions_(partitions), mutations_(mutations) {}

  std::optional<int32_t> leader_epoch(int32_t partition) const override {
    const std::shared_ptr<cluster::Partition> p = partitions_.find(tp(partition));
    if (p == nullptr || !p->replicated() || !p->is_leader()) return std::nullopt;
    return p->leader_epoch();
  }

  Result<storage::AppendResult> append(int32_t partition, int32_t epoch, ByteView batch) override {
    const std::shared_ptr<cluster::Partition> p = partitions_.find(tp(partition));
    if (p == nullptr) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp(partition).to_string());
    if (!p->is_leader() || p->leader_epoch() != epoch) {
      return kafka_error(ErrorCode::kNotLeaderOrFollower,
                         fmt::format("{} is not led here in epoch {}", tp(partition).to_string(), epoch));
    }
    std::vector<storage::RecordError> record_errors;
    SLUICE_ASSIGN_OR_RETURN(cluster::Appended appended,
                            p->append_records(batch, cluster::Acks::kAll, &record_errors));
    // Planted bug: answered at the leader's append, which a failover may cut.
    if (mutations_.has(Mutation::kCoordinatorCommitBeforeQuorum)) return appended.result;
    SLUICE_TRY(p->wait_acknowledged(appended.end_offset(), cluster::Acks::kAll,
                                    env_.clock.now() + kOffsetsCommitTimeout, appended.leader_epoch));
    if (appended.leader_epoch != epoch) {
      // Committed, but in an epoch whose load may not have seen it: the caller must not apply it.
      return kafka_error(ErrorCode::kNotLeaderOrFollower, "leadership moved during the append");
    }
    return appended.result;
  }

 private:
  static storage::TopicPartition tp(int32_t partition) { return {std::string(group::kOffsetsTopic), partition}; }

  Env env_;
  cluster::PartitionManager& partitions_;
  MutationSet mutations_;
};

// The address a connection counts against for max.connections.per.ip: its peer's host, with an IPv4 address
// that reached a dual-stack listener as ::ffff:a.b.c.d counted as a.b.c.d (Java sees an Inet4Address there).
std::string peer_host(const Address& peer) {
  constexpr std::string_view kMapped = "::ffff:";
  const std::string_view host = peer.host;
  if (host.size() > kMapped.size() && host.substr(0, kMapped.size()) == kMapped &&
      host.find('.') != std::string_view::npos) {
    return std::string(host.substr(kMapped.size()));
  }
  return peer.host;
}

}  // namespace

Broker::Broker(Env env, BrokerConfig config, std::unique_ptr<storage::LogManager> logs)
    : env_(env), config_(std::move(config)), logs_(std::move(logs)) {
  partitions_ = std::make_unique<cluster::PartitionManager>(env_, config_.node_id, *logs_, config_.mutations);
  topics_ = std::make_unique<TopicTable>(env_, *partitions_, config_);
  if (config_.cluster_mode()) {
    cluster_ = std::make_unique<ClusterTopics>(env_, config_, logs_->data_dir(), *partitions_, *topics_);
    // Blocks from the metadata, so that ids are unique across the nodes (Kafka's AllocateProducerIds).
    producer_ids_ = std::make_unique<ProducerIdManager>(
        env_, [this] { return cluster_->allocate_producer_ids(env_.clock.now() + std::chrono::seconds(10)); });
  } else {
    producer_ids_ = std::make_unique<ProducerIdManager>(env_, logs_->data_dir());
  }
  group_topics_ = std::make_unique<CoordinatorTopics>(env_, *topics_, config_, cluster_.get());
  // On one node the coordinator appends to and replays __consumer_offsets through the log manager itself
  // (cluster/README.md); on a cluster it writes through the partitions it leads and coordinates their groups.
  groups_ = std::make_unique<group::GroupCoordinator>(env_, *logs_, *group_topics_, config_.group);
  if (cluster_ != nullptr) {
    group_offsets_ = std::make_unique<ReplicatedOffsets>(env_, *partitions_, config_.mutations);
    groups_->set_replicated(group_offsets_.get());
    // Kafka's onPartitionsDeleted on every coordinator: a topic deleted through any node leaves the groups each
    // node coordinates once its reconciler sees the deletion.
    cluster_->set_topic_removed_observer(
        [this](const std::string& topic) { groups_->remove_offsets_of_topic_in_background(topic); });
  }
}

Broker::~Broker() { SLUICE_ASSERT(connections_.empty()); }

Result<std::unique_ptr<Broker>> Broker::open(Env env, const std::string& data_dir, BrokerConfig config,
                                             storage::EffectSink* effects) {
  // The planted bugs reach every part that plants one (core/base/mutations.h).
  config.storage.mutations = config.mutations;
  config.group.mutations = config.mutations;
  // Every partition log is its raft group's, __consumer_offsets' too.
  if (config.cluster_mode()) config.storage.replicated_logs = true;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<storage::LogManager> logs,
                          storage::LogManager::open(env, data_dir, config.storage, effects));
  std::unique_ptr<Broker> broker(new Broker(env, std::move(config), std::move(logs)));
  SLUICE_TRY(broker->topics_->load());
  broker->logs_->start();
  broker->groups_->start();  // replays __consumer_offsets in the background (COORDINATOR_LOAD_IN_PROGRESS until done)
  broker->partitions_->start();
  env.log.info("broker {} open: {} topics in {}", broker->config_.node_id, broker->topics_->all().size(), data_dir);
  return broker;
}

Status Broker::join_cluster() {
  if (cluster_ == nullptr) return Status();
  return cluster_->start();
}

ErrorCode Broker::partition_not_here(const storage::TopicPartition& tp) const {
  if (partitions_->offline(tp) != nullptr) return ErrorCode::kKafkaStorageError;  // its log did not load
  if (cluster_ == nullptr) return ErrorCode::kUnknownTopicOrPartition;
  const TopicInfo* info = topics_->find(tp.topic);
  const bool elsewhere = info != nullptr && tp.partition >= 0 && tp.partition < info->partitions;
  return elsewhere ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition;
}

void Broker::serve(Listener& listener) {
  listener_ = &listener;
  while (!stopping_) {
    wait_for_connection_slot();
    if (stopping_) break;
    Result<std::unique_ptr<Stream>> accepted = listener.accept();
    if (!accepted.ok()) {
      if (accepted.status().code() == Code::kClosed || stopping_) break;
      env_.log.warn("accept failed: {}", accepted.status().to_string());
      env_.scheduler.sleep_for(kAcceptBackoff);
      continue;
    }
    // Kafka's ConnectionQuotas: the limit of the peer's address, counted over its open connections.
    std::string host = peer_host((*accepted)->peer());
    const int32_t limit = config_.max_connections_for(host);
    if (connections_per_host_[host] >= limit) {
      env_.log.info(
          "rejected a connection from {}: that address already has the configured maximum of {} "
          "connections (max.connections.per.ip)",
          host, limit);
      ++connections_rejected_per_ip_;
      if (connections_per_host_[host] == 0) connections_per_host_.erase(host);
      (*accepted)->close();
      continue;
    }
    ++connections_per_host_[host];
    const uint64_t id = next_connection_id_++;
    Connection& connection = connections_[id];
    connection.stream = std::move(accepted).value();
    connection.host = std::move(host);
    env_.log.debug("accepted connection {} from {}", id, connection.stream->peer().to_string());
    connection.fiber = env_.scheduler.spawn("conn." + std::to_string(id), [this, id] { run_connection(id); });
  }
  listener_ = nullptr;
  std::vector<FiberRef> fibers;
  for (auto& [id, connection] : connections_) {
    connection.stream->close();
    fibers.push_back(connection.fiber);
  }
  for (const FiberRef& fiber : fibers) env_.scheduler.join(fiber);
  SLUICE_ASSERT(connections_.empty());
}

void Broker::wait_for_connection_slot() {
  const auto limit = static_cast<size_t>(config_.max_connections);
  if (connections_.size() < limit) return;
  env_.log.warn("max.connections={} reached: the next connection is accepted when one closes", limit);
  while (!stopping_ && connections_.size() >= limit) connection_closed_.wait();
}

void Broker::run_connection(uint64_t id) {
  // Forgets the connection (and closes its stream) however the fiber ends, unwinding included.
  struct Forget {
    Broker& broker;
    uint64_t id;
    ~Forget() { broker.forget_connection(id); }
  } forget{*this, id};
  serve_connection(*this, *connections_.at(id).stream);
}

void Broker::forget_connection(uint64_t id) {
  auto it = connections_.find(id);
  SLUICE_ASSERT(it != connections_.end());
  auto host = connections_per_host_.find(it->second.host);
  SLUICE_ASSERT(host != connections_per_host_.end() && host->second > 0);
  if (--host->second == 0) connections_per_host_.erase(host);
  connections_.erase(it);
  connection_closed_.notify_all();
}

void Broker::stop() {
  stopping_ = true;
  if (listener_ != nullptr) listener_->close();
  for (auto& [id, connection] : connections_) connection.stream->close();
  notify_appended();  // long polls end early
  connection_closed_.notify_all();  // an accept loop parked at max.connections ends
  groups_->shutdown();      // parked JoinGroup/SyncGroup requests are answered, so their connections can end
}

Status Broker::close() {
  SLUICE_ASSERT(connections_.empty());
  // The raft host reads and writes the partition logs until it stops: the cluster goes before the logs close.
  if (cluster_ != nullptr) cluster_->shutdown();
  partitions_->stop();  // what the ack-before-append mutation acknowledged is appended first
  groups_->stop();
  return logs_->close();
}

}  // namespace sluice::kafka
