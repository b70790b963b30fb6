#include "core/kafka/topics.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/kafka/admin_limits.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {

TopicTable::TopicTable(Env env, cluster::PartitionManager& partitions, const BrokerConfig& config)
    : env_(env), partitions_(partitions), config_(config), changes_(env.scheduler) {}

protocol::Uuid TopicTable::new_id() {
  protocol::Uuid id;
  while (id.is_zero()) {
    for (size_t i = 0; i < id.bytes.size(); i += 8) {
      const uint64_t word = env_.random.next_u64();
      for (size_t j = 0; j < 8; ++j) id.bytes[i + j] = static_cast<uint8_t>(word >> (8 * j));
    }
    id.bytes[6] = static_cast<uint8_t>((id.bytes[6] & 0x0f) | 0x40);  // version 4
    id.bytes[8] = static_cast<uint8_t>((id.bytes[8] & 0x3f) | 0x80);  // IETF variant
  }
  return id;
}

Status TopicTable::load() {
  std::map<std::string, std::vector<int32_t>> partitions;
  for (const storage::TopicPartition& tp : partitions_.partitions()) partitions[tp.topic].push_back(tp.partition);
  // A partition whose log did not load is still one of its topic's: requests for it are answered
  // KAFKA_STORAGE_ERROR, Metadata lists it offline.
  for (const storage::TopicPartition& tp : partitions_.offline_partitions()) {
    partitions[tp.topic].push_back(tp.partition);
  }
  for (auto& [name, numbers] : partitions) {
    std::sort(numbers.begin(), numbers.end());
    if (config_.cluster_mode() && !config_.storage.local_topics.contains(name)) continue;
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (numbers[i] != static_cast<int32_t>(i)) {
        return corruption(fmt::format("topic {}: partition {} is missing from the data directory", name, i));
      }
    }
    TopicInfo info;
    info.name = name;
    info.partitions = static_cast<int32_t>(numbers.size());
    std::string topic_id;
    if (const std::shared_ptr<cluster::Partition> first = partitions_.find({name, 0})) {
      info.config = first->config();
      topic_id = first->topic_id();
    } else {
      const storage::LogManager::OfflinePartition* offline = partitions_.offline({name, 0});
      SLUICE_ASSERT(offline != nullptr);  // numbers start at 0
      info.config = offline->config;
      topic_id = offline->topic_id;
    }
    Result<protocol::Uuid> id = protocol::Uuid::parse(topic_id);
    info.id = id.ok() ? *id : new_id();  // a directory made without an id gets one for this run
    topics_.emplace(name, std::move(info));
  }
  return Status();
}

const TopicInfo* TopicTable::find(const std::string& name) const {
  auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : &it->second;
}

const TopicInfo* TopicTable::find_by_id(const protocol::Uuid& id) const {
  for (const auto& [name, info] : topics_) {
    if (info.id == id) return &info;
  }
  return nullptr;
}

std::vector<const TopicInfo*> TopicTable::all() const {
  std::vector<const TopicInfo*> out;
  for (const auto& [name, info] : topics_) out.push_back(&info);
  return out;
}

Result<const TopicInfo*> TopicTable::create(const std::string& name, int32_t partitions,
                                            const storage::TopicConfig& config) {
  SLUICE_TRY(validate_topic_name(name));
  if (partitions < 1) {
    return kafka_error(ErrorCode::kInvalidPartitions, fmt::format("number of partitions {} is below 1", partitions));
  }
  LockGuard lock(changes_);
  if (topics_.count(name) != 0) {
    return kafka_error(ErrorCode::kTopicAlreadyExists, fmt::format("topic '{}' already exists", name));
  }
  SLUICE_TRY(check_room(name, partitions));
  TopicInfo info{name, new_id(), partitions, config};
  SLUICE_TRY(partitions_.create_partitions(name, 0, partitions, config, info.id.to_string()).status());
  env_.log.info("created topic {} ({} partitions, id {})", name, partitions, info.id.to_string());
  return &topics_.emplace(name, std::move(info)).first->second;
}

Result<const TopicInfo*> TopicTable::find_or_create(const std::string& name) {
  if (const TopicInfo* found = find(name)) return found;
  if (!config_.auto_create_topics_enable || is_internal_topic(name)) return nullptr;
  SLUICE_TRY(validate_topic_name(name));
  Result<const TopicInfo*> created = create(name, config_.num_partitions, config_.storage.topic_defaults);
  if (!created.ok() && to_error_code(created.status()) == ErrorCode::kTopicAlreadyExists) return find(name);
  return created;
}

Status TopicTable::add_partitions(const std::string& name, int32_t count) {
  LockGuard lock(changes_);
  auto it = topics_.find(name);
  if (it == topics_.end()) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", name));
  }
  TopicInfo& info = it->second;
  if (count <= info.partitions) {
    return kafka_error(
        ErrorCode::kInvalidPartitions,
        fmt::format("topic '{}' has {} partition(s); {} is not an increase", name, info.partitions, count));
  }
  const int32_t first = info.partitions;
  SLUICE_TRY(check_room(name, count - first));
  SLUICE_TRY(partitions_.create_partitions(name, first, count - first, info.config, info.id.to_string()).status());
  SLUICE_ASSERT(partitions_.find({name, count - 1}) != nullptr);
  info.partitions = count;  // only now: a request that finds a partition number finds its log
  env_.log.info("topic {}: {} partition(s) added, {} now", name, count - first, count);
  return Status();
}

Status TopicTable::check_room(const std::string& name, int64_t added) const {
  if (is_coordinator_topic(name)) return Status();
  int64_t held = 0;
  for (const auto& [topic, info] : topics_) held += info.partitions;
  return check_broker_partitions(config_.node_id, held, added, config_.max_broker_partitions);
}

Status TopicTable::remove(const std::string& name) {
  LockGuard lock(changes_);
  auto it = topics_.find(name);
  if (it == topics_.end()) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", name));
  }
  const int32_t partitions = it->second.partitions;
  topics_.erase(it);  // gone for lookups first: no new request finds a half-deleted topic
  for (int32_t p = 0; p < partitions; ++p) SLUICE_TRY(partitions_.remove({name, p}));
  env_.log.info("deleted topic {}", name);
  return Status();
}

void TopicTable::adopt(TopicInfo info) {
  SLUICE_ASSERT(config_.cluster_mode());
  SLUICE_ASSERT(info.partitions >= 1);
  SLUICE_ASSERT(!info.id.is_zero());
  const std::string name = info.name;
  topics_.insert_or_assign(name, std::move(info));
}

void TopicTable::forget(const std::string& name) {
  SLUICE_ASSERT(config_.cluster_mode());
  topics_.erase(name);
}

Status TopicTable::alter_config(const std::string& name, const storage::TopicConfig& config) {
  return update_config(name, [&config](const storage::TopicConfig&) -> Result<storage::TopicConfig> { return config; });
}

Status TopicTable::update_config(const std::string& name, const ConfigChange& change) {
  LockGuard lock(changes_);
  auto it = topics_.find(name);
  if (it == topics_.end()) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", name));
  }
  SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig config, change(it->second.config));
  for (int32_t p = 0; p < it->second.partitions; ++p) SLUICE_TRY(partitions_.alter_config({name, p}, config));
  it->second.config = config;
  return Status();
}

}  // namespace sluice::kafka
