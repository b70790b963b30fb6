// A Kafka broker over the Env seam: the same object serves real sockets (`sluice serve`) and the
// simulator's network. It owns the log manager (storage duties included), the partitions over it
// (cluster::PartitionManager, through which handlers reach partition data) and the topic table, accepts
// connections, and gives each one a fiber that reads a request, answers it, and reads the next (responses leave
// in request order; one request at a time per connection, as Kafka's muted channels do, bounds a connection to one
// frame of socket.request.max.bytes). In cluster mode (BrokerConfig::cluster_mode()) it also owns a ClusterTopics
// (cluster_topics.h): the node's cluster membership, the partition reconciler and the proposals handlers make.
//
// Connections are bounded in number (max.connections, max.connections.per.ip) and in time (connection.cc).
//
// Fibers: open(), serve(), stop() and close() from the node's fibers. stop() may come from any fiber or a signal
// callback; serve() then returns once every connection fiber has ended.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/cluster/partition_manager.h"
#include "core/env/env.h"
#include "core/env/network.h"
#include "core/env/scheduler.h"
#include "core/group/coordinator.h"
#include "core/kafka/broker_config.h"
#include "core/kafka/cluster_topics.h"
#include "core/kafka/producer_ids.h"
#include "core/kafka/topics.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_manager.h"

namespace sluice::kafka {

class Broker {
 public:
  // Loads the data directory (a partition refusing to load fails the open with its message) and starts the
  // retention and cleaner fibers. `effects` (may be null; outlives the broker) hears of the storage's declared
  // effects (storage/effects.h). `config.mutations` are copied into the storage and group configs.
  static Result<std::unique_ptr<Broker>> open(Env env, const std::string& data_dir, BrokerConfig config,
                                              storage::EffectSink* effects = nullptr);
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Cluster mode: joins the cluster (ClusterTopics::start) before serving; nothing on a single node. Errors: the
  // metadata storage does not open, the raft transport cannot listen.
  Status join_cluster();
  // Accepts until stop(); returns after every connection fiber ended.
  void serve(Listener& listener);
  // Stops accepting and closes every connection (each fiber ends after its current request).
  void stop();
  // Graceful: leaves the cluster (its raft groups stop), flushes every log and writes the clean-shutdown markers.
  // After serve() returned.
  Status close();

  Env env() const { return env_; }
  const BrokerConfig& config() const { return config_; }
  // Storage itself, for the topic table, the group coordinator and tests; handlers reach partition data through
  // partitions().
  storage::LogManager& logs() { return *logs_; }
  // Every partition of this node (produce, fetch, offsets, DeleteRecords, long polls).
  cluster::PartitionManager& partitions() { return *partitions_; }
  TopicTable& topics() { return *topics_; }
  // Producer ids for InitProducerId (each partition keeps its producers' sequence state itself).
  ProducerIdManager& producer_ids() { return *producer_ids_; }
  // Consumer groups and committed offsets (__consumer_offsets).
  group::GroupCoordinator& groups() { return *groups_; }
  // Cluster mode's state and proposals; null on a single node.
  ClusterTopics* cluster() { return cluster_.get(); }
  const ClusterTopics* cluster() const { return cluster_.get(); }
  // The error for a partition this node does not hold: KAFKA_STORAGE_ERROR when its log did not load (offline, as
  // Kafka's ReplicaManager answers), NOT_LEADER_OR_FOLLOWER in cluster mode when the topic has that partition
  // elsewhere (clients refresh their metadata and go to the leader), else UNKNOWN_TOPIC_OR_PARTITION.
  ErrorCode partition_not_here(const storage::TopicPartition& tp) const;

  // Wakes long polls, for whoever appended to storage directly (tests); Partition's appends wake them themselves.
  void notify_appended() { partitions_->notify_appended(); }
  // After stop(): long polls answer at once instead of waiting out their max wait.
  bool stopping() const { return stopping_; }

  uint64_t connections_accepted() const { return next_connection_id_ - 1; }
  size_t open_connections() const { return connections_.size(); }
  // Connections closed by their time bounds (connections.max.idle.ms, request.timeout.ms for a frame's rest), and
  // accepted connections closed at once for max.connections.per.ip (and its overrides).
  uint64_t idle_connections_closed() const { return idle_connections_closed_; }
  uint64_t partial_requests_dropped() const { return partial_requests_dropped_; }
  uint64_t connections_rejected_per_ip() const { return connections_rejected_per_ip_; }
  void count_expiry(bool idle) { ++(idle ? idle_connections_closed_ : partial_requests_dropped_); }
  // Requests read with bytes after their body, which Kafka ignores and so does this broker (handler.h).
  uint64_t requests_with_trailing_bytes() const { return requests_with_trailing_bytes_; }
  void count_trailing_bytes() { ++requests_with_trailing_bytes_; }

 private:
  Broker(Env env, BrokerConfig config, std::unique_ptr<storage::LogManager> logs);
  void run_connection(uint64_t id);
  // max.connections: parks the accept loop while the broker is at the limit (Kafka's acceptor blocks likewise).
  void wait_for_connection_slot();
  void forget_connection(uint64_t id);

  struct Connection {
    std::unique_ptr<Stream> stream;
    FiberRef fiber;
    std::string host;  // counted in connections_per_host_
  };

  Env env_;
  BrokerConfig config_;
  std::unique_ptr<storage::LogManager> logs_;
  std::unique_ptr<cluster::PartitionManager> partitions_;  // after logs_: it holds a reference to them
  std::unique_ptr<TopicTable> topics_;                     // after partitions_: it creates and removes them
  std::unique_ptr<ClusterTopics> cluster_;                 // after topics_: it follows the metadata into both
  std::unique_ptr<ProducerIdManager> producer_ids_;
  std::unique_ptr<group::TopicCatalog> group_topics_;
  std::unique_ptr<group::OffsetsPartitions> group_offsets_;  // cluster mode: __consumer_offsets' replicated partitions
  std::unique_ptr<group::GroupCoordinator> groups_;  // after logs_ and topics_: it holds references to them
  Listener* listener_ = nullptr;  // while serving
  bool stopping_ = false;
  uint64_t next_connection_id_ = 1;
  uint64_t requests_with_trailing_bytes_ = 0;
  uint64_t idle_connections_closed_ = 0;
  uint64_t partial_requests_dropped_ = 0;
  uint64_t connections_rejected_per_ip_ = 0;
  std::map<uint64_t, Connection> connections_;
  std::map<std::string, int32_t> connections_per_host_;
  WaitQueue connection_closed_{env_.scheduler};
};

// Serves one connection until the peer closes it, a request is malformed, or the broker stops.
void serve_connection(Broker& broker, Stream& stream);

}  // namespace sluice::kafka
