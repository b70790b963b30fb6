// ClientCore: what a Client shares with the producers and group members made from it and with their fibers: the
// connection table (one connection per broker address, opened on first use and reopened after a failure), the
// broker addresses by node id, the metadata cache, the retry backoff, and typed request/answer exchanges.
//
// Fibers: all calls come from fibers of one node and may suspend. The core is co-owned (shared_ptr) by the Client
// and everything made from it, so a fiber inside a call keeps it alive; close() ends the connections, after which
// every call fails (not sent).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/client/client.h"
#include "core/client/connection.h"
#include "core/client/errors.h"
#include "core/env/sync.h"

namespace sluice::client::detail {

class ClientCore {
 public:
  // What a request buffer reserves: one allocation for most requests (a fetch's or an offset commit's).
  static constexpr size_t kTypicalRequestBytes = 256;

  ClientCore(Env env, ClientConfig config);
  ~ClientCore();
  ClientCore(const ClientCore&) = delete;
  ClientCore& operator=(const ClientCore&) = delete;

  Env env() const { return env_; }
  const ClientConfig& config() const { return config_; }
  bool closed() const { return closed_; }
  void close();

  // ---- Connections ----
  // The connection to broker `node_id` (-1: any broker, an open connection first, then the bootstrap list and the
  // known brokers in turn), opened when needed. A failure is not_sent.
  Result<std::shared_ptr<Connection>> connection(int32_t node_id);
  void remember_broker(const BrokerInfo& broker);
  // The connection to `address` if one is open (tests, observation).
  std::shared_ptr<Connection> open_connection(const Address& address) const;

  // One request built for the version the connection chose (`build(version)` returns the request), and its
  // decoded answer. `timeout` bounds the wait for the answer.
  template <protocol::ApiMessage Resp, typename Build>
  Result<Resp> call(int32_t node_id, Build&& build, Duration timeout);
  // As call, but the answer's Records fields stay views into `bytes` (the buffer the answer came in), which comes
  // with it (no copy of a fetch's records): the response is valid while `bytes` is.
  template <protocol::ApiMessage Resp>
  struct Answered {
    Resp response;
    Bytes bytes;
  };
  template <protocol::ApiMessage Resp, typename Build>
  Result<Answered<Resp>> call_answered(int32_t node_id, Build&& build, Duration timeout);
  // `attempt()` (returning a Status or a Result) tried up to config().read_attempts times while its failure is
  // worth_retrying (errors.h), with backoff in between; a retriable error that names stale metadata invalidates
  // the cache first. For calls that are safe to repeat.
  template <typename Attempt>
  auto retry(Attempt&& attempt) -> decltype(attempt());
  template <protocol::ApiMessage Resp, typename Build>
  Result<Resp> call_with_retries(int32_t node_id, Build&& build, Duration timeout) {
    return retry([&] { return call<Resp>(node_id, build, timeout); });
  }
  Result<Bytes> round_trip(int32_t node_id, protocol::ApiKey api, int16_t version, ByteView body, bool expect_response,
                           Duration timeout);

  // ---- Metadata ----
  Result<ClusterInfo> metadata(const std::vector<std::string>& topics, bool allow_auto_create);
  Result<int32_t> leader_for(const TopicPartitionId& tp);
  // The cached topic, refreshed when stale (as leader_for); an error when the topic does not exist.
  Result<TopicInfo> topic(const std::string& name);
  void invalidate_metadata() { ++metadata_epoch_; }
  // The controller if known, else -1 (any broker).
  int32_t admin_node() const { return controller_id_; }

  // ---- Retries ----
  // retry_backoff doubled per attempt (1-based) up to retry_backoff_max, +-20 % jitter from env.random.
  Duration backoff(int attempt);
  // Sleeps for backoff(attempt) after an attempt failed with `status`, invalidating metadata when it says so.
  void pause_after(const Status& status, int attempt);

