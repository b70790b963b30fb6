#include "core/client/client_core.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/client/requests.h"

namespace sluice::client::detail {

ClientCore::ClientCore(Env env, ClientConfig config)
    : env_(env), config_(std::move(config)), refresh_mutex_(env.scheduler) {
  SLUICE_ASSERT(!config_.bootstrap.empty());
  SLUICE_ASSERT(config_.read_attempts >= 1);
}

ClientCore::~ClientCore() { close(); }

void ClientCore::close() {
  closed_ = true;
  std::map<Address, std::shared_ptr<Connection>> connections = std::move(connections_);
  connections_.clear();
  for (auto& [address, connection] : connections) connection->close();
}

// ---- Connections ----

void ClientCore::remember_broker(const BrokerInfo& broker) {
  if (broker.node_id >= 0 && broker.address.port != 0) brokers_[broker.node_id] = broker.address;
}

std::shared_ptr<Connection> ClientCore::open_connection(const Address& address) const {
  auto it = connections_.find(address);
  return it == connections_.end() || it->second->broken() ? nullptr : it->second;
}

Result<std::shared_ptr<Connection>> ClientCore::connection(int32_t node_id) {
  if (node_id < 0) return any_connection();
  auto broker = brokers_.find(node_id);
  if (broker == brokers_.end()) {
    // Unknown so far: the metadata names every broker (and FindCoordinator the coordinators).
    SLUICE_TRY(refresh_brokers());
    broker = brokers_.find(node_id);
    if (broker == brokers_.end()) return not_sent(fmt::format("broker {} is not in the metadata", node_id));
  }
  if (node_id == last_node_) {
    std::shared_ptr<Connection> last = last_connection_.lock();
    if (last != nullptr && !last->broken() && last->address() == broker->second) return last;
  }
  const Address address = broker->second;  // a copy: the map may change while connecting
  Result<std::shared_ptr<Connection>> connected = connect_to(address);
  if (connected.ok()) {
    last_node_ = node_id;
    last_connection_ = *connected;
  }
  return connected;
}

Result<std::shared_ptr<Connection>> ClientCore::any_connection() {
  for (const auto& [address, connection] : connections_) {
    if (!connection->broken()) return connection;
  }
  std::vector<Address> candidates = config_.bootstrap;
  for (const auto& [id, address] : brokers_) {
    if (std::find(candidates.begin(), candidates.end(), address) == candidates.end()) candidates.push_back(address);
  }
  Status last;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Address& address = candidates[(next_candidate_ + i) % candidates.size()];
    Result<std::shared_ptr<Connection>> connection = connect_to(address);
    if (connection.ok()) return connection;
    last = connection.status();
  }
  ++next_candidate_;  // the next attempt starts elsewhere
  return last;
}

Result<std::shared_ptr<Connection>> ClientCore::connect_to(const Address& address) {
  while (true) {
    if (closed_) return not_sent("the client is closed");
    if (std::shared_ptr<Connection> open = open_connection(address)) return open;
    auto opening = opening_.find(address);
    if (opening == opening_.end()) break;
    const std::shared_ptr<Event> done = opening->second;
    done->wait();  // another fiber connects: use its connection, or its failure
    if (std::shared_ptr<Connection> open = open_connection(address)) return open;
    return not_sent(fmt::format("connecting to {} failed", address.to_string()));
  }
  const std::shared_ptr<Event> done = std::make_shared<Event>(env_.scheduler);
  opening_[address] = done;
  struct Finish {  // also when a node kill unwinds the connect
    ClientCore& core;
    const Address& address;
    const std::shared_ptr<Event>& done;
    ~Finish() {
      core.opening_.erase(address);
      done->set();
    }
  } finish{*this, address, done};
  ConnectionOptions options{config_.client_id, config_.connect_timeout, config_.request_timeout};
  Result<std::shared_ptr<Connection>> opened = Connection::open(env_, address, options);
  if (!opened.ok()) {
    env_.log.debug("client: {}", opened.status().to_string());
    return opened;
  }
  if (closed_) {
    (*opened)->close();
    return not_sent("the client is closed");
  }
  connections_[address] = *opened;
  return opened;
}

Result<Bytes> ClientCore::round_trip(int32_t node_id, protocol::ApiKey api, int16_t version, ByteView body,
                                     bool expect_response, Duration timeout) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Connection> conn, connection(node_id));
  CallPtr call = conn->start(api, version, body, timeout, expect_response);
  return wait_for(*call);
}

// ---- Retries ----

Duration ClientCore::backoff(int attempt) {
  SLUICE_ASSERT(attempt >= 1);
  Duration base = config_.retry_backoff;
  for (int i = 1; i < attempt && base < config_.retry_backoff_max; ++i) base *= 2;
  base = std::min(base, config_.retry_backoff_max);
  const int64_t percent = 100 + env_.random.uniform_range(-20, 20);
  return base * percent / 100;
}

void ClientCore::pause_after(const Status& status, int attempt) {
  if (status.code() == Code::kInvalidArgument && invalidates_metadata(status.protocol_error())) {
    invalidate_metadata();
  }
  env_.scheduler.sleep_for(backoff(attempt));
}

