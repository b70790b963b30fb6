#include "core/cluster/metadata/image.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/base/assert.h"
#include "core/cluster/metadata/topic_identity.h"
#include "core/env/random.h"

namespace sluice::cluster::metadata {
namespace {

// Folds values into 64 bits with the splitmix64 finaliser, in an order and a byte layout fixed here, so that the
// digest is the same on every platform and in every process (std::hash promises neither).
class Hasher {
 public:
  void add(uint64_t value) { state_ = mix64(state_ ^ value) + 0x9e3779b97f4a7c15ULL; }
  void add_signed(int64_t value) { add(static_cast<uint64_t>(value)); }
  void add(std::string_view bytes) {
    add(static_cast<uint64_t>(bytes.size()));
    uint64_t word = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      word |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * (i % 8));
      if (i % 8 == 7 || i + 1 == bytes.size()) {
        add(word);
        word = 0;
      }
    }
  }
  void add(const std::optional<std::string>& value) {
    add(uint64_t{value.has_value()});
    if (value) add(std::string_view(*value));
  }
  void add(const TopicId& id) {
    add(std::string_view(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size()));
  }
  uint64_t value() const { return state_; }

 private:
  uint64_t state_ = 0x5157ce0000000001ULL;
};

void hash_topic(const TopicImage& topic, Hasher& h) {
  h.add(std::string_view(topic.name));
  h.add(topic.id);
  h.add(static_cast<uint64_t>(topic.configs.size()));
  for (const auto& [name, value] : topic.configs) {
    h.add(std::string_view(name));
    h.add(std::string_view(value));
  }
  h.add(static_cast<uint64_t>(topic.partitions.size()));
  for (const PartitionImage& partition : topic.partitions) {
    h.add(static_cast<uint64_t>(partition.replicas.size()));
    for (int32_t replica : partition.replicas) h.add_signed(replica);
    h.add_signed(partition.leader);
    h.add_signed(partition.leader_epoch);
  }
}

std::string check_partition(const TopicImage& topic, size_t p, const std::map<int32_t, BrokerRegistration>& brokers) {
  const PartitionImage& partition = topic.partitions[p];
  if (partition.replicas.size() != topic.partitions.front().replicas.size()) {
    return fmt::format("{}-{} has {} replicas, partition 0 {}", topic.name, p, partition.replicas.size(),
                       topic.partitions.front().replicas.size());
  }
  std::set<int32_t> seen;
  for (int32_t replica : partition.replicas) {
    if (!seen.insert(replica).second) return fmt::format("{}-{} names replica {} twice", topic.name, p, replica);
    if (brokers.count(replica) == 0) return fmt::format("{}-{}: replica {} is not registered", topic.name, p, replica);
  }
  if (partition.leader != kNoLeader && seen.count(partition.leader) == 0) {
    return fmt::format("{}-{}: leader {} is not a replica", topic.name, p, partition.leader);
  }
  if (partition.leader_epoch < -1 || (partition.leader != kNoLeader && partition.leader_epoch < 0)) {
    return fmt::format("{}-{}: leader epoch {}", topic.name, p, partition.leader_epoch);
  }
  return {};
}

}  // namespace

Status MetadataImage::apply(Index index, const Record& record) {
  SLUICE_ASSERT(index > applied_index_);
  Status outcome = apply_record(index, record);
  advance(index);
  return outcome;
}

std::vector<Status> MetadataImage::apply(Index index, const Batch& batch) {
  SLUICE_ASSERT(index > applied_index_);
  std::vector<Status> outcomes;
  outcomes.reserve(batch.records.size());
  for (const Record& record : batch.records) outcomes.push_back(apply_record(index, record));
  advance(index);
  SLUICE_ASSERT(outcomes.size() == batch.records.size());
  return outcomes;
}

EntryOutcome MetadataImage::apply_entry(Index index, std::string_view payload) {
  SLUICE_ASSERT(index > applied_index_);
  EntryOutcome outcome;
  if (payload.empty()) {
    advance(index);
    return outcome;
  }
  Result<Batch> batch = decode_batch(payload);
  if (!batch.ok()) {
    SLUICE_PROBE("metadata_entry_undecodable");
    outcome.decode = batch.status();
    advance(index);
    return outcome;
  }
  outcome.records = apply(index, *batch);
  return outcome;
}

Status MetadataImage::apply_record(Index index, const Record& record) {
  // A rejection must leave the image exactly as it was: checked through the digest when verification is on.
  const bool verify = verify_enabled();
  const uint64_t digest_before = verify ? digest() : 0;
  Status outcome;
  switch (record_type(record)) {
    case RecordType::kRegisterBroker: outcome = apply_register_broker(index, std::get<RegisterBroker>(record)); break;
    case RecordType::kCreateTopic: outcome = apply_create_topic(std::get<CreateTopic>(record)); break;
    case RecordType::kDeleteTopic: outcome = apply_delete_topic(std::get<DeleteTopic>(record)); break;
    case RecordType::kAlterTopicConfig: outcome = apply_alter_topic_config(std::get<AlterTopicConfig>(record)); break;
    case RecordType::kCreatePartitions: outcome = apply_create_partitions(std::get<CreatePartitions>(record)); break;
    case RecordType::kAllocateProducerIds:
      outcome = apply_allocate_producer_ids(std::get<AllocateProducerIds>(record));
      break;
    case RecordType::kRecordLeader: outcome = apply_record_leader(std::get<RecordLeader>(record)); break;
  }
  if (!outcome.ok()) SLUICE_VERIFY(digest() == digest_before);
  return outcome;
}

