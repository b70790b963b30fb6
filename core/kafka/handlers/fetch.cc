// Fetch (1): full, sessionless fetches, as Kafka answers when it keeps no fetch sessions (session id 0 in every
// response; an incremental request names a session that does not exist). Reads stop at the high watermark, which is
// also the last stable offset (no transactions), so read_committed sees the same data. Size limits follow KIP-74:
// until one partition has returned data, a first batch larger than the limits is returned whole; after that only
// whole batches within both the partition's and the request's remaining bytes. Long poll: while fewer than
// min_bytes are available, the request waits on the broker's append notifications until max_wait_ms.
//
// Version quirks, as KafkaApis.handleFetchRequest has them: v13+ names topics by id (an id no topic has is
// UNKNOWN_TOPIC_ID, and the response names topics by id too); v16+ answers a fenced leader epoch with the current
// leader and its endpoint (KIP-951); v4-9 cannot read zstd, so a topic whose compression.type is zstd answers them
// UNSUPPORTED_COMPRESSION_TYPE; v4-5 clients do not know KAFKA_STORAGE_ERROR and get NOT_LEADER_OR_FOLLOWER, which
// makes them refresh their metadata and retry.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/handlers/leader_epoch.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/fetch.h"
#include "core/storage/record_batch.h"

namespace sluice::kafka {
namespace {

using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::Records;

constexpr int16_t kFirstTopicIdVersion = 13;
constexpr int16_t kFirstLeaderEndpointsVersion = 16;
constexpr int16_t kFirstZstdVersion = 10;
constexpr int16_t kLastVersionWithoutStorageError = 5;

// Kafka's FetchMetadata: epoch 0 (initial) and -1 (final) make a full request; any other epoch continues an
// incremental session, and this broker never creates one.
bool is_full_fetch(const FetchRequest& request) {
  return request.session_epoch == 0 || request.session_epoch == -1;
}

FetchResponse::Partition error_partition(int32_t index, int16_t error_code) {
  FetchResponse::Partition partition;
  partition.partition_index = index;
  partition.error_code = error_code;
  partition.high_watermark = -1;
  partition.last_stable_offset = -1;
  partition.log_start_offset = -1;
  partition.records = Records::own({});
  return partition;
}

int16_t error_code_of(const Status& status) {
  // A log closed under the read was deleted meanwhile (DeleteTopics): the partition is gone.
  if (status.code() == Code::kClosed) return static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
  return static_cast<int16_t>(to_error_code(status));
}

// One pass over every requested partition.
class FetchRound {
 public:
  FetchRound(RequestContext& ctx, const FetchRequest& request)
      : ctx_(ctx), request_(request), remaining_(std::max<int64_t>(0, request.max_bytes)) {}

  // Reads every partition in request order and returns the response.
  FetchResponse run() {
    FetchResponse response;
    for (const FetchRequest::Topic& topic : request_.topics) {
      FetchResponse::Topic& out = response.responses.emplace_back();
      out.topic = topic.topic;
      out.topic_id = topic.topic_id;
      const std::optional<std::string> name = topic_name(topic);
      for (const FetchRequest::Partition& partition : topic.partitions) {
        out.partitions.push_back(name ? read_partition(*name, partition)
                                      : failed(partition, ErrorCode::kUnknownTopicId));
      }
    }
    if (request_.topics.empty()) answer_now_ = true;
    if (named_leader_) {
      const BrokerConfig& config = ctx_.broker.config();
      response.node_endpoints.emplace().push_back(
          {config.node_id, config.advertised_host, config.advertised_port, std::nullopt});
    }
    return response;
  }

  // Kafka answers at once when enough bytes are there, a partition failed or diverged, or a partition holds more
  // than the limits let through (the response is as full as it may be).
  bool satisfied() const { return answer_now_ || bytes_ >= request_.min_bytes; }
  // True when a log's high watermark moved after this round read it (an append notified while the round was
  // suspended in another partition's read): read again rather than wait for the next append.
  bool stale() const {
    return std::any_of(seen_.begin(), seen_.end(),
                       [](const Seen& s) { return s.log->high_watermark() != s.high_watermark; });
  }

 private:
  struct Seen {
    std::shared_ptr<storage::PartitionLog> log;
    int64_t high_watermark;
  };

