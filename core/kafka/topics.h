// The broker's topics: name, stable id, partition count and config, over the node's partitions
// (cluster::PartitionManager). A topic is the set of its `<topic>-<p>` partition directories; its id lives in each
// one's `partition.metadata`.
//
// Fibers: creations and deletions take turns on one mutex (each suspends on the file system); lookups never
// suspend, and a topic appears only once all its partitions exist.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster/partition_manager.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/kafka/broker_config.h"
#include "core/protocol/wire.h"
#include "core/storage/topic_config.h"

namespace sluice::kafka {

struct TopicInfo {
  std::string name;
  protocol::Uuid id;
  int32_t partitions = 0;
  storage::TopicConfig config;
};

class TopicTable {
 public:
  TopicTable(Env env, cluster::PartitionManager& partitions, const BrokerConfig& config);

  // Builds the table from the partitions the data directory held. A topic whose partitions are not 0..n-1 is
  // reported (kCorruption): the data directory lost a partition. In cluster mode only the topics kept local
  // (BrokerStorageConfig::local_topics): the others come from the cluster metadata (adopt).
  Status load();

  const TopicInfo* find(const std::string& name) const;
  const TopicInfo* find_by_id(const protocol::Uuid& id) const;
  std::vector<const TopicInfo*> all() const;

  // CreateTopics: validates the name (INVALID_TOPIC_EXCEPTION), the count (INVALID_PARTITIONS), that the topic is
  // new (TOPIC_ALREADY_EXISTS) and that this node stays within sluice.max.broker.partitions (POLICY_VIOLATION;
  // __consumer_offsets excepted), then creates every partition; a failure part-way removes what it made.
  Result<const TopicInfo*> create(const std::string& name, int32_t partitions, const storage::TopicConfig& config);
  // Metadata's auto-creation (Produce never creates, as in Kafka): the topic, created with the broker defaults
  // when auto.create.topics.enable allows and the name is valid.
  // nullptr (no error) when it does not exist and may not be created.
  Result<const TopicInfo*> find_or_create(const std::string& name);
  // CreatePartitions on one node: partitions [current, count) made with the topic's config; a failure part-way
  // removes what it made. UNKNOWN_TOPIC_OR_PARTITION when absent, INVALID_PARTITIONS unless count is an increase,
  // POLICY_VIOLATION past sluice.max.broker.partitions.
  Status add_partitions(const std::string& name, int32_t count);
  // One node: OK when `added` more partitions of topic `name` keep it within sluice.max.broker.partitions (always
  // for __consumer_offsets, which the coordinator must be able to make); for validate_only.
  Status check_room(const std::string& name, int64_t added) const;
  // DeleteTopics: every partition's directory goes. UNKNOWN_TOPIC_OR_PARTITION when absent.
  Status remove(const std::string& name);
  // AlterConfigs: the new config for every partition, persisted, effective at once.
  Status alter_config(const std::string& name, const storage::TopicConfig& config);
  // The same with the new config computed by `change` from the one in force, inside the turn that orders changes,
  // so that two concurrent alterations cannot lose each other's keys. `change`'s error is returned and nothing
  // changes; UNKNOWN_TOPIC_OR_PARTITION when absent.
  using ConfigChange = std::function<Result<storage::TopicConfig>(const storage::TopicConfig& current)>;
  Status update_config(const std::string& name, const ConfigChange& change);

  // Cluster mode (kafka::ClusterTopics, the partition reconciler): the metadata image says what exists, on every
  // node, whether or not this node holds a partition of it. Never suspends.
  void adopt(TopicInfo info);
  void forget(const std::string& name);

 private:
  protocol::Uuid new_id();

  Env env_;
  cluster::PartitionManager& partitions_;
  const BrokerConfig& config_;
  std::map<std::string, TopicInfo> topics_;
  Mutex changes_;
};

}  // namespace sluice::kafka
