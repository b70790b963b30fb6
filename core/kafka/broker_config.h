// The broker's own settings (Kafka's names where Kafka has one), beside the storage knobs it hands to the log
// manager. `sluice serve` fills it from a properties file (properties.h), --set overrides and flags.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/env/clock.h"
#include "core/env/network.h"
#include "core/group/types.h"
#include "core/storage/broker_storage_config.h"

namespace sluice::kafka {

struct BrokerConfig {
  int32_t node_id = 1;                        // node.id / broker.id
  std::string cluster_id = "sluice-cluster";  // what Metadata v2+ and DescribeCluster report
  std::string advertised_host = "127.0.0.1";  // what Metadata tells clients to connect to
  int32_t advertised_port = 9092;
  bool auto_create_topics_enable = true;                // auto.create.topics.enable
  int32_t num_partitions = 1;                           // num.partitions: auto-created topics and CreateTopics with -1
  int16_t default_replication_factor = 1;               // default.replication.factor (one node: only 1 is possible)
  size_t socket_request_max_bytes = 100 * 1024 * 1024;  // socket.request.max.bytes: the largest request frame
  int32_t max_connections = INT32_MAX;  // max.connections: at the limit, accepting waits for a connection to close
  // fetch.max.bytes: the most record bytes one Fetch returns, whatever its max_bytes asks (KIP-74's first batch
  // excepted), as Kafka's KafkaApis caps it.
  int32_t fetch_max_bytes = 55 * 1024 * 1024;
  // sluice.max.broker.partitions: the most partition replicas one broker holds. CreateTopics, CreatePartitions and
  // auto-creation that would take a broker past it are refused (POLICY_VIOLATION); __consumer_offsets is made
  // regardless. Kafka 3.9 has no such limit (KIP-578 proposed max.broker.partitions).
  int32_t max_broker_partitions = 10000;
  // The most a response body may take; not a setting: the int32 frame size bounds it (handler.h), tests lower it.
  size_t max_response_bytes = SIZE_MAX;
  // group.initial.rebalance.delay.ms, group.{min,max}.session.timeout.ms, offsets.topic.num.partitions,
  // offsets.topic.replication.factor,
  // offsets.retention.minutes, offsets.retention.check.interval.ms, offset.metadata.max.bytes,
  // offsets.topic.segment.bytes
  group::CoordinatorConfig group;
  storage::BrokerStorageConfig storage;
  // Cluster mode (issue 22): controller.quorum.voters, Kafka's "id@host:port,..." (`sluice serve --peers`), every
  // voter of the metadata group with its raft transport address, this node's included. Set together with node.id;
  // empty: a single node, exactly as before.
  std::map<int32_t, Address> controller_quorum_voters;
  // auto.leader.rebalance.enable and leader.imbalance.check.interval.seconds (cluster mode): every interval, a
  // node leading a partition whose preferred replica (its first) is in sync hands the leadership back to it.
  bool auto_leader_rebalance_enable = true;
  Duration leader_imbalance_check_interval = std::chrono::seconds(300);
  // The raft host's tick in cluster mode (elections take 10-20 ticks); not a Kafka setting: tests shorten it.
  Duration raft_tick = std::chrono::milliseconds(100);
  bool cluster_mode() const { return !controller_quorum_voters.empty(); }
  // Stalled and greedy clients (connection.cc, broker.cc): connections.max.idle.ms (nullopt: -1, never), and
  // request.timeout.ms, which here bounds how long the rest of a request frame may take once the broker waits for
  // it. max.connections.per.ip and max.connections.per.ip.overrides ("host:count,..."): a connection from a host
  // at its limit is accepted and closed at once. Hosts are peers' addresses as accepted (IP literals; simulated
  // node names), never resolved.
  std::optional<Duration> connections_max_idle = std::chrono::minutes(10);
  Duration request_timeout = std::chrono::seconds(30);
  int32_t max_connections_per_ip = INT32_MAX;
  std::map<std::string, int32_t> max_connections_per_ip_overrides;
  int32_t max_connections_for(const std::string& host) const {
    auto it = max_connections_per_ip_overrides.find(host);
    return it == max_connections_per_ip_overrides.end() ? max_connections_per_ip : it->second;
  }
  // sluice.mutations: known bugs planted for the simulator's checkers (core/base/mutations.h). Broker::open copies
  // them into `storage` and `group`; `sluice serve` refuses to start with any.
  MutationSet mutations;
  static constexpr std::string_view kMutationsKey = "sluice.mutations";

  // Parses Kafka-named settings (a properties file's key → value); storage keys go to BrokerStorageConfig.
  // Unknown keys fail with INVALID_CONFIG naming them (and the closest known key, or the broker synonym of a topic
  // key); so do bad values, and node.id and broker.id set to different ids. controller.quorum.voters needs node.id,
  // and node.id must be one of them (ids >= 1, each once, host:port addresses).
  static Result<BrokerConfig> from_map(const std::map<std::string, std::string>& settings);
  static bool is_broker_key(std::string_view name);
};

// Where the process listens, what it advertises and where it stores: Kafka's `listeners`, `advertised.listeners`
// and `log.dirs` (else `log.dir`). They belong to the serving process rather than the broker core; the serve
// command's flags win over them.
struct ServerSettings {
  std::optional<std::string> listen;      // "host:port" of listeners=PLAINTEXT://host:port
  std::optional<std::string> advertised;  // "host:port" of advertised.listeners
  std::optional<std::string> data_dir;
};

// Removes the ServerSettings keys from `settings` and parses them. One PLAINTEXT listener only (no SSL/SASL, no
// second listener); an empty listener host (PLAINTEXT://:9092) binds every interface, as 0.0.0.0; an empty
// advertised host is refused; log.dirs names one directory. Errors carry INVALID_CONFIG and name the key.
Result<ServerSettings> take_server_settings(std::map<std::string, std::string>& settings);

// Parses controller.quorum.voters ("1@127.0.0.1:9192,2@127.0.0.1:9193"): INVALID_CONFIG naming the entry for a
// malformed one, an id below 1, an id given twice or an address without a port.
Result<std::map<int32_t, Address>> parse_quorum_voters(std::string_view text);

}  // namespace sluice::kafka
