// Shared by the cluster metadata tests: random records (every type, every field drawn) and small builders.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cluster/metadata/records.h"
#include "core/env/random.h"
#include "core/protocol/error_codes.h"

namespace sluice::cluster::metadata::testing {

inline std::string random_text(Random& rng, size_t max_length) {
  std::string s(rng.uniform(max_length + 1), '\0');
  for (char& c : s) c = static_cast<char>(rng.uniform(256));  // any byte: the codec carries bytes, not text
  return s;
}

inline TopicId random_id(Random& rng) {
  TopicId id;
  if (rng.chance(0.2)) return id;  // zero: by name
  for (uint8_t& byte : id.bytes) byte = static_cast<uint8_t>(rng.uniform(256));
  return id;
}

inline int32_t random_i32(Random& rng) { return static_cast<int32_t>(static_cast<uint32_t>(rng.next_u64())); }

inline TopicRef random_ref(Random& rng) { return TopicRef{random_text(rng, 20), random_id(rng)}; }

inline std::vector<PartitionReplicas> random_partitions(Random& rng) {
  std::vector<PartitionReplicas> partitions(rng.uniform(5));
  for (PartitionReplicas& p : partitions) {
    p.partition = random_i32(rng);
    p.replicas.resize(rng.uniform(5));
    for (int32_t& replica : p.replicas) replica = random_i32(rng);
  }
  return partitions;
}

inline std::optional<std::string> random_optional(Random& rng, size_t max_length) {
  if (rng.chance(0.5)) return std::nullopt;
  return random_text(rng, max_length);
}

// One record of the given type with every field drawn over its whole range.
inline Record random_record(Random& rng, RecordType type) {
  switch (type) {
    case RecordType::kRegisterBroker:
      return RegisterBroker{random_i32(rng), random_text(rng, 30), random_i32(rng), random_optional(rng, 10),
                            rng.next_u64()};
    case RecordType::kCreateTopic: {
      CreateTopic r{random_text(rng, 40), random_id(rng), {}, random_partitions(rng)};
      for (uint64_t i = rng.uniform(4); i > 0; --i) r.configs[random_text(rng, 12)] = random_text(rng, 30);
      return r;
    }
    case RecordType::kDeleteTopic: return DeleteTopic{random_ref(rng)};
    case RecordType::kAlterTopicConfig: {
      AlterTopicConfig r{random_ref(rng), {}};
      for (uint64_t i = rng.uniform(4); i > 0; --i) {
        r.changes.push_back(ConfigChange{random_text(rng, 12), random_optional(rng, 30)});
      }
      return r;
    }
    case RecordType::kCreatePartitions: return CreatePartitions{random_ref(rng), random_partitions(rng)};
    case RecordType::kAllocateProducerIds:
      return AllocateProducerIds{random_i32(rng), static_cast<int64_t>(rng.next_u64()), random_i32(rng)};
    case RecordType::kRecordLeader:
      return RecordLeader{random_ref(rng), random_i32(rng), random_i32(rng), random_i32(rng)};
  }
  return DeleteTopic{};
}

inline Record random_record(Random& rng) {
  return random_record(rng, static_cast<RecordType>(1 + rng.uniform(kMaxRecordType)));
}

inline Batch random_batch(Random& rng, size_t max_records) {
  Batch batch;
  for (uint64_t i = rng.uniform(max_records + 1); i > 0; --i) batch.records.push_back(random_record(rng));
  return batch;
}

inline RegisterBroker broker_record(int32_t node_id, uint64_t incarnation = 1) {
  return RegisterBroker{node_id, "node-" + std::to_string(node_id), 9092, std::nullopt, incarnation};
}

inline TopicId topic_id(uint8_t seed) {
  TopicId id;
  id.bytes[0] = seed;
  id.bytes[6] = 0x40;
  id.bytes[8] = 0x80;
  return id;
}

// A topic whose partition p has the replicas `replicas[p]`.
inline CreateTopic topic_record(std::string name, TopicId id, const std::vector<std::vector<int32_t>>& replicas) {
  CreateTopic r{std::move(name), id, {}, {}};
  for (size_t p = 0; p < replicas.size(); ++p) r.partitions.push_back({static_cast<int32_t>(p), replicas[p]});
  return r;
}

inline ErrorCode error_of(const Status& status) { return to_error_code(status); }

}  // namespace sluice::cluster::metadata::testing