  std::optional<std::string> topic_name(const FetchRequest::Topic& topic) const;
  FetchResponse::Partition failed(const FetchRequest::Partition& request, int16_t error_code);
  FetchResponse::Partition failed(const FetchRequest::Partition& request, ErrorCode error) {
    return failed(request, static_cast<int16_t>(error));
  }
  FetchResponse::Partition read_partition(const std::string& topic, const FetchRequest::Partition& request);
  std::optional<FetchResponse::Partition> check_diverging(storage::PartitionLog& log,
                                                          const FetchRequest::Partition& request);
  Result<storage::ReadResult> read_log(storage::PartitionLog& log, const FetchRequest::Partition& request);
  void account(FetchResponse::Partition& partition, const FetchRequest::Partition& request);

  RequestContext& ctx_;
  const FetchRequest& request_;
  int64_t remaining_;        // of the request's max_bytes
  bool min_one_batch_ = true;  // no partition has returned data yet (KIP-74)
  int64_t bytes_ = 0;
  bool answer_now_ = false;
  bool named_leader_ = false;  // a partition names its current leader: the response lists its endpoint
  std::vector<Seen> seen_;
};

// v13+ names a topic by id; nullopt when no topic has it.
std::optional<std::string> FetchRound::topic_name(const FetchRequest::Topic& topic) const {
  if (ctx_.version() < kFirstTopicIdVersion) return topic.topic;
  const TopicInfo* info = ctx_.broker.topics().find_by_id(topic.topic_id);
  if (info == nullptr) return std::nullopt;
  return info->name;  // a copy: the topic may be deleted while a read suspends
}

// A partition that answers an error at once, in the form its version understands.
FetchResponse::Partition FetchRound::failed(const FetchRequest::Partition& request, int16_t error_code) {
  answer_now_ = true;
  if (error_code == wire_code(ErrorCode::kKafkaStorageError) && ctx_.version() <= kLastVersionWithoutStorageError) {
    error_code = wire_code(ErrorCode::kNotLeaderOrFollower);
  }
  FetchResponse::Partition partition = error_partition(request.partition, error_code);
  const bool leader_moved = error_code == wire_code(ErrorCode::kFencedLeaderEpoch) ||
                            error_code == wire_code(ErrorCode::kNotLeaderOrFollower);
  if (leader_moved && ctx_.version() >= kFirstLeaderEndpointsVersion) {
    partition.current_leader = protocol::LeaderIdAndEpoch{ctx_.broker.config().node_id, kCurrentLeaderEpoch};
    named_leader_ = true;
  }
  return partition;
}

FetchResponse::Partition FetchRound::read_partition(const std::string& topic,
                                                    const FetchRequest::Partition& request) {
  storage::LogManager& logs = ctx_.broker.logs();
  std::shared_ptr<storage::PartitionLog> log = logs.find_shared({topic, request.partition});
  if (log == nullptr) return failed(request, ErrorCode::kUnknownTopicOrPartition);
  const storage::TopicConfig* config = logs.topic_config({topic, request.partition});
  if (config != nullptr && config->compression_type == storage::Compression::kZstd &&
      ctx_.version() < kFirstZstdVersion) {
    return failed(request, ErrorCode::kUnsupportedCompressionType);
  }
  if (int16_t fenced = check_current_leader_epoch(request.current_leader_epoch); fenced != 0) {
    return failed(request, fenced);
  }
  if (std::optional<FetchResponse::Partition> diverged = check_diverging(*log, request)) {
    answer_now_ = true;
    return *std::move(diverged);
  }
  Result<storage::ReadResult> read = read_log(*log, request);
  if (!read.ok()) {
    if (read.status().code() == Code::kCorruption) {
      // Damage in stored data is the operator's to repair: say so at every refused read.
      ctx_.broker.env().log.error("fetch of {}-{}: {}", topic, request.partition, read.status().message());
    }
    return failed(request, error_code_of(read.status()));
  }
  seen_.push_back({log, read->high_watermark});
  FetchResponse::Partition partition;
  partition.partition_index = request.partition;
  partition.high_watermark = read->high_watermark;
  partition.last_stable_offset = read->high_watermark;  // no open transactions: LSO = HW (pitfall 7)
  partition.log_start_offset = read->log_start_offset;
  if (request_.isolation_level == protocol::kReadCommitted) {
    partition.aborted_transactions.emplace();  // Kafka: a list (empty) under read_committed, null otherwise
  }
  partition.records = Records::own(std::move(read->records));
  account(partition, request);
  return partition;
}

// v12 LastFetchedEpoch (Partition.readRecords): the fetch must not run past the end of the epoch the fetcher last
// saw, else the response names the epoch and end offset it diverged at, with no records.
std::optional<FetchResponse::Partition> FetchRound::check_diverging(storage::PartitionLog& log,
                                                                    const FetchRequest::Partition& request) {
  if (request.last_fetched_epoch < 0) return std::nullopt;
  const EpochEndOffset end =
      end_offset_for_epoch(request.last_fetched_epoch, log.log_start_offset(), log.log_end_offset());
  if (end.epoch == kUndefinedEpoch || end.end_offset == kUndefinedEpochOffset ||
      request.fetch_offset < log.log_start_offset()) {
    return error_partition(request.partition, static_cast<int16_t>(ErrorCode::kOffsetOutOfRange));
  }
  if (end.epoch >= request.last_fetched_epoch && end.end_offset >= request.fetch_offset) return std::nullopt;
  FetchResponse::Partition partition;
  partition.partition_index = request.partition;
  partition.high_watermark = log.high_watermark();
  partition.last_stable_offset = log.high_watermark();
  partition.log_start_offset = log.log_start_offset();
  partition.diverging_epoch = FetchResponse::EpochEndOffset{end.epoch, end.end_offset};
  partition.records = Records::own({});
  return partition;
}

Result<storage::ReadResult> FetchRound::read_log(storage::PartitionLog& log, const FetchRequest::Partition& request) {
  const int64_t limit = std::min<int64_t>(std::max(0, request.partition_max_bytes), remaining_);
  if (!min_one_batch_ && limit == 0) {
    // No bytes left for this partition: the range check and the offsets, without reading.
    SLUICE_ASSIGN_OR_RETURN(storage::ReadResult result, log.read(request.fetch_offset, 0, request.fetch_offset));
    return result;
  }
  SLUICE_ASSIGN_OR_RETURN(storage::ReadResult result,
                          log.read(request.fetch_offset, static_cast<size_t>(limit), log.high_watermark()));
  // The log returns at least one batch; past the first partition with data, one over the limit is dropped whole
  // rather than cut (a partial batch is legal, but never one spilling into the next partition: pitfall 6).
  if (!min_one_batch_ && !result.records.empty()) {
    Result<storage::BatchHeader> first = storage::parse_batch_header(result.records);
    if (!first.ok() || static_cast<int64_t>(first->size_bytes()) > limit) result.records.clear();
  }
  return result;
}

// Counts the partition's bytes against the request and notes whether it holds more than it returned.
void FetchRound::account(FetchResponse::Partition& partition, const FetchRequest::Partition& request) {
  const ByteView records = partition.records.bytes();
  int64_t next_offset = request.fetch_offset;
  if (!records.empty()) {
    size_t consumed = 0;
    Result<std::vector<storage::BatchSpan>> spans = storage::split_batches(records, &consumed);
    if (spans.ok() && !spans->empty()) next_offset = spans->back().header.last_offset() + 1;
    min_one_batch_ = false;
  }
  const auto size = static_cast<int64_t>(records.size());
  bytes_ += size;
  remaining_ = std::max<int64_t>(0, remaining_ - size);
  if (next_offset < partition.high_watermark) answer_now_ = true;
}

Result<FetchResponse> fetch(RequestContext& ctx, const FetchRequest& request) {
  if (!is_full_fetch(request)) {
    FetchResponse response;
    response.error_code = static_cast<int16_t>(ErrorCode::kFetchSessionIdNotFound);
    return response;
  }
  const Instant deadline = ctx.env.clock.now() + std::chrono::milliseconds(std::max(0, request.max_wait_ms));
  bool expired = false;
  while (true) {
    FetchRound round(ctx, request);
    FetchResponse response = round.run();
    if (expired || round.satisfied() || ctx.broker.stopping() || ctx.env.clock.now() >= deadline) return response;
    if (round.stale()) continue;
    // Kafka's delayed fetch reads once more when it expires; so does this one.
    expired = !ctx.broker.appended().wait_until(deadline);
  }
}

}  // namespace

Result<HandlerOutcome> handle_fetch(RequestContext& ctx, ByteView body) { return typed(ctx, body, fetch); }

}  // namespace sluice::kafka
