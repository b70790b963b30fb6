#include "core/cluster/partition_manager.h"

#include <algorithm>

#include "core/base/assert.h"

namespace sluice::cluster {

PartitionManager::PartitionManager(Env env, int32_t node_id, storage::LogManager& logs, const MutationSet& mutations)
    : env_(env),
      logs_(logs),
      leadership_changed_(env.scheduler),
      deferred_(mutations.has(Mutation::kAckBeforeAppend) ? std::make_unique<DeferredAppends>(env) : nullptr),
      context_{env, node_id, logs, broker_wide_, deferred_.get(), &leadership_changed_, mutations} {
  for (const storage::TopicPartition& tp : logs_.partitions()) partitions_.emplace(tp, make_partition(tp));
  // An offline partition that loads once space returns: requests find it from here on (in cluster mode, the
  // reconciler then makes it a replica of its group: until then it answers as any partition not yet replicated).
  logs_.set_on_loaded_again([this](const storage::TopicPartition& tp) {
    SLUICE_ASSERT(!partitions_.contains(tp));
    partitions_.emplace(tp, make_partition(tp));
    broker_wide_.notify_all();
    leadership_changed_.set();
  });
}

PartitionManager::~PartitionManager() { logs_.set_on_loaded_again({}); }

void PartitionManager::start() {
  if (deferred_ != nullptr) deferred_->start();
}

void PartitionManager::stop() {
  if (deferred_ != nullptr) deferred_->stop();  // what was acknowledged is appended first
}

std::shared_ptr<Partition> PartitionManager::make_partition(const storage::TopicPartition& tp) {
  const storage::TopicConfig* config = logs_.topic_config(tp);
  std::shared_ptr<storage::PartitionLog> log = logs_.find_shared(tp);
  SLUICE_ASSERT(config != nullptr && log != nullptr);
  return std::make_shared<Partition>(context_, tp, *config, logs_.topic_id(tp), std::move(log));
}

std::shared_ptr<Partition> PartitionManager::find(std::string_view topic, int32_t partition) const {
  auto it = partitions_.find(Key{topic, partition});
  SLUICE_ASSERT(it == partitions_.end() || (it->first.partition == partition && it->first.topic == topic));
  return it == partitions_.end() ? nullptr : it->second;
}

std::vector<storage::TopicPartition> PartitionManager::partitions() const {
  std::vector<storage::TopicPartition> out;
  out.reserve(partitions_.size());
  for (const auto& [tp, partition] : partitions_) out.push_back(tp);
  std::ranges::sort(out);
  return out;
}

Result<std::shared_ptr<Partition>> PartitionManager::create(const storage::TopicPartition& tp,
                                                            const storage::TopicConfig& config,
                                                            const std::string& topic_id) {
  SLUICE_TRY(logs_.create_partition(tp, config, topic_id).status());
  // No suspension since the log manager listed it: no request can find the log without its Partition.
  std::shared_ptr<Partition> partition = make_partition(tp);
  partitions_[tp] = partition;
  return partition;
}

Result<std::vector<std::shared_ptr<Partition>>> PartitionManager::create_partitions(
    const std::string& topic, int32_t first, int32_t count, const storage::TopicConfig& config,
    const std::string& topic_id) {
  SLUICE_TRY(logs_.create_partitions(topic, first, count, config, topic_id).status());
  // No suspension since the log manager listed them: no request can find a log without its Partition.
  std::vector<std::shared_ptr<Partition>> made;
  for (int32_t p = first; p < first + count; ++p) {
    std::shared_ptr<Partition> partition = make_partition({topic, p});
    partitions_[{topic, p}] = partition;
    made.push_back(std::move(partition));
  }
  return made;
}

Result<std::shared_ptr<Partition>> PartitionManager::replicate(const storage::TopicPartition& tp, raft::RaftHost& host,
                                                               raft::GroupId group, std::vector<int32_t> replicas) {
  SLUICE_ASSERT(!replicas.empty());
  SLUICE_ASSERT(std::find(replicas.begin(), replicas.end(), context_.node_id) != replicas.end());
  SLUICE_ASSERT(group_storage_.count(tp) == 0);
  const storage::TopicConfig* config = logs_.topic_config(tp);
  std::shared_ptr<storage::PartitionLog> log = logs_.find_shared(tp);
  if (config == nullptr || log == nullptr) {
    return Status(Code::kNotFound, tp.to_string() + " has no log on this node");
  }
  SLUICE_ASSERT(!log->settings().high_watermark_follows_log_end);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PartitionGroupStorage> storage,
                          PartitionGroupStorage::open(env_, *log, context_.node_id));
  raft::Membership membership;
  for (int32_t replica : replicas) membership.voters.push_back(static_cast<raft::NodeId>(replica));
  ReplicaGroup replica_group{.host = &host, .group = group, .replicas = std::move(replicas)};
  replica_group.replica_lag_max = std::chrono::milliseconds(replica_lag_time_max_ms_);
  auto partition =
      std::make_shared<Partition>(context_, tp, *config, logs_.topic_id(tp), std::move(log), std::move(replica_group));
  const raft::CommitMode mode = config->durability == storage::Durability::kPersisted ? raft::CommitMode::kPersisted
                                                                                      : raft::CommitMode::kReplicated;
  std::weak_ptr<Partition> weak = partition;
  storage->partition_raft_log().on_cut_below_high_watermark([weak](int64_t end_offset) {
    if (const std::shared_ptr<Partition> self = weak.lock()) self->on_committed_cut(end_offset);
  });
  raft::GroupHooks hooks = partition->hooks();
  hooks.on_stopped = [this](const Status&) {
    if (on_group_stopped_) on_group_stopped_();
  };
  host.add_group(group, membership, *storage, mode, std::move(hooks));
  group_storage_[tp] = std::move(storage);
  std::shared_ptr<Partition>& slot = partitions_[tp];
  if (slot != nullptr) slot->notify_appended();  // long polls on the replaced object read the new one
  slot = partition;
  return partition;
}

