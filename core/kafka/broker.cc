#include "core/kafka/broker.h"

#include <vector>

#include "core/base/assert.h"
#include "core/group/records.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

// After a failed accept (out of descriptors, say), wait this long instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

// The group coordinator's view of the topic table; it creates __consumer_offsets over the broker's defaults.
class CoordinatorTopics final : public group::TopicCatalog {
 public:
  CoordinatorTopics(TopicTable& topics, const BrokerConfig& config) : topics_(topics), config_(config) {}

  std::optional<Facts> find(const std::string& topic) const override {
    const TopicInfo* info = topics_.find(topic);
    if (info == nullptr) return std::nullopt;
    return Facts{info->partitions, info->config.consumer_offset_durability == storage::Durability::kPersisted};
  }

  Status create(const std::string& topic, int32_t partitions,
                const std::map<std::string, std::string>& overrides) override {
    SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig config,
                            storage::TopicConfig::from_overrides(overrides, config_.storage.topic_defaults));
    return topics_.create(topic, partitions, config).status();
  }

 private:
  TopicTable& topics_;
  const BrokerConfig& config_;
};

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
  group_topics_ = std::make_unique<CoordinatorTopics>(*topics_, config_);
  // The coordinator appends to and replays __consumer_offsets through the log manager itself (cluster/README.md).
  groups_ = std::make_unique<group::GroupCoordinator>(env_, *logs_, *group_topics_, config_.group);
  if (cluster_ != nullptr) {
    // One node coordinates every group until groups are replicated (core/kafka/README.md).
    groups_->set_coordinator_check([this] { return cluster_->group_coordinator() == config_.node_id; });
  }
}

Broker::~Broker() { SLUICE_ASSERT(connections_.empty()); }

Result<std::unique_ptr<Broker>> Broker::open(Env env, const std::string& data_dir, BrokerConfig config,
                                             storage::EffectSink* effects) {
  // The planted bugs reach every part that plants one (core/base/mutations.h).
  config.storage.mutations = config.mutations;
  config.group.mutations = config.mutations;
  if (config.cluster_mode()) {
    // Every partition log is its raft group's, but __consumer_offsets, which stays on the node coordinating every
    // group until groups are replicated (core/kafka/README.md).
    config.storage.replicated_logs = true;
    config.storage.local_topics.insert(std::string(group::kOffsetsTopic));
  }
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
  if (cluster_ == nullptr) return ErrorCode::kUnknownTopicOrPartition;
  const TopicInfo* info = topics_->find(tp.topic);
  const bool elsewhere = info != nullptr && tp.partition >= 0 && tp.partition < info->partitions;
  return elsewhere ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition;
}

void Broker::serve(Listener& listener) {
  listener_ = &listener;
  while (!stopping_) {
    Result<std::unique_ptr<Stream>> accepted = listener.accept();
    if (!accepted.ok()) {
      if (accepted.status().code() == Code::kClosed || stopping_) break;
      env_.log.warn("accept failed: {}", accepted.status().to_string());
      env_.scheduler.sleep_for(kAcceptBackoff);
      continue;
    }
    if (connections_.size() >= static_cast<size_t>(config_.max_connections)) {
      env_.log.warn("refusing a connection from {}: max.connections={} reached",
                    (*accepted)->peer().to_string(), config_.max_connections);
      (*accepted)->close();
      continue;
    }
    const uint64_t id = next_connection_id_++;
    Connection& connection = connections_[id];
    connection.stream = std::move(accepted).value();
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

void Broker::run_connection(uint64_t id) {
  // Forgets the connection (and closes its stream) however the fiber ends, unwinding included.
  struct Forget {
    Broker& broker;
    uint64_t id;
    ~Forget() { broker.connections_.erase(id); }
  } forget{*this, id};
  serve_connection(*this, *connections_.at(id).stream);
}

void Broker::stop() {
  stopping_ = true;
  if (listener_ != nullptr) listener_->close();
  for (auto& [id, connection] : connections_) connection.stream->close();
  notify_appended();  // long polls end early
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
