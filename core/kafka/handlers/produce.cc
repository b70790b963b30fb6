// Produce (0), the acks contract (DESIGN.md §4, storage-semantics.md A1):
//   - acks outside {-1, 0, 1}: INVALID_REQUIRED_ACKS (21) for every partition, nothing created or appended;
//   - acks=1 and acks=-1 answer after the append; a `persisted` partition's records are appended without waiting
//     for their sync, and the answer waits for it (HandlerOutcome::complete), so that the requests a client
//     pipelines on one connection share sync rounds instead of paying one each;
//   - acks=-1 needs min.insync.replicas in-sync replicas, and this node is each partition's only one: above 1, the
//     produce gets NOT_ENOUGH_REPLICAS (19) and appends nothing; acks=0 and 1 are not checked. This is
//     Partition.appendRecordsToLeader's check as Kafka had it up to 3.6; 3.7+ caps the setting at the replica
//     count (KAFKA-15583), which would accept these produces. Sluice keeps the topic's number on purpose (issue
//     19): acks=all never acknowledges fewer copies than the topic asks for;
//   - acks=0: no response frame at all; when any partition failed the connection is closed, as Kafka does
//     (KafkaApis.handleProduceRequest), so that the client refreshes its metadata.
// v0-2 (message formats 0 and 1) are advertised for librdkafka's sake but refused by closing the connection, as
// Kafka 4 does (KIP-896, KAFKA-18659). v9-11 differ only in flexibility and in errors this broker never answers:
// v10's leader hints come with NOT_LEADER_OR_FOLLOWER (this node leads every partition), v11's TRANSACTION_ABORTABLE
// with transactions. Each partition's single batch is checked by storage's
// validate_produce_batch (whose per-record errors v8+ answers as record_errors, KIP-467), given, on a CreateTime
// topic, the max timestamp its records carry whatever its header said (kafka-protocol.md trap 12), re-encoded in the
// topic's compression.type when that is not `producer` and differs from the batch's codec (as Kafka's LogValidator
// does), and, for producer ids >= 0, checked by the idempotence rules (producer_state.h). Produce never creates a
// topic, as in Kafka (KafkaApis.handleProduceRequest): an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION,
// and clients create topics through Metadata (auto.create.topics.enable) or CreateTopics first.
// Transactions are not supported: a request carrying transactional batches gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED everywhere, which is what Kafka answers when the id is not authorized.
// The ack-before-append mutation (simulator only, core/base/mutations.h) answers before appending: deferred_appends.h.
#include <fmt/format.h>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/log_config.h"
#include "core/storage/record_batch.h"
#include "core/storage/topic_config.h"

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

constexpr int32_t kInSyncReplicas = 1;  // one node: every partition's leader is its whole ISR

bool valid_acks(int16_t acks) { return acks == -1 || acks == 0 || acks == 1; }

// acks=-1 against min.insync.replicas, checked before the batch is (as Kafka does before appendAsLeader).
Status check_in_sync_replicas(const storage::TopicPartition& tp, const storage::TopicConfig& config, int16_t acks) {
  if (acks != -1 || config.min_insync_replicas <= kInSyncReplicas) return Status();
  return kafka_error(ErrorCode::kNotEnoughReplicas,
                     fmt::format("partition {} has {} in-sync replica(s); min.insync.replicas is {}", tp.to_string(),
                                 kInSyncReplicas, config.min_insync_replicas));
}

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

// The batch in the topic's compression.type: `*storage` receives it when it had to be re-encoded, and the answer
// views it; otherwise the answer is `records` itself. Re-encoding can make a batch larger, so its size is checked
// again (UnifiedLog.append does the same after LogValidator).
Result<ByteView> in_topic_codec(ByteView records, const storage::TopicConfig& config, Bytes* storage) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<Bytes> recompressed,
                          storage::apply_topic_compression(records, config.compression_type));
  if (!recompressed) return records;
  if (recompressed->size() > static_cast<size_t>(config.max_message_bytes)) {
    return kafka_error(ErrorCode::kMessageTooLarge,
                       fmt::format("the batch re-encoded in compression.type {} is {} bytes, over max.message.bytes {}",
                                   *config.value_of("compression.type"), recompressed->size(),
                                   config.max_message_bytes));
  }
  *storage = std::move(*recompressed);
  return ByteView(*storage);
}

// A `persisted` partition's append whose answer waits for its sync.
struct UnsyncedAppend {
  size_t topic;      // in ProduceResponse::responses
  size_t partition;  // in that topic's partition_responses
  std::shared_ptr<storage::PartitionLog> log;
  int64_t end_offset;
};