// ---- Metadata ----

Result<ClusterInfo> ClientCore::metadata(const std::vector<std::string>& topics, bool allow_auto_create) {
  return refresh(topics, allow_auto_create);
}

Result<ClusterInfo> ClientCore::refresh(const std::vector<std::string>& topics, bool allow_auto_create) {
  const uint64_t epoch = metadata_epoch_;
  SLUICE_ASSIGN_OR_RETURN(
      protocol::MetadataResponse response,
      call_with_retries<protocol::MetadataResponse>(
          -1, [&](int16_t) { return metadata_request(topics, allow_auto_create); }, config_.request_timeout));
  ClusterInfo info = cluster_info(response);
  absorb(info, topics, epoch);
  return info;
}

Status ClientCore::refresh_brokers() {
  auto brokers_only = [](int16_t) {
    protocol::MetadataRequest request;
    request.topics.emplace();  // v1+: no topic, the brokers alone
    request.allow_auto_topic_creation = false;
    return request;
  };
  SLUICE_ASSIGN_OR_RETURN(protocol::MetadataResponse response,
                          call_with_retries<protocol::MetadataResponse>(-1, brokers_only, config_.request_timeout));
  for (const BrokerInfo& broker : cluster_info(response).brokers) remember_broker(broker);
  controller_id_ = response.controller_id;
  return Status();
}

void ClientCore::absorb(const ClusterInfo& info, const std::vector<std::string>& asked, uint64_t epoch) {
  for (const BrokerInfo& broker : info.brokers) remember_broker(broker);
  controller_id_ = info.controller_id;
  if (asked.empty()) {  // every topic: those missing were deleted
    std::erase_if(topics_, [&](const auto& item) { return !info.topics.contains(item.first); });
  }
  for (const auto& [name, topic] : info.topics) {
    if (topic.error_code != 0) {
      topics_.erase(name);  // not cached: the next lookup asks again
      continue;
    }
    topics_[name] = CachedTopic{topic, env_.clock.now(), epoch};
  }
}

bool ClientCore::fresh(const std::string& topic) const {
  auto it = topics_.find(topic);
  return it != topics_.end() && fresh(it->second);
}

bool ClientCore::fresh(const CachedTopic& cached) const {
  return cached.epoch == metadata_epoch_ && env_.clock.now() - cached.fetched < config_.metadata_max_age;
}

Result<const TopicInfo*> ClientCore::cached_topic(const std::string& name) const {
  auto it = topics_.find(name);
  if (it == topics_.end()) return broker_error(errc::kUnknownTopicOrPartition, "metadata for topic '" + name + "'");
  return &it->second.info;
}

Status ClientCore::refresh_if_stale(const std::string& name) {
  if (fresh(name)) return Status();
  LockGuard lock(refresh_mutex_);
  if (fresh(name)) return Status();  // a refresh made while this fiber waited may have brought it
  Result<ClusterInfo> info = refresh({name}, config_.allow_auto_create_topics);
  if (!info.ok()) return info.status();
  auto it = info->topics.find(name);
  if (it != info->topics.end() && it->second.error_code != 0) {
    return broker_error(it->second.error_code, "metadata for topic '" + name + "'");
  }
  return Status();
}

Result<TopicInfo> ClientCore::topic(const std::string& name) {
  SLUICE_TRY(refresh_if_stale(name));
  SLUICE_ASSIGN_OR_RETURN(const TopicInfo* topic, cached_topic(name));
  return *topic;
}

// Per request: the cached entry is read in place (a copy per produce or fetch was a tenth of the client's
// allocations). Nothing below suspends, so the entry cannot change under the reference.
Result<int32_t> ClientCore::leader_for(const TopicPartitionId& tp) {
  const TopicInfo* found = nullptr;
  auto cached = topics_.find(tp.topic);
  if (cached != topics_.end() && fresh(cached->second)) {
    found = &cached->second.info;  // one lookup for the common case: the entry is fresh
  } else {
    SLUICE_TRY(refresh_if_stale(tp.topic));
    SLUICE_ASSIGN_OR_RETURN(found, cached_topic(tp.topic));
  }
  const TopicInfo& topic = *found;
  if (tp.partition < 0 || static_cast<size_t>(tp.partition) >= topic.partitions.size()) {
    return broker_error(errc::kUnknownTopicOrPartition, "leader of " + tp.to_string(),
                        fmt::format("the topic has {} partitions", topic.partitions.size()));
  }
  const PartitionInfo& partition = topic.partitions[tp.partition];
  if (partition.partition != tp.partition) {
    return corruption(fmt::format("the metadata of '{}' skips partitions", tp.topic));
  }
  if (partition.error_code != 0) return broker_error(partition.error_code, "leader of " + tp.to_string());
  if (partition.leader < 0) return broker_error(errc::kLeaderNotAvailable, "leader of " + tp.to_string());
  return partition.leader;
}

}  // namespace sluice::client::detail
