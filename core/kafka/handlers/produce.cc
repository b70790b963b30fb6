// Produce (0), the acks contract (DESIGN.md §4, storage-semantics.md A1):
//   - acks outside {-1, 0, 1}: INVALID_REQUIRED_ACKS (21) for every partition, nothing created or appended;
//   - acks=1 and acks=-1 answer after the append; a `persisted` partition's records are appended without waiting
//     for their sync, and the answer waits for it (HandlerOutcome::complete, cluster::Partition::wait_acknowledged),
//     so that the requests a client pipelines on one connection share sync rounds instead of paying one each;
//   - acks=-1 needs min.insync.replicas in-sync replicas, and this node is each partition's only one: above 1, the
//     produce gets NOT_ENOUGH_REPLICAS (19) and appends nothing; acks=0 and 1 are not checked
//     (cluster::Partition::append_records says why Sluice keeps Kafka's pre-3.7 check);
//   - acks=0: no response frame at all; when any partition failed the connection is closed, as Kafka does
//     (KafkaApis.handleProduceRequest), so that the client refreshes its metadata.
// v0-2 (message formats 0 and 1) are advertised for librdkafka's sake but refused by closing the connection, as
// Kafka 4 does (KIP-896, KAFKA-18659). v9-11 differ only in flexibility and in errors this broker never answers:
// v10's leader hints come with NOT_LEADER_OR_FOLLOWER (never filled in here), v11's TRANSACTION_ABORTABLE
// with transactions. Per partition, this handler checks what depends on the request (the topic, the partition
// index, zstd against the version) and hands the records to the partition (core/cluster/partition.h), which
// validates them (per-record errors, answered by v8+ as record_errors, KIP-467), corrects a CreateTime batch's max
// timestamp, re-encodes it in the topic's compression.type, applies the idempotence rules and appends. Produce never
// creates a topic, as in Kafka (KafkaApis.handleProduceRequest): an unknown topic or partition is
// UNKNOWN_TOPIC_OR_PARTITION, and clients create topics through Metadata (auto.create.topics.enable) or
// CreateTopics first.
// Transactions are not supported: a request carrying transactional batches gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED everywhere, which is what Kafka answers when the id is not authorized.
// The ack-before-append mutation (simulator only, core/base/mutations.h) answers before appending:
// cluster/deferred_appends.h.
// Cluster mode, follower forwarding (issue 22; a departure: Kafka answers NOT_LEADER_OR_FOLLOWER and never
// forwards): the partitions of a request that this node does not lead are grouped by their leader (forward_leader:
// the local replica's view, else the metadata image's RecordLeader) and sent on as one Produce per leader, with the
// same acks, timeout and transactional id (kafka::ProduceForwarder); the leader's per-partition answers (error,
// base offset, log append time, log start offset, record errors) are this node's. acks=0 waits until the forward
// is written. A forwarded request (client id "sluice-forward/<node>") is never forwarded again: it gets
// NOT_LEADER_OR_FOLLOWER where the node does not lead, so leadership moving mid-flight cannot make a loop. A failed
// forward answers NOT_LEADER_OR_FOLLOWER, or REQUEST_TIMED_OUT once the request was written; the wait
// is bounded by timeout_ms (at least kMinForwardWait). NOT_LEADER_OR_FOLLOWER without forwarding: no leader known,
// or this node is the leader but its replica is not ready; an acks=0 produce first waits as long for an election to
// name a leader (await_leader_for_acks0), since its client would never learn of the error. The follower-drops-acks0
// mutation (a bug to catch) and the injected fault drop-acks0-forwards (a behaviour whose cost a scenario measures)
// drop an acks=0 forward.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/base/mutations.h"
#include "core/client/errors.h"
#include "core/client/requests.h"
#include "core/cluster/append_watch.h"
#include "core/cluster/partition.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/produce_forwarder.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"

