// MetadataImage: the cluster metadata as the committed records built it (Kafka's MetadataImage, replayed from the
// metadata group's log): registered brokers, topics by name and by id with their configs and placements, and the
// producer-id blocks handed out so far.
//
// The determinism rule. apply() is a pure function of the image and the record: no clock, no randomness, no
// iteration over unordered containers, no floating point. Every node applies the same committed entries in index
// order, so every node holds equal images (operator==, digest()) at equal applied indexes. Anything random or local
// (a topic id, a placement, the next producer-id block) is decided by the proposer and carried in the record.
//
// Validation happens at apply time, deterministically: a record that may not apply (a CreateTopic of an existing
// name, replicas naming an unregistered broker, a stale producer-id block...) is rejected, leaves the image as it
// was, and its outcome carries the error the proposer answers with (TOPIC_ALREADY_EXISTS...). Because proposers
// may propose from an image that is already stale, this is also what resolves two nodes' concurrent proposals.
//
// Fibers: none; a plain value, owned by whoever applies the metadata group's entries.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"
#include "core/base/status.h"
#include "core/cluster/metadata/records.h"

namespace sluice::cluster::metadata {

inline constexpr int32_t kProducerIdBlockSize = 1000;  // Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE

struct BrokerRegistration {
  int32_t node_id = -1;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
  uint64_t incarnation = 0;
  // Kafka's broker epoch: the index of the record that registered this incarnation.
  Index broker_epoch = 0;
  bool operator==(const BrokerRegistration&) const = default;
};

struct PartitionImage {
  std::vector<int32_t> replicas;  // the preferred leader first; never empty, no duplicates
  // As last reported by RecordLeader: kNoLeader and -1 until the partition's group reports.
  int32_t leader = kNoLeader;
  int32_t leader_epoch = -1;
  int32_t preferred_leader() const { return replicas.front(); }
  bool operator==(const PartitionImage&) const = default;
};

struct TopicImage {
  std::string name;
  TopicId id;
  std::map<std::string, std::string> configs;  // overrides of the broker defaults
  std::vector<PartitionImage> partitions;      // partition p at [p]; never empty
  int32_t partition_count() const { return static_cast<int32_t>(partitions.size()); }
  // Every partition has as many replicas as partition 0 (CreateTopic and CreatePartitions refuse others).
  int32_t replication_factor() const { return static_cast<int32_t>(partitions.front().replicas.size()); }
  bool operator==(const TopicImage&) const = default;
};

struct ProducerIdBlock {
  int32_t node_id = -1;
  int64_t first_producer_id = 0;
  int32_t count = 0;
  int64_t end() const { return first_producer_id + count; }  // one past the last id
  bool operator==(const ProducerIdBlock&) const = default;
};

// What became of one raft entry: its payload's decode status, and when it decoded, one outcome per record.
struct EntryOutcome {
  Status decode;
  std::vector<Status> records;
};

class MetadataImage {
 public:
  // Applies one committed record. The returned outcome is ok when the record applied, otherwise the rejection,
  // whose Kafka error code (Status::protocol_error) is what the proposer answers with; a rejected record changes
  // nothing but applied_index(). The internal records' refusals for which Kafka has codes Sluice's table lacks
  // (DUPLICATE_BROKER_REGISTRATION, STALE_BROKER_EPOCH) carry UNKNOWN_SERVER_ERROR and a kind to branch on:
  // kAlreadyExists when a newer or different registration holds the node id or the producer-id block was taken
  // meanwhile (propose again from the newer image), kNotFound when the node is not registered.
  // REQUIRES index > applied_index().
  Status apply(Index index, const Record& record);
  // The records of one entry in order, each with its own outcome (a rejected one does not undo the others).
  // An empty batch only advances applied_index(). REQUIRES index > applied_index().
  std::vector<Status> apply(Index index, const Batch& batch);
  // The raft host's apply callback: decodes and applies one committed entry. An empty payload is a new leader's
  // no-op; a payload that does not decode is rejected whole (every node holds the same bytes, so every node
  // rejects it). REQUIRES index > applied_index().
  EntryOutcome apply_entry(Index index, std::string_view payload);

  // The index of the last entry applied; 0 before any.
  Index applied_index() const { return applied_index_; }

  const std::map<int32_t, BrokerRegistration>& brokers() const { return brokers_; }
  const BrokerRegistration* broker(int32_t node_id) const;
  // Every registered node id, ascending: the broker list placement takes (placement.h).
  std::vector<int32_t> broker_ids() const;

  // Ordered by name.
  const std::map<std::string, TopicImage, std::less<>>& topics() const { return topics_; }
  const TopicImage* topic(std::string_view name) const;
  const TopicImage* topic(const TopicId& id) const;

  // The first id of the next producer-id block (0 before any: Kafka's first block is [0, 1000)).
  int64_t next_producer_id() const { return next_producer_id_; }
  // Each node's latest block.
  const std::map<int32_t, ProducerIdBlock>& producer_id_blocks() const { return producer_id_blocks_; }

  // A 64-bit hash of everything above, applied index included, independent of the process and the platform:
  // nodes compare it to check they built the same image.
  uint64_t digest() const;
  // Empty when the image's invariants hold, else the first violation (checked after every apply when
  // SLUICE_VERIFY is on).
  std::string invariant_violation() const;

  bool operator==(const MetadataImage&) const = default;

 private:
  Status apply_record(Index index, const Record& record);
  Status apply_register_broker(Index index, const RegisterBroker& record);
  Status apply_create_topic(const CreateTopic& record);
  Status apply_delete_topic(const DeleteTopic& record);
  Status apply_alter_topic_config(const AlterTopicConfig& record);
  Status apply_create_partitions(const CreatePartitions& record);
  Status apply_allocate_producer_ids(const AllocateProducerIds& record);
  Status apply_record_leader(const RecordLeader& record);
  // The topic a record names, or the error its proposer answers with.
  Result<TopicImage*> resolve(const TopicRef& ref);
  // INVALID_REPLICA_ASSIGNMENT unless `replicas` is non-empty, names registered brokers only, each once, and has
  // `replication_factor` entries (when given).
  Status check_replicas(int32_t partition, const std::vector<int32_t>& replicas,
                        std::optional<size_t> replication_factor) const;
  void advance(Index index);

  Index applied_index_ = 0;
  std::map<int32_t, BrokerRegistration> brokers_;
  std::map<std::string, TopicImage, std::less<>> topics_;
  std::map<TopicId, std::string> topic_names_by_id_;
  int64_t next_producer_id_ = 0;
  std::map<int32_t, ProducerIdBlock> producer_id_blocks_;
};

// The AllocateProducerIds record a node proposes for its next block of `count` ids (Kafka's
// ProducerIdControlManager.generateNextProducerId): the block at the image's next producer id. Refused, as the
// apply would refuse it, for an unregistered node (kNotFound) and when the ids are exhausted (UNKNOWN_SERVER_ERROR,
// as Kafka). REQUIRES count >= 1.
Result<AllocateProducerIds> allocate_producer_ids(const MetadataImage& image, int32_t node_id,
                                                  int32_t count = kProducerIdBlockSize);

}  // namespace sluice::cluster::metadata
