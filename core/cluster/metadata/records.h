// The cluster metadata records: what the metadata raft group (group 0, Kafka's __cluster_metadata) commits, one
// batch per raft entry, and their binary encoding. Every node applies the same records in the same order to its
// MetadataImage (image.h); README.md says what each record means and which rule decides its outcome.
//
// Encoding. Integers are fixed-width big-endian, as on Kafka's wire; there is exactly one encoding of each value, so
// decode(bytes) succeeding implies encode(decoded) == bytes.
//   batch      := u8 format (kBatchFormat) | u32 record count | record*
//   record     := u8 type (RecordType) | u8 version | u32 body length | body
//   string     := u32 length | bytes            optional<T> := u8 0 | u8 1 T            uuid := 16 bytes
//   vector<T>  := u32 count | T*                map<string, string> := vector of pairs, names strictly increasing
// Bodies (version 0), in field order:
//   RegisterBroker      i32 node_id, string host, i32 port, optional<string> rack, u64 incarnation
//   CreateTopic         string name, uuid topic_id, map configs, vector<PartitionReplicas> partitions
//   DeleteTopic         TopicRef topic
//   AlterTopicConfig    TopicRef topic, vector<(string name, optional<string> value)> changes
//   CreatePartitions    TopicRef topic, vector<PartitionReplicas> partitions
//   AllocateProducerIds i32 node_id, i64 first_producer_id, i32 count
//   RecordLeader        TopicRef topic, i32 partition, i32 leader, i32 leader_epoch
//   TopicRef := string name, uuid id              PartitionReplicas := i32 partition, vector<i32> replicas
//
// Decoding takes untrusted bytes and never asserts: a truncation, a trailing byte, an unknown record type, a flag
// byte other than 0 or 1, or config names out of order is kCorruption; a format or record version this build does
// not know is kNotSupported. Decoding checks structure only; what a record may do is the image's to decide.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/result.h"
#include "core/protocol/wire.h"

namespace sluice::cluster::metadata {

using Index = uint64_t;         // an index of the metadata group's raft log (raft::Index); entries start at 1
using TopicId = protocol::Uuid;  // as core/kafka's TopicTable keeps it; its text form is Kafka's base64

inline constexpr int32_t kNoLeader = -1;
inline constexpr uint8_t kBatchFormat = 1;
inline constexpr uint8_t kRecordVersion = 0;  // every record type's only version so far

// A broker (node) announces itself: its Kafka endpoint and rack. `incarnation` grows at every start of the node's
// process (the metadata group's hard-state incarnation), which is how a restart is told from an impostor.
struct RegisterBroker {
  int32_t node_id = -1;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
  uint64_t incarnation = 0;
  bool operator==(const RegisterBroker&) const = default;
};

// One partition's placement: node ids, the preferred leader first.
struct PartitionReplicas {
  int32_t partition = 0;
  std::vector<int32_t> replicas;
  bool operator==(const PartitionReplicas&) const = default;
};

// Names a topic. By id when `id` is not zero, and then a non-empty `name` must be that topic's (so a record
// proposed against a topic that was since deleted and re-created under the same name misses it); by name
// otherwise.
struct TopicRef {
  std::string name;
  TopicId id;
  bool operator==(const TopicRef&) const = default;
};

// Kafka's TopicRecord and PartitionRecords and the creation's ConfigRecords, as one record: a topic appears whole.
// The proposer draws `topic_id` (new_topic_id) and the placement (placement.h), so applying draws nothing.
struct CreateTopic {
  std::string name;
  TopicId topic_id;
  std::map<std::string, std::string> configs;  // only the overrides of the broker defaults, by Kafka config name
  std::vector<PartitionReplicas> partitions;   // partitions 0..n-1, in order
  bool operator==(const CreateTopic&) const = default;
};

// Kafka's RemoveTopicRecord.
struct DeleteTopic {
  TopicRef topic;
  bool operator==(const DeleteTopic&) const = default;
};

// One config override set (`value`) or deleted (nullopt: back to the broker default), Kafka's ConfigRecord.
struct ConfigChange {
  std::string name;
  std::optional<std::string> value;
  bool operator==(const ConfigChange&) const = default;
};

// Changes applied in order, all or none.
struct AlterTopicConfig {
  TopicRef topic;
  std::vector<ConfigChange> changes;
  bool operator==(const AlterTopicConfig&) const = default;
};

// Kafka's PartitionRecords of CreatePartitions: partitions numbered on from the topic's current count.
struct CreatePartitions {
  TopicRef topic;
  std::vector<PartitionReplicas> partitions;
  bool operator==(const CreatePartitions&) const = default;
};

// Kafka's ProducerIdsRecord: ids [first_producer_id, first_producer_id + count) belong to `node_id`. The block
// must start at the image's next producer id, which is what makes blocks contiguous and never overlapping.
struct AllocateProducerIds {
  int32_t node_id = -1;
  int64_t first_producer_id = 0;
  int32_t count = 0;
  bool operator==(const AllocateProducerIds&) const = default;
};

// A partition's raft group reports its leader (kNoLeader: none) in `leader_epoch` (the group's term), for
// Metadata answers. Reporting only: leadership itself is the partition group's.
struct RecordLeader {
  TopicRef topic;
  int32_t partition = 0;
  int32_t leader = kNoLeader;
  int32_t leader_epoch = 0;
  bool operator==(const RecordLeader&) const = default;
};

// The alternatives' order is the RecordType order (record_type relies on it, and a static_assert checks it).
using Record = std::variant<RegisterBroker, CreateTopic, DeleteTopic, AlterTopicConfig, CreatePartitions,
                            AllocateProducerIds, RecordLeader>;

enum class RecordType : uint8_t {
  kRegisterBroker = 1,
  kCreateTopic = 2,
  kDeleteTopic = 3,
  kAlterTopicConfig = 4,
  kCreatePartitions = 5,
  kAllocateProducerIds = 6,
  kRecordLeader = 7,
};
inline constexpr uint8_t kMaxRecordType = 7;

RecordType record_type(const Record& record);
std::string_view record_type_name(RecordType type);  // "CreateTopic"

// Several records committed as one raft entry. Each still has its own outcome: a batch is a unit of transport,
// not a transaction (image.h).
struct Batch {
  std::vector<Record> records;
  bool operator==(const Batch&) const = default;
};

// The raft entry's payload. Never empty (the empty payload is a new leader's no-op entry).
std::string encode_batch(const Batch& batch);
// A batch of one.
std::string encode_record(const Record& record);
// See the file comment for what is refused.
Result<Batch> decode_batch(std::string_view payload);

}  // namespace sluice::cluster::metadata