 private:
  Result<std::shared_ptr<Connection>> connect_to(const Address& address);
  Result<std::shared_ptr<Connection>> any_connection();
  Result<ClusterInfo> refresh(const std::vector<std::string>& topics, bool allow_auto_create);
  Status refresh_brokers();
  void absorb(const ClusterInfo& info, const std::vector<std::string>& asked, uint64_t epoch);
  bool fresh(const std::string& topic) const;
  // The cache's entry (valid until the cache changes: use it before suspending), or kUnknownTopicOrPartition.
  Result<const TopicInfo*> cached_topic(const std::string& name) const;
  Status refresh_if_stale(const std::string& name);

  struct CachedTopic {
    TopicInfo info;
    Instant fetched{};
    uint64_t epoch = 0;  // metadata_epoch_ when the request that brought it was made
  };
  bool fresh(const CachedTopic& cached) const;

  Env env_;
  ClientConfig config_;
  bool closed_ = false;
  std::map<Address, std::shared_ptr<Connection>> connections_;
  std::map<Address, std::shared_ptr<Event>> opening_;  // connects in progress; set when each ends
  std::map<int32_t, Address> brokers_;
  size_t next_candidate_ = 0;  // rotates the broker a request for "any broker" tries first
  std::map<std::string, CachedTopic> topics_;
  uint64_t metadata_epoch_ = 1;  // invalidate_metadata() makes every cached topic older than it stale
  int32_t controller_id_ = -1;
  // connection(node_id)'s last answer, for the next request to that node (one per produce and fetch), which then
  // skips the address copy and the lookup by address. Used while unbroken (a broken connection is the only kind
  // connect_to replaces, and close() breaks them all) and at the address brokers_ names; weak, so that it keeps no
  // connection alive longer than connections_ does.
  int32_t last_node_ = -1;
  std::weak_ptr<Connection> last_connection_;
  Mutex refresh_mutex_;  // one metadata refresh at a time: fibers that wait use its result
};

// ---- Templates ----

template <protocol::ApiMessage Resp, typename Build>
Result<ClientCore::Answered<Resp>> ClientCore::call_answered(int32_t node_id, Build&& build, Duration timeout) {
  using Req = std::decay_t<decltype(build(int16_t{0}))>;
  static_assert(Req::kApiKey == Resp::kApiKey, "a request and its response");
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Connection> conn, connection(node_id));
  SLUICE_ASSIGN_OR_RETURN(int16_t version, conn->version_for(Req::kApiKey));
  Bytes framed;
  framed.reserve(kTypicalRequestBytes);
  framed.resize(conn->head_room());
  SLUICE_TRY(protocol::encode_message(build(version), version, &framed));
  CallPtr call = conn->start_framed(Req::kApiKey, version, std::move(framed), timeout, /*expect_response=*/true);
  SLUICE_ASSIGN_OR_RETURN(Answer answer, wait_for_answer(*call));
  Answered<Resp> answered;
  SLUICE_ASSIGN_OR_RETURN(answered.response, protocol::decode_message<Resp>(answer.body(), version));
  answered.bytes = std::move(answer.buffer);  // a move: the response's views still point into its buffer
  return answered;
}

template <protocol::ApiMessage Resp, typename Build>
Result<Resp> ClientCore::call(int32_t node_id, Build&& build, Duration timeout) {
  SLUICE_ASSIGN_OR_RETURN(Answered<Resp> answered, call_answered<Resp>(node_id, std::forward<Build>(build), timeout));
  own_records(answered.response);  // the answer's bytes go when this returns
  return std::move(answered.response);
}

inline const Status& status_of(const Status& status) { return status; }
template <typename T>
const Status& status_of(const Result<T>& result) {
  return result.status();
}

template <typename Attempt>
auto ClientCore::retry(Attempt&& attempt) -> decltype(attempt()) {
  for (int n = 1;; ++n) {
    auto result = attempt();
    const Status& status = status_of(result);
    if (status.ok() || n >= config_.read_attempts || !worth_retrying(status)) return result;
    pause_after(status, n);
  }
}

}  // namespace sluice::client::detail
