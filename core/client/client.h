// core/client: a Kafka client written against the Env, so that it runs on real sockets and inside the simulator.
// The simulator's workloads drive the broker through it, over the real wire protocol (core/protocol encodes and
// decodes), so a bug in the protocol layer shows up as a client-visible anomaly. It is a small client in the shape
// of librdkafka and the Java client: bootstrap and metadata refresh, requests routed to the partition's leader,
// pipelined requests per connection, retries with backoff, idempotent produce, request timeouts, reconnects.
//
// Outcomes are three-valued, as a history checker needs them: kOk (the broker answered success), kFailed (the broker
// answered an error that means "not done": nothing was appended or committed), kUnknown (no answer: a timeout or a
// lost connection after the request may have been sent; it may or may not have taken effect).
//
// Fibers: every call comes from fibers of the node that made the Client, and may suspend. Calls from several
// fibers at once are fine (each waits for its own answer). The Client owns one fiber per open connection (its
// response reader); close() (or the destructor) ends them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/network.h"
#include "core/protocol/message.h"
#include "core/storage/record_batch.h"

namespace sluice::protocol {
struct FetchResponse;
}  // namespace sluice::protocol

namespace sluice::client {

using namespace std::chrono_literals;

enum class Outcome : uint8_t { kOk = 0, kFailed = 1, kUnknown = 2 };
std::string_view outcome_name(Outcome outcome);  // "ok", "fail", "unknown"

// Transport failures of a call, by Status code:
//   kConnectionRefused   the request was not sent (no connection could be opened, or its write failed): it did not
//                        happen;
//   kTimedOut            it was written and no answer came within request_timeout (its connection was closed);
//   kConnectionReset     it was written and the connection broke before the answer;
//   kClosed              the client was closed while it was pending.
// The last three leave the outcome unknown: the request may have taken effect.
bool outcome_unknown(const Status& status);

struct TopicPartitionId {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartitionId&) const = default;
  std::string to_string() const;  // "topic-3"
};

struct ClientConfig {
  std::vector<Address> bootstrap;
  std::string client_id = "sluice-client";
  // A request unanswered for this long: its connection is closed (as Kafka's clients do) and every request pending
  // on it ends kUnknown (kFailed if it was never written).
  Duration request_timeout = 10s;
  Duration connect_timeout = 5s;
  // Between attempts: retry_backoff, doubled per attempt up to retry_backoff_max, with +-20 % jitter from
  // env.random.
  Duration retry_backoff = 100ms;
  Duration retry_backoff_max = 1s;
  // Cached metadata older than this is refreshed before use; an error that names a stale leader refreshes at once.
  Duration metadata_max_age = 30s;
  // Metadata requests made to route a request (leader_for) let the broker create a missing topic, as the Java
  // producer's do.
  bool allow_auto_create_topics = true;
  // Reads and other calls safe to repeat (Metadata, Fetch, ListOffsets, OffsetFetch, OffsetCommit, FindCoordinator)
  // are tried this many times on transport failures and retriable errors, with the backoff above in between.
  int read_attempts = 3;
  // The highest version the client uses of each API is min(this table, the broker's ApiVersions answer). The
  // client sends ApiVersions first on every connection, as librdkafka does.
};

// ---- Metadata ----
struct PartitionInfo {
  int32_t partition = 0;
  int16_t error_code = 0;
  int32_t leader = -1;
  int32_t leader_epoch = -1;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
};
struct TopicInfo {
  std::string name;
  int16_t error_code = 0;
  std::vector<PartitionInfo> partitions;  // by partition index
};
struct BrokerInfo {
  int32_t node_id = -1;
  Address address;
};
struct ClusterInfo {
  std::string cluster_id;
  int32_t controller_id = -1;
  std::vector<BrokerInfo> brokers;
  std::map<std::string, TopicInfo> topics;
};