void MetadataImage::advance(Index index) {
  SLUICE_ASSERT(index > applied_index_);
  applied_index_ = index;
  SLUICE_VERIFY(invariant_violation().empty());
}

const BrokerRegistration* MetadataImage::broker(int32_t node_id) const {
  auto it = brokers_.find(node_id);
  return it == brokers_.end() ? nullptr : &it->second;
}

std::vector<int32_t> MetadataImage::broker_ids() const {
  std::vector<int32_t> ids;
  ids.reserve(brokers_.size());
  for (const auto& [id, registration] : brokers_) ids.push_back(id);
  SLUICE_ASSERT(std::is_sorted(ids.begin(), ids.end()));
  return ids;
}

const TopicImage* MetadataImage::topic(std::string_view name) const {
  auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : &it->second;
}

const TopicImage* MetadataImage::topic(const TopicId& id) const {
  auto it = topic_names_by_id_.find(id);
  if (it == topic_names_by_id_.end()) return nullptr;
  const TopicImage* found = topic(it->second);
  SLUICE_ASSERT(found != nullptr);
  SLUICE_ASSERT(found->id == id);
  return found;
}

uint64_t MetadataImage::digest() const {
  Hasher h;
  h.add(applied_index_);
  h.add(static_cast<uint64_t>(brokers_.size()));
  for (const auto& [id, broker] : brokers_) {
    h.add_signed(broker.node_id);
    h.add(std::string_view(broker.host));
    h.add_signed(broker.port);
    h.add(broker.rack);
    h.add(broker.incarnation);
    h.add(broker.broker_epoch);
  }
  h.add(static_cast<uint64_t>(topics_.size()));
  for (const auto& [name, topic] : topics_) hash_topic(topic, h);
  h.add_signed(next_producer_id_);
  h.add(static_cast<uint64_t>(producer_id_blocks_.size()));
  for (const auto& [node, block] : producer_id_blocks_) {
    h.add_signed(block.node_id);
    h.add_signed(block.first_producer_id);
    h.add_signed(block.count);
  }
  return h.value();
}

std::string MetadataImage::invariant_violation() const {
  for (const auto& [id, broker] : brokers_) {
    if (broker.node_id != id || id < 0) return fmt::format("broker entry {} holds node {}", id, broker.node_id);
    if (broker.broker_epoch == 0 || broker.broker_epoch > applied_index_) {
      return fmt::format("node {}: broker epoch {} at applied index {}", id, broker.broker_epoch, applied_index_);
    }
  }
  if (topic_names_by_id_.size() != topics_.size()) {
    return fmt::format("{} topic ids for {} topics", topic_names_by_id_.size(), topics_.size());
  }
  for (const auto& [name, topic] : topics_) {
    if (topic.name != name) return fmt::format("topic entry {} holds {}", name, topic.name);
    auto by_id = topic_names_by_id_.find(topic.id);
    if (is_reserved_topic_id(topic.id) || by_id == topic_names_by_id_.end() || by_id->second != name) {
      return fmt::format("topic {}: id {} is reserved or not indexed", name, topic.id.to_string());
    }
    if (topic.partitions.empty()) return fmt::format("topic {} has no partitions", name);
    for (size_t p = 0; p < topic.partitions.size(); ++p) {
      std::string violation = check_partition(topic, p, brokers_);
      if (!violation.empty()) return violation;
    }
  }
  // Blocks never overlap, and every one lies below the next block's start.
  std::map<int64_t, ProducerIdBlock> blocks_by_start;
  for (const auto& [node, block] : producer_id_blocks_) {
    if (block.node_id != node || block.count < 1 || block.first_producer_id < 0) {
      return fmt::format("node {}: producer-id block {}+{}", node, block.first_producer_id, block.count);
    }
    if (block.end() > next_producer_id_) {
      return fmt::format("node {}: producer-id block ends at {}, past the next {}", node, block.end(),
                         next_producer_id_);
    }
    if (!blocks_by_start.emplace(block.first_producer_id, block).second) {
      return fmt::format("two producer-id blocks start at {}", block.first_producer_id);
    }
  }
  int64_t previous_end = 0;
  for (const auto& [start, block] : blocks_by_start) {
    if (start < previous_end) return fmt::format("producer-id blocks overlap at {}", start);
    previous_end = block.end();
  }
  return {};
}

}  // namespace sluice::cluster::metadata