std::vector<storage::TopicPartition> PartitionManager::stopped_for_space() const {
  std::vector<storage::TopicPartition> stopped;
  for (const auto& [tp, storage] : group_storage_) {
    if (storage->stopped_for_space()) stopped.push_back(tp);
  }
  return stopped;
}

Result<std::shared_ptr<Partition>> PartitionManager::restart_group(const storage::TopicPartition& tp) {
  auto storage = group_storage_.find(tp);
  SLUICE_ASSERT(storage != group_storage_.end());
  SLUICE_ASSERT(storage->second->stopped_for_space());
  const std::shared_ptr<Partition> partition = find(tp);
  SLUICE_ASSERT(partition != nullptr);
  SLUICE_ASSERT(partition->replica_group_.has_value());
  const ReplicaGroup group = *partition->replica_group_;
  SLUICE_ASSERT(group.host != nullptr);
  // The host reads the group's storage until the group is out; the log stays open (and findable) throughout.
  group.host->remove_group(group.group);
  if (group_storage_.erase(tp) == 0 || find(tp) != partition) {
    return Status(Code::kNotFound, tp.to_string() + " was removed while its raft group stopped");
  }
  SLUICE_PROBE("partition_manager.group_restarted_after_no_space");
  return replicate(tp, *group.host, group.group, group.replicas);
}

Status PartitionManager::remove(const storage::TopicPartition& tp) {
  auto it = partitions_.find(tp);
  std::optional<ReplicaGroup> group;
  if (it != partitions_.end()) {
    group = it->second->replica_group_;
    // Long polls on it answer at once, as Kafka completes delayed fetches of a partition it stops.
    it->second->notify_appended();
    partitions_.erase(it);  // gone for lookups first; holders see UNKNOWN_TOPIC_OR_PARTITION once the log closes
  }
  if (group.has_value()) {
    SLUICE_ASSERT(group->host != nullptr);
    SLUICE_ASSERT(group_storage_.contains(tp));
    // The host reads the group's storage until the group is out: only then may the log close.
    group->host->remove_group(group->group);
    group_storage_.erase(tp);
  }
  SLUICE_ASSERT(!group_storage_.contains(tp));
  return logs_.delete_partition(tp);
}

Status PartitionManager::alter_config(const storage::TopicPartition& tp, const storage::TopicConfig& config) {
  SLUICE_TRY(logs_.alter_config(tp, config));
  if (const std::shared_ptr<Partition> partition = find(tp)) partition->set_config(config);
  return Status();
}

}  // namespace sluice::cluster