// ---- Fetch and offsets ----
struct FetchedRecord {
  int64_t offset = 0;
  int64_t timestamp = 0;            // the record's own (CreateTime or LogAppendTime)
  int64_t batch_max_timestamp = 0;  // its batch header's: what time retention judges
  int32_t batch_leader_epoch = -1;
  std::optional<Bytes> key;
  std::optional<Bytes> value;  // nullopt: a tombstone
};
// A fetched record whose key and value view the answer held by its FetchView: no copy per record.
struct FetchedRecordView {
  int64_t offset = 0;
  int64_t timestamp = 0;
  int64_t batch_max_timestamp = 0;
  int32_t batch_leader_epoch = -1;
  std::optional<ByteView> key;
  std::optional<ByteView> value;  // nullopt: a tombstone
};
struct FetchOptions {
  Duration max_wait = 500ms;
  int32_t min_bytes = 1;
  int32_t max_bytes = 1 << 20;  // per partition and per request
};
struct FetchResult {
  int16_t error_code = 0;  // e.g. OFFSET_OUT_OF_RANGE (1), UNKNOWN_TOPIC_OR_PARTITION (3)
  int64_t high_watermark = -1;
  int64_t log_start_offset = -1;
  // Records at or above the requested offset, in offset order (records of a batch that starts below it are
  // dropped, as consumers do). Empty when nothing new arrived within max_wait.
  std::vector<FetchedRecord> records;
  // Past the last whole batch returned, control batches included (which yield no records): where the next fetch
  // starts. -1 when no batch at or above the offset asked for came back.
  int64_t next_offset = -1;
};
// Client::fetch_view's answer: FetchResult's fields, with records that view the answer's bytes, which it holds. A
// move keeps the views valid (a vector's move keeps its buffer); a copy would not, so there is none.
struct FetchView {
  FetchView() = default;
  FetchView(FetchView&&) = default;
  FetchView& operator=(FetchView&&) = default;
  FetchView(const FetchView&) = delete;
  FetchView& operator=(const FetchView&) = delete;

  int16_t error_code = 0;
  int64_t high_watermark = -1;
  int64_t log_start_offset = -1;
  std::vector<FetchedRecordView> records;  // as FetchResult's
  int64_t next_offset = -1;
  Bytes answer;                     // the bytes `records` view
  std::vector<Bytes> decompressed;  // or, for compressed batches, these
};
// A partition and the offset to fetch it from: one element of Client::fetch_from's request.
struct FetchPosition {
  TopicPartitionId tp;
  int64_t offset = 0;
};
// Client::fetch_from's answer: for each position asked for, in that order, its FetchView (with an empty `answer`: its
// records view this `answer`) or why it has none. Move-only, as FetchView, and for the same reason.
struct FetchMany {
  std::vector<Result<FetchView>> partitions;
  Bytes answer;  // the bytes the partitions' records view
};
// ListOffsets' special timestamps.
inline constexpr int64_t kLatestTimestamp = -1;
inline constexpr int64_t kEarliestTimestamp = -2;
struct ListedOffset {
  int64_t offset = -1;
  int64_t timestamp = -1;
};

// ---- Admin ----
struct NewTopic {
  std::string name;
  int32_t partitions = 1;
  int16_t replication_factor = 1;
  std::map<std::string, std::string> configs;
};
struct ConfigChange {
  std::string name;
  std::optional<std::string> value;  // nullopt: delete the override (back to the default)
};

namespace detail {
class ClientCore;
// A decoded message's Records fields view the frame they came in: they are copied before the frame goes, for a
// message that outlives it. FetchResponse is the one response with records; others have nothing to copy.
void own_records(protocol::FetchResponse& response);
template <typename Message>
void own_records(Message&) {}
}  // namespace detail