// Validates and appends one partition's records. Idempotent batches go through the producer state, which may
// answer a retry with its original offsets instead of appending it again. A batch refused for some of its records
// lists them in `*record_errors`. The append does not wait for a `persisted` sync: `*log` is then the partition's
// log, for the wait.
Result<storage::AppendResult> append_partition(RequestContext& ctx, const storage::TopicPartition& tp, int16_t acks,
                                               ByteView records, std::vector<storage::RecordError>* record_errors,
                                               std::shared_ptr<storage::PartitionLog>* log) {
  SLUICE_TRY(check_compression(records, ctx.version()));
  storage::LogManager& logs = ctx.broker.logs();
  const storage::TopicConfig* config = logs.topic_config(tp);
  if (config == nullptr) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("no partition {}", tp.to_string()));
  }
  SLUICE_TRY(check_in_sync_replicas(tp, *config, acks));
  const int64_t now_ms = to_unix_ms(ctx.env.clock.wall_now());
  SLUICE_ASSIGN_OR_RETURN(
      const storage::ValidBatch valid,
      storage::validate_produce_batch(records, storage::validation_rules_for(*config, now_ms), record_errors));
  Bytes corrected;  // CreateTime: the time index, ListOffsets and retention judge by the records' own times
  if (config->message_timestamp_type == storage::MessageTimestampType::kCreateTime) {
    records = storage::with_create_time_max_timestamp(records, valid.records_max_timestamp, &corrected);
  }
  Bytes recompressed;
  SLUICE_ASSIGN_OR_RETURN(records, in_topic_codec(records, *config, &recompressed));
  SLUICE_ASSIGN_OR_RETURN(storage::BatchHeader header, storage::parse_batch_header(records));
  if (DeferredAppends* deferred = ctx.broker.deferred_appends(); deferred != nullptr) [[unlikely]] {
    SLUICE_PROBE("mutation.ack-before-append");
    return deferred->promise(tp, records, header);  // answered now, appended later, never waited for
  }
  // Only a `persisted` append's answer waits for the log; taken before any suspension: the log the append goes to.
  if (config->durability == storage::Durability::kPersisted) *log = logs.find_shared(tp);
  if (header.producer_id < 0) {  // kafkajs sends base sequence 0 with producer id -1: sequences mean nothing here
    SLUICE_ASSIGN_OR_RETURN(storage::AppendResult result, logs.append(tp, records, /*defer_sync=*/true));
    ctx.broker.notify_appended();
    return result;
  }
  SLUICE_ASSIGN_OR_RETURN(ProducerStateManager::Appended appended,
                          ctx.broker.producers().append(tp, records, header, /*defer_sync=*/true));
  if (!appended.duplicate) ctx.broker.notify_appended();
  return appended.result;
}

// The answer for one partition; `*unsynced` receives the wait its answer still needs, if any.
PartitionResponse produce_partition(RequestContext& ctx, const std::string& topic, int32_t partitions, int16_t acks,
                                    const ProduceRequest::PartitionData& data,
                                    std::optional<UnsyncedAppend>* unsynced) {
  if (data.index < 0 || data.index >= partitions) {
    return failed(data.index, kafka_error(ErrorCode::kUnknownTopicOrPartition,
                                          fmt::format("topic '{}' has no partition {}", topic, data.index)));
  }
  const storage::TopicPartition tp{topic, data.index};
  std::vector<storage::RecordError> record_errors;
  std::shared_ptr<storage::PartitionLog> log;
  Result<storage::AppendResult> appended =
      append_partition(ctx, tp, acks, data.records.bytes(), &record_errors, &log);
  if (!appended.ok()) {
    ctx.env.log.debug("produce to {} failed: {}", tp.to_string(), appended.status().to_string());
    return failed(data.index, appended.status(), std::move(record_errors));
  }
  if (appended->sync_deferred) {
    SLUICE_ASSERT(log != nullptr);
    *unsynced = UnsyncedAppend{0, 0, std::move(log), appended->last_offset + 1};
  }
  PartitionResponse out;
  out.index = data.index;
  out.base_offset = appended->base_offset;
  out.log_append_time_ms = appended->log_append_time_ms;
  out.log_start_offset = appended->log_start_offset;
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

struct Produced {
  ProduceResponse response;
  std::vector<UnsyncedAppend> unsynced;
};

Produced produce(RequestContext& ctx, const ProduceRequest& request) {
  if (!valid_acks(request.acks)) {
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
  for (const ProduceRequest::TopicData& topic : request.topic_data) {
    ProduceResponse::TopicResponse& answer = out.response.responses.emplace_back();
    answer.name = topic.name;
    const Result<int32_t> partitions = topic_partitions(ctx, topic.name);
    for (const ProduceRequest::PartitionData& partition : topic.partition_data) {
      std::optional<UnsyncedAppend> unsynced;
      answer.partition_responses.push_back(
          partitions.ok() ? produce_partition(ctx, topic.name, *partitions, request.acks, partition, &unsynced)
                          : failed(partition.index, partitions.status()));
      if (unsynced) {
        unsynced->topic = out.response.responses.size() - 1;
        unsynced->partition = answer.partition_responses.size() - 1;
        out.unsynced.push_back(std::move(*unsynced));
      }
    }
  }
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

  Result<HandlerOutcome> operator()(const ProduceResponse& response) const {
    if (acks == 0) {
      // No response frame; a failure closes the connection so that the client notices and refreshes metadata.
      const bool close = any_error(response);
      if (close) env.log.info("closing the connection from {}: an acks=0 produce failed", peer.to_string());
      return HandlerOutcome{std::nullopt, close, {}};
    }
    Bytes out;
    SLUICE_TRY(protocol::encode_message(response, version, &out));
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
  const Answer answer{ctx.env, ctx.peer, ctx.version(), request.acks};
  if (produced.unsynced.empty()) return answer(produced.response);
  HandlerOutcome waiting;
  waiting.complete = [produced = std::move(produced), answer]() mutable -> Result<HandlerOutcome> {
    for (const UnsyncedAppend& unsynced : produced.unsynced) {
      const Status synced = unsynced.log->wait_for_durability(unsynced.end_offset);
      if (synced.ok()) continue;
      PartitionResponse& out = produced.response.responses[unsynced.topic].partition_responses[unsynced.partition];
      out = failed(out.index, synced);
    }
    return answer(produced.response);
  };
  return waiting;
}

}  // namespace sluice::kafka