namespace sluice::kafka {
namespace {

using protocol::ProduceRequest;
using protocol::ProduceResponse;
using PartitionResponse = ProduceResponse::PartitionResponse;

constexpr int16_t kFirstServedVersion = 3;  // message format 2
constexpr int16_t kFirstZstdVersion = 7;    // KIP-110
constexpr size_t kMagicOffset = 16;
constexpr size_t kAttributesLowByte = 22;
constexpr uint8_t kTransactionalBit = 0x10;

// The batch's attributes, when the records start like a magic-2 batch (validation judges the rest).
std::optional<uint8_t> batch_attributes(ByteView records) {
  if (records.size() <= kAttributesLowByte || records[kMagicOffset] != storage::kMagicV2) return std::nullopt;
  return records[kAttributesLowByte];
}

bool has_transactional_batch(const ProduceRequest& request) {
  for (const ProduceRequest::TopicData& topic : request.topic_data) {
    for (const ProduceRequest::PartitionData& partition : topic.partition_data) {
      const std::optional<uint8_t> attributes = batch_attributes(partition.records.bytes());
      if (attributes && (*attributes & kTransactionalBit) != 0) return true;
    }
  }
  return false;
}

PartitionResponse failed(int32_t index, const Status& status, std::vector<storage::RecordError> record_errors = {}) {
  PartitionResponse out;
  out.index = index;
  out.error_code = static_cast<int16_t>(to_error_code(status));
  out.base_offset = -1;
  out.log_append_time_ms = -1;
  out.log_start_offset = -1;
  out.error_message = status.message();  // v8+ only, like record_errors
  for (storage::RecordError& error : record_errors) {
    out.record_errors.push_back({error.batch_index, std::move(error.message)});
  }
  return out;
}

// Every partition of the request answered with the same error.
ProduceResponse fail_all(const ProduceRequest& request, const Status& status) {
  ProduceResponse response;
  for (const ProduceRequest::TopicData& topic : request.topic_data) {
    ProduceResponse::TopicResponse& answer = response.responses.emplace_back();
    answer.name = topic.name;
    for (const ProduceRequest::PartitionData& partition : topic.partition_data) {
      answer.partition_responses.push_back(failed(partition.index, status));
    }
  }
  return response;
}

// ProduceRequest.validateRecords' codec check, made before the batch count is: zstd needs v7.
Status check_compression(ByteView records, int16_t version) {
  const std::optional<uint8_t> attributes = batch_attributes(records);
  if (version >= kFirstZstdVersion || !attributes) return Status();
  if (static_cast<storage::Compression>(*attributes & 0x07) != storage::Compression::kZstd) return Status();
  return kafka_error(ErrorCode::kUnsupportedCompressionType,
                     fmt::format("zstd batches need Produce v{}; this request is v{}", kFirstZstdVersion, version));
}

// A partition's append whose answer waits for its acknowledgement (cluster::Appended::awaits_acknowledgement).
struct UnacknowledgedAppend {
  size_t topic_slot;      // in ProduceResponse::responses
  size_t partition_slot;  // in that topic's partition_responses
  std::shared_ptr<cluster::Partition> partition;
  int64_t end_offset;
  int32_t leader_epoch;  // the epoch the batch was appended in: a replicated acks=all waits for its commit
};

// Appends one partition's records through its Partition, after the request-level checks. A batch refused for some
// of its records lists them in `*record_errors`; `*partition` receives the partition, for the acknowledgement wait.
Result<cluster::Appended> append_partition(RequestContext& ctx, const storage::TopicPartition& tp, cluster::Acks acks,
                                           ByteView records, std::vector<storage::RecordError>* record_errors,
                                           std::shared_ptr<cluster::Partition>* partition) {
  SLUICE_TRY(check_compression(records, ctx.version()));
  *partition = ctx.broker.partitions().find(tp);
  if (*partition == nullptr) {
    if (const auto* offline = ctx.broker.partitions().offline(tp)) return offline->reason;
    return kafka_error(ctx.broker.partition_not_here(tp), fmt::format("no partition {} on this node", tp.to_string()));
  }
  if (ctx.broker.cluster() != nullptr && !(*partition)->replicated()) {
    // Loaded from disk and not yet in its raft group: only the group's leader may append.
    return kafka_error(ErrorCode::kNotLeaderOrFollower,
                       fmt::format("{} has not joined its raft group yet", tp.to_string()));
  }
  return (*partition)->append_records(records, acks, record_errors);
}

// The answer for one partition; `*unacknowledged` receives the wait its answer still needs, if any.
PartitionResponse produce_partition(RequestContext& ctx, const std::string& topic, int32_t partitions,
                                    cluster::Acks acks, const ProduceRequest::PartitionData& data,
                                    std::optional<UnacknowledgedAppend>* unacknowledged) {
  if (data.index < 0 || data.index >= partitions) {
    return failed(data.index, kafka_error(ErrorCode::kUnknownTopicOrPartition,
                                          fmt::format("topic '{}' has no partition {}", topic, data.index)));
  }
  const storage::TopicPartition tp{topic, data.index};
  std::vector<storage::RecordError> record_errors;
  std::shared_ptr<cluster::Partition> partition;
  Result<cluster::Appended> appended =
      append_partition(ctx, tp, acks, data.records.bytes(), &record_errors, &partition);
  if (!appended.ok()) {
    ctx.env.log.debug("produce to {} failed: {}", tp.to_string(), appended.status().to_string());
    return failed(data.index, appended.status(), std::move(record_errors));
  }
  if (appended->awaits_acknowledgement) {
    SLUICE_ASSERT(partition != nullptr);
    *unacknowledged =
        UnacknowledgedAppend{0, 0, std::move(partition), appended->end_offset(), appended->leader_epoch};
  }
  PartitionResponse out;
  out.index = data.index;
  out.base_offset = appended->result.base_offset;
  out.log_append_time_ms = appended->result.log_append_time_ms;
  out.log_start_offset = appended->result.log_start_offset;
  return out;
}

// The topic's partition count. An error Status (unknown, internal) answers each of its partitions: existence is
// judged first, as Kafka does, so an internal topic not made yet is unknown too.
Result<int32_t> topic_partitions(RequestContext& ctx, const std::string& name) {
  const TopicInfo* info = ctx.broker.topics().find(name);
  if (info == nullptr) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", name));
  }
  if (is_internal_topic(name)) {
    return kafka_error(ErrorCode::kInvalidTopicException, fmt::format("clients may not produce to '{}'", name));
  }
  return info->partitions;  // a count, not the pointer: the topic may go while an append suspends
}

// ---- Cluster mode: follower forwarding (produce_forwarder.h) ----

// How long forwarding may take: the request's timeout_ms, but at least this, since acks 0 and 1 may carry 0 (their
// timeout means nothing to Kafka) and the records must still reach the leader.
constexpr auto kMinForwardWait = std::chrono::seconds(1);

Instant forward_deadline(const RequestContext& ctx, const ProduceRequest& request) {
  return ctx.env.clock.now() +
         std::max<Duration>(std::chrono::milliseconds(std::max(0, request.timeout_ms)), kMinForwardWait);
}

// The leader a partition's records are forwarded to, when this node is not it: the local replica's leader when it
// knows one, else the metadata image's RecordLeader (as Metadata answers). Nothing on a single node, for a request
// that was forwarded already (the loop guard), while no leader is known, and when the leader is this node (not
// ready yet: the local append answers NOT_LEADER_OR_FOLLOWER).
std::optional<int32_t> forward_leader(RequestContext& ctx, const storage::TopicPartition& tp) {
  const ClusterTopics* cluster = ctx.broker.cluster();
  if (cluster == nullptr || is_forwarded(ctx.header)) return std::nullopt;
  int32_t leader = -1;
  const std::shared_ptr<cluster::Partition> local = ctx.broker.partitions().find(tp);
  if (local != nullptr && local->replicated()) {
    if (local->is_leader()) return std::nullopt;
    leader = local->leader();
  }
  if (leader < 0) {
    const cluster::metadata::TopicImage* placed = cluster->image().topic(tp.topic);
    const TopicInfo* info = ctx.broker.topics().find(tp.topic);
    if (placed == nullptr || info == nullptr || placed->id != info->id || tp.partition < 0 ||
        tp.partition >= placed->partition_count()) {
      return std::nullopt;
    }
    leader = placed->partitions[static_cast<size_t>(tp.partition)].leader;
  }
  if (leader < 0 || leader == cluster->node_id()) return std::nullopt;
  return leader;
}

// An acks=0 produce's client never learns that it failed, so a partition in an election (its replica knows no
// leader) is given until `deadline` to elect one before its records are forwarded or appended, rather than dropped
// with NOT_LEADER_OR_FOLLOWER: a run without faults loses nothing, whatever the acks (cluster_follower_produce seed
// 190170 with BUGGIFY lost one to the election that follows a partition's creation). acks 1 and all answer the
// error at once, as Kafka does, and their clients send again.
void await_leader_for_acks0(RequestContext& ctx, const storage::TopicPartition& tp, Instant deadline) {
  while (!ctx.broker.stopping() && ctx.env.clock.now() < deadline) {
    const std::shared_ptr<cluster::Partition> local = ctx.broker.partitions().find(tp);
    if (local == nullptr || !local->replicated()) return;
    // Linked before the check, with no suspension in between: a leadership move notifies the partition's signal.
    cluster::AppendWatch watch(ctx.env.scheduler, 2);
    watch.watch(ctx.broker.partitions().broker_wide());
    watch.watch(local->appends());
    if (local->leader() >= 0) return;
    SLUICE_PROBE("produce.acks0_awaits_leader");
    watch.wait_until(deadline);
  }
}

struct ForwardedPartition {
  size_t topic_slot;      // in ProduceResponse::responses
  size_t partition_slot;  // in that topic's partition_responses
  client::PartitionRecords records;
};
using Forwards = std::map<int32_t, std::vector<ForwardedPartition>>;  // by leader node id

// What a partition answers when its forward failed: REQUEST_TIMED_OUT when the request was written and its fate is
// unknown (as Kafka answers an acks=all produce it could not settle; for acks=1 too, since the leader may have
// appended it: NOT_LEADER_OR_FOLLOWER would tell an acks=1 client nothing was), else NOT_LEADER_OR_FOLLOWER
// (retriable: the client refreshes its metadata and retries, at the leader or through this node again).
Status forward_failure(int32_t leader, const Status& why) {
  const bool unknown = why.code() != Code::kConnectionRefused;  // client::not_sent: nothing written
  const ErrorCode code = unknown ? ErrorCode::kRequestTimedOut : ErrorCode::kNotLeaderOrFollower;
  return kafka_error(code, fmt::format("forwarding to the leader (node {}) failed: {}", leader, why.to_string()));
}

// Sends each leader its partitions as one Produce (same acks, timeout and transactional id) and puts the leader's
// answers in `*response`. acks=0 waits only until the request is written.
void forward_all(RequestContext& ctx, const ProduceRequest& request, const Forwards& forwards,
                 ProduceResponse* response) {
  ClusterTopics* cluster = ctx.broker.cluster();
  SLUICE_ASSERT(cluster != nullptr);
  const Instant deadline = forward_deadline(ctx, request);
  for (const auto& [leader, parts] : forwards) {
    if (request.acks == 0 && ctx.broker.config().mutations.has(Mutation::kFollowerDropsAcks0)) {
      SLUICE_PROBE("mutation.follower-drops-acks0");
      continue;  // answered as appended (acks=0 answers nothing): the records are lost
    }
    if (request.acks == 0 && cluster->forwarder().drops_acks0()) {
      SLUICE_PROBE("fault.drop-acks0-forwards");
      continue;  // the injected fault: lost the same way
    }
    std::vector<client::PartitionRecords> data;
    for (const ForwardedPartition& part : parts) data.push_back(part.records);
    ProduceRequest sent = client::produce_request(request.acks, request.timeout_ms, data);
    sent.transactional_id = request.transactional_id;
    const cluster::metadata::BrokerRegistration* broker = cluster->image().broker(leader);
    const Result<ProduceResponse> answered =
        broker == nullptr
            ? Result<ProduceResponse>(client::not_sent(fmt::format("node {} is not registered", leader)))
            : cluster->forwarder().forward(leader, Address{broker->host, static_cast<uint16_t>(broker->port)}, sent,
                                           deadline);
    if (!answered.ok()) {
      ctx.env.log.debug("forwarding a produce to node {} failed: {}", leader, answered.status().to_string());
    }
    for (const ForwardedPartition& part : parts) {
      PartitionResponse& out = response->responses[part.topic_slot].partition_responses[part.partition_slot];
      if (!answered.ok()) {
        out = failed(out.index, forward_failure(leader, answered.status()));
        continue;
      }
      if (request.acks == 0) continue;  // no answer: the placeholder's success stands
      Result<PartitionResponse> theirs = client::produce_answer(*answered, part.records.tp);
      out = theirs.ok() ? std::move(*theirs)
                        : failed(out.index, forward_failure(leader, theirs.status()));
    }
  }
}

struct Produced {
  ProduceResponse response;
  cluster::Acks acks = cluster::Acks::kAll;
  Instant deadline{};  // timeout_ms from the request's arrival: how long acknowledgements may take
  std::vector<UnacknowledgedAppend> unacknowledged;
};

Produced produce(RequestContext& ctx, const ProduceRequest& request) {
  const std::optional<cluster::Acks> acks = cluster::acks_from_wire(request.acks);
  if (!acks) {
    return {fail_all(request, kafka_error(ErrorCode::kInvalidRequiredAcks,
                                          fmt::format("acks={}; only -1, 0 and 1 are allowed", request.acks))),
            {}};
  }
  if (has_transactional_batch(request)) {
    return {fail_all(request, kafka_error(ErrorCode::kTransactionalIdAuthorizationFailed,
                                          "transactions are not supported: no transactional id is authorized")),
            {}};
  }
  Produced out;
  out.acks = *acks;
  out.deadline = ctx.env.clock.now() + std::chrono::milliseconds(std::max(0, request.timeout_ms));
  Forwards forwards;
  // An acks=0 produce waits for elections up to one forward's deadline in all, however many partitions wait.
  const bool may_await_leader = *acks == cluster::Acks::kNone && ctx.broker.cluster() != nullptr &&
                                !is_forwarded(ctx.header);
  const Instant await_until = may_await_leader ? forward_deadline(ctx, request) : Instant{};
  for (const ProduceRequest::TopicData& topic : request.topic_data) {
    ProduceResponse::TopicResponse& answer = out.response.responses.emplace_back();
    answer.name = topic.name;
    const Result<int32_t> partitions = topic_partitions(ctx, topic.name);
    for (const ProduceRequest::PartitionData& partition : topic.partition_data) {
      const bool known = partitions.ok() && partition.index >= 0 && partition.index < *partitions;
      if (known && may_await_leader) await_leader_for_acks0(ctx, {topic.name, partition.index}, await_until);
      // What depends on this request's version (zstd) is judged here: the forward may go at another version.
      const std::optional<int32_t> leader = known && check_compression(partition.records.bytes(), ctx.version()).ok()
                                                ? forward_leader(ctx, {topic.name, partition.index})
                                                : std::nullopt;
      if (leader) {
        PartitionResponse& placeholder = answer.partition_responses.emplace_back();  // acks=0 answers nothing
        placeholder.index = partition.index;
        forwards[*leader].push_back({out.response.responses.size() - 1, answer.partition_responses.size() - 1,
                                     {{topic.name, partition.index}, partition.records.bytes()}});
        continue;
      }
      std::optional<UnacknowledgedAppend> unacknowledged;
      answer.partition_responses.push_back(
          partitions.ok() ? produce_partition(ctx, topic.name, *partitions, *acks, partition, &unacknowledged)
                          : failed(partition.index, partitions.status()));
      if (unacknowledged) {
        unacknowledged->topic_slot = out.response.responses.size() - 1;
        unacknowledged->partition_slot = answer.partition_responses.size() - 1;
        out.unacknowledged.push_back(std::move(*unacknowledged));
      }
    }
  }
  if (!forwards.empty()) forward_all(ctx, request, forwards, &out.response);
  return out;
}

bool any_error(const ProduceResponse& response) {
  for (const ProduceResponse::TopicResponse& topic : response.responses) {
    for (const PartitionResponse& partition : topic.partition_responses) {
      if (partition.error_code != 0) return true;
    }
  }
  return false;
}

// The response, once every partition's answer is final.
struct Answer {
  Env env;
  Address peer;
  int16_t version;
  int16_t acks;
  size_t max_bytes;  // max_response_bytes