// One client: a connection per broker (opened on first use, reopened after a failure), the metadata cache, and the
// typed calls. Errors come back as Status; a broker's error code is in Status::protocol_error() (and the Status
// code is kInvalidArgument for "the broker refused", kTimedOut / kConnectionReset / kClosed for transport
// failures, whose outcome is unknown).
class Client {
 public:
  Client(Env env, ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Env env() const { return env_; }
  const ClientConfig& config() const { return config_; }

  // Metadata for `topics` (every topic when empty), refreshing the cache. With allow_auto_create the broker may
  // create missing topics (Metadata v4+'s flag).
  Result<ClusterInfo> metadata(const std::vector<std::string>& topics = {}, bool allow_auto_create = false);
  // The partition's leader from the cache, refreshing it when unknown or older than metadata_max_age.
  Result<int32_t> leader_for(const TopicPartitionId& tp);
  // Marks the cached metadata stale (after NOT_LEADER_OR_FOLLOWER and the like).
  void invalidate_metadata();

  // One Fetch from the partition's leader at `offset` (isolation: read_uncommitted). The broker answers a
  // connection's requests in order, so while it holds a fetch for max_wait the client's other requests to that
  // broker wait behind it: a workload that long-polls does so from a Client of its own, as Kafka's consumers and
  // producers have connections of their own.
  Result<FetchResult> fetch(const TopicPartitionId& tp, int64_t offset, const FetchOptions& options = {});
  // The same fetch, answered without a copy of each record's key and value (the simulator's workloads read every
  // record once and keep digests).
  Result<FetchView> fetch_view(const TopicPartitionId& tp, int64_t offset, const FetchOptions& options = {});
  // A consumer's fetch, as Kafka's consumers send it: one Fetch request to broker `node_id` (the leader of the
  // positions' partitions, as far as the caller knows) for all of `positions`, answered without a copy per record
  // (as fetch_view). One attempt, no retries: a partition whose request failed, or whose broker answered an error
  // (NOT_LEADER_OR_FOLLOWER when the leader moved), says so, and the caller fetches it again later; an error that
  // means stale metadata has invalidated the cache.
  FetchMany fetch_from(int32_t node_id, const std::vector<FetchPosition>& positions, const FetchOptions& options = {});
  // ListOffsets at `timestamp` (kEarliestTimestamp, kLatestTimestamp or a time in ms).
  Result<ListedOffset> list_offset(const TopicPartitionId& tp, int64_t timestamp);

  // Admin, sent to any broker (the controller once there is one). Each fails with the broker's error code.
  Status create_topic(const NewTopic& topic);
  Status delete_topic(const std::string& name);
  // IncrementalAlterConfigs: SET for a value, DELETE for nullopt.
  Status alter_topic_config(const std::string& topic, const std::vector<ConfigChange>& changes);
  Result<std::map<std::string, std::string>> describe_topic_config(const std::string& topic);
  // DeleteRecords: the new low watermark.
  Result<int64_t> delete_records(const TopicPartitionId& tp, int64_t before_offset);

  // A raw typed call to broker `node_id` (-1: any bootstrap broker), pipelined on that broker's connection. With
  // `expect_response` false (Produce acks=0) it returns once the request is written, with a default Resp. A
  // transport failure comes back as described at outcome_unknown().
  template <protocol::ApiMessage Resp, protocol::ApiMessage Req>
  Result<Resp> call(int32_t node_id, const Req& request, bool expect_response = true) {
    static_assert(Resp::kApiKey == Req::kApiKey, "a request and its response");
    SLUICE_ASSIGN_OR_RETURN(int16_t version, version_for(node_id, Req::kApiKey));
    Bytes body;
    SLUICE_TRY(protocol::encode_message(request, version, &body));
    SLUICE_ASSIGN_OR_RETURN(Bytes answer, round_trip(node_id, Req::kApiKey, version, std::move(body), expect_response));
    if (!expect_response) return Resp{};
    SLUICE_ASSIGN_OR_RETURN(Resp response, protocol::decode_message<Resp>(answer, version));
    detail::own_records(response);
    return response;
  }
  // The version `call` uses for `api` with broker `node_id` (after its ApiVersions).
  Result<int16_t> version_for(int32_t node_id, protocol::ApiKey api);

  // Closes every connection; pending calls end (kUnknown). Idempotent; the destructor calls it.
  void close();

 private:
  friend class Producer;
  friend class GroupMember;

  Result<Bytes> round_trip(int32_t node_id, protocol::ApiKey api, int16_t version, Bytes body, bool expect_response);

  Env env_;
  ClientConfig config_;
  // The connection table, the metadata cache and the calls (client_core.h), shared with the fibers of the
  // connections, producers and group members made from this client, which may outlive it.
  std::shared_ptr<detail::ClientCore> core_;
};

// ---- Producer ----
struct ProducerConfig {
  int16_t acks = -1;  // 0, 1 or -1 (all)
  // InitProducerId, then a sequence per partition kept across retries, so that a retry after a lost answer is
  // appended once. Requires acks=-1, as Kafka's producer does.
  bool idempotent = false;
  storage::Compression compression = storage::Compression::kNone;
  // Produce requests of this producer in flight per broker connection (Kafka: at most 5 with idempotence). Above 1
  // without idempotence, a retry can land behind a later batch, as with Kafka's producer.
  int max_in_flight = 5;
  // A send still unsettled this long after it was started settles kUnknown if some attempt may have reached the
  // broker, kFailed otherwise. Retriable errors and transport failures are retried until then.
  Duration delivery_timeout = 30s;
  int32_t request_timeout_ms = 30000;  // the Produce request's own timeout field (acks=-1)
  // >= 0: every Produce goes to this broker whatever the partition's leader (one address in front of a cluster, as
  // a load balancer or KubeMQ's deployment makes it; the broker forwards to the leader). -1: to the leader.
  int32_t via_node = -1;
};

struct ProducerRecord {
  std::optional<Bytes> key;
  std::optional<Bytes> value;  // nullopt: a tombstone
  int64_t timestamp_ms = -1;   // -1: env.clock.wall_now() when sent
};

struct ProduceResult {
  Outcome outcome = Outcome::kUnknown;
  int16_t error_code = 0;    // the broker's last error code (0 on success)
  std::string error;         // what went wrong, for a history (transport errors included)
  int64_t base_offset = -1;  // kOk with acks != 0: the offset of the batch's first record
  int64_t log_start_offset = -1;
  int attempts = 0;
  // With idempotence: the producer id, epoch and base sequence the batch was sent with.
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
};

// Fibers: one sender fiber per partition with unsettled batches (producer_state.h has the rules it follows).
class Producer {
 public:
  using Done = std::function<void(const ProduceResult&)>;

