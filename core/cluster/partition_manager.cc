#include "core/cluster/partition_manager.h"

#include "core/base/assert.h"

namespace sluice::cluster {

PartitionManager::PartitionManager(Env env, int32_t node_id, storage::LogManager& logs, const MutationSet& mutations)
    : env_(env),
      logs_(logs),
      appended_(env.scheduler),
      deferred_(mutations.has(Mutation::kAckBeforeAppend) ? std::make_unique<DeferredAppends>(env) : nullptr),
      context_{env, node_id, logs, appended_, deferred_.get()} {
  for (const storage::TopicPartition& tp : logs_.partitions()) partitions_.emplace(tp, make_partition(tp));
}

PartitionManager::~PartitionManager() = default;

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

std::shared_ptr<Partition> PartitionManager::find(const storage::TopicPartition& tp) const {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second;
}

std::vector<storage::TopicPartition> PartitionManager::partitions() const {
  std::vector<storage::TopicPartition> out;
  out.reserve(partitions_.size());
  for (const auto& [tp, partition] : partitions_) out.push_back(tp);
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

Status PartitionManager::remove(const storage::TopicPartition& tp) {
  partitions_.erase(tp);  // gone for lookups first; holders see UNKNOWN_TOPIC_OR_PARTITION once the log closes
  return logs_.delete_partition(tp);
}

Status PartitionManager::alter_config(const storage::TopicPartition& tp, const storage::TopicConfig& config) {
  SLUICE_TRY(logs_.alter_config(tp, config));
  if (const std::shared_ptr<Partition> partition = find(tp)) partition->set_config(config);
  return Status();
}

}  // namespace sluice::cluster