  Result<HandlerOutcome> operator()(const ProduceResponse& response) const {
    if (acks == 0) {
      // No response frame; a failure closes the connection so that the client notices and refreshes metadata.
      const bool close = any_error(response);
      if (close) env.log.info("closing the connection from {}: an acks=0 produce failed", peer.to_string());
      return HandlerOutcome{std::nullopt, close, {}};
    }
    SLUICE_ASSIGN_OR_RETURN(Bytes out, encode_response(response, version, max_bytes));
    return HandlerOutcome{std::move(out), false, {}};
  }
};

}  // namespace

Result<HandlerOutcome> handle_produce(RequestContext& ctx, ByteView body) {
  if (ctx.version() < kFirstServedVersion) {
    return kafka_error(ErrorCode::kUnsupportedVersion,
                       fmt::format("Produce v{} (message format 0/1) is refused, as Kafka 4 does; use v{}+",
                                   ctx.version(), kFirstServedVersion));
  }
  SLUICE_ASSIGN_OR_RETURN(ProduceRequest request, decode_request<ProduceRequest>(ctx, body));
  Produced produced = produce(ctx, request);
  const Answer answer{ctx.env, ctx.peer, ctx.version(), request.acks, max_response_bytes(ctx)};
  if (produced.unacknowledged.empty()) return answer(produced.response);
  HandlerOutcome waiting;
  waiting.complete = [produced = std::move(produced), answer]() mutable -> Result<HandlerOutcome> {
    for (const UnacknowledgedAppend& pending : produced.unacknowledged) {
      const Status acknowledged =
          pending.partition->wait_acknowledged(pending.end_offset, produced.acks, produced.deadline,
                                               pending.leader_epoch);
      if (acknowledged.ok()) continue;
      answer.env.log.debug("acknowledging a produce to {} failed: {}", pending.partition->topic_partition().to_string(),
                           acknowledged.to_string());
      PartitionResponse& out =
          produced.response.responses[pending.topic_slot].partition_responses[pending.partition_slot];
      out = failed(out.index, acknowledged);
    }
    return answer(produced.response);
  };
  return waiting;
}

}  // namespace sluice::kafka