  Producer(Client& client, ProducerConfig config);
  ~Producer();  // settles nothing: call flush() first to wait for the sends
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Starts one batch (the records, in one record batch with the configured compression) to one partition and
  // returns at once. `done` runs once, on the partition's sender fiber, when the batch settles: it may send() but
  // must not block (no flush(), no send_and_wait()), or that partition stalls. Batches to one
  // partition are sent in the order of send() (and, with idempotence, stay in order across retries). acks=0
  // settles kOk as soon as the request is written (no offset known), kFailed if it could not be written.
  void send(const TopicPartitionId& tp, std::vector<ProducerRecord> records, Done done);
  // Blocking form of send().
  ProduceResult send_and_wait(const TopicPartitionId& tp, std::vector<ProducerRecord> records);
  // Waits until every batch sent so far has settled.
  void flush();
  size_t in_flight() const;  // batches started and not settled

  int64_t producer_id() const;  // -1 until InitProducerId answered (or without idempotence)
  int16_t producer_epoch() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the producer's fibers
};

// ---- Classic consumer group member (JoinGroup / SyncGroup / Heartbeat / OffsetCommit / OffsetFetch / Leave) ----
struct GroupConfig {
  std::string group_id;
  std::vector<std::string> topics;
  Duration session_timeout = 10s;
  Duration rebalance_timeout = 30s;
  Duration heartbeat_interval = 3s;
  std::optional<std::string> group_instance_id;  // static membership
  // The leader assigns with Kafka's "range" assignor (per topic, contiguous ranges by member id order).
};

class GroupMember {
 public:
  GroupMember(Client& client, GroupConfig config);
  ~GroupMember();  // stops the heartbeat fiber; does not leave (call leave())
  GroupMember(const GroupMember&) = delete;
  GroupMember& operator=(const GroupMember&) = delete;

  // FindCoordinator, JoinGroup (answering MEMBER_ID_REQUIRED), SyncGroup (as leader: assigns), and starts the
  // heartbeat fiber. Retries retriable errors (coordinator loading or moved, rebalance in progress) until
  // `deadline`. On return with ok, assignment() and generation() are this generation's.
  Status join(Instant deadline);
  // True when a heartbeat or commit learned of a rebalance (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
  // UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID): call join() again before trusting the assignment.
  bool needs_rejoin() const;
  const std::vector<TopicPartitionId>& assignment() const;
  int32_t generation() const;
  const std::string& member_id() const;

  // OffsetCommit with this member's generation; fails with the broker's error code (e.g. REBALANCE_IN_PROGRESS).
  Status commit(const std::map<TopicPartitionId, int64_t>& offsets);
  // OffsetFetch: the committed offset per partition (-1 when none).
  Result<std::map<TopicPartitionId, int64_t>> committed(const std::vector<TopicPartitionId>& partitions);
  // LeaveGroup, then stops heartbeating.
  Status leave();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace sluice::client
