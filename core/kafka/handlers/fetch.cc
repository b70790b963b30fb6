// Fetch (1): full, sessionless fetches, as Kafka answers when it keeps no fetch sessions (session id 0 in every
// response; an incremental request names a session that does not exist). Each partition is read through its
// cluster::Partition (the leader-epoch fence, the diverging-epoch check, the read), which stops at the high
// watermark, also the last stable offset (no transactions), so read_committed sees the same data. Size limits
// follow KIP-74: until one partition has returned data, a first batch larger than the limits is returned whole;
// after that only whole batches within both the partition's and the request's remaining bytes. Long poll: while
// fewer than min_bytes are available, the request waits until max_wait_ms for an append to (or a high watermark or
// leadership move of) one of the partitions it read, as Kafka's DelayedFetch purgatory is keyed by partition.
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

#include "core/base/assert.h"
#include "core/cluster/append_watch.h"
#include "core/cluster/partition.h"
#include "core/cluster/partition_manager.h"
#include "core/env/buggify.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
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
// BUGGIFY's "fetch.fewer-bytes" answers a partition with at most this many bytes (at least a batch when the
// fetch's first partition has one, as the min-one-batch rule says).
constexpr int64_t kBuggifyFewestBytes = 16 * 1024;
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

// What a Fetch response takes besides its records, at most: per partition its fixed fields, tagged fields and
// records length; per topic its name or id and counts; the top-level fields and a leader endpoint.
constexpr int64_t kPartitionFramingBytes = 128;
constexpr int64_t kTopicFramingBytes = 32;
constexpr int64_t kResponseFramingBytes = 96;

int64_t framing_bytes(const FetchRequest& request, const BrokerConfig& config) {
  int64_t total = kResponseFramingBytes + static_cast<int64_t>(config.advertised_host.size());
  for (const FetchRequest::Topic& topic : request.topics) {
    total += kTopicFramingBytes + static_cast<int64_t>(topic.topic.size()) +
             kPartitionFramingBytes * static_cast<int64_t>(topic.partitions.size());
  }
  return total;
}

// One pass over every requested partition. Records are bounded three ways: the request's max_bytes capped by the
// broker's fetch.max.bytes (KafkaApis: min of the two, and min_bytes at most that), KIP-74's first-batch exception
// aside; and, whatever the settings, what a frame can carry once the response's framing is counted, so that no
// answer outgrows its int32 size (records that would are left out, as the limits leave them out).
class FetchRound {
 public:
  FetchRound(RequestContext& ctx, const FetchRequest& request)
      : ctx_(ctx),
        request_(request),
        max_bytes_(std::min<int64_t>(std::max(0, request.max_bytes), ctx.broker.config().fetch_max_bytes)),
        remaining_(max_bytes_),
        room_(static_cast<int64_t>(max_response_bytes(ctx)) - framing_bytes(request, ctx.broker.config())) {}

  // Reads every partition in request order and returns the response.
  FetchResponse run() {
    FetchResponse response;
    response.responses.reserve(request_.topics.size());
    size_t partitions = 0;
    for (const FetchRequest::Topic& topic : request_.topics) partitions += topic.partitions.size();
    seen_.reserve(partitions);
    for (const FetchRequest::Topic& topic : request_.topics) {
      FetchResponse::Topic& out = response.responses.emplace_back();
      out.topic = topic.topic;
      out.topic_id = topic.topic_id;
      out.partitions.reserve(topic.partitions.size());
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
  bool satisfied() const { return answer_now_ || bytes_ >= std::min<int64_t>(request_.min_bytes, max_bytes_); }
  // True when a partition's high watermark moved after this round read it (an append notified while the round was
  // suspended in another partition's read): read again rather than wait for the next append.
  bool stale() const {
    return std::any_of(seen_.begin(), seen_.end(),
                       [](const Seen& s) { return s.partition->high_watermark() != s.high_watermark; });
  }
  // Parks until a partition this round read notifies, or the broker stops (true), or `deadline` (false). The round
  // keeps those partitions alive while the watch is linked to them.
  bool wait_for_appends(Instant deadline) const {
    cluster::AppendWatch watch(ctx_.env.scheduler, seen_.size() + 1);
    watch.watch(ctx_.broker.partitions().broker_wide());
    for (const Seen& s : seen_) watch.watch(s.partition->appends());
    return watch.wait_until(deadline);
  }

 private:
  struct Seen {
    std::shared_ptr<cluster::Partition> partition;
    int64_t high_watermark;
  };

  std::optional<std::string> topic_name(const FetchRequest::Topic& topic) const;
  // `partition` (null when unknown) names the current leader when the error says the leader moved.
  FetchResponse::Partition failed(const FetchRequest::Partition& request, int16_t error_code,
                                  const cluster::Partition* partition = nullptr);
  FetchResponse::Partition failed(const FetchRequest::Partition& request, ErrorCode error) {
    return failed(request, static_cast<int16_t>(error));
  }
  FetchResponse::Partition read_partition(const std::string& topic, const FetchRequest::Partition& request);
  FetchResponse::Partition diverged(const FetchRequest::Partition& request, const cluster::PartitionRead& read);
  void account(FetchResponse::Partition& partition, const FetchRequest::Partition& request);

  RequestContext& ctx_;
  const FetchRequest& request_;
  int64_t max_bytes_;        // the request's max_bytes, at most fetch.max.bytes
  int64_t remaining_;        // of max_bytes_
  int64_t room_;             // for records in the response's frame (may be negative: no records fit)
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
FetchResponse::Partition FetchRound::failed(const FetchRequest::Partition& request, int16_t error_code,
                                            const cluster::Partition* partition) {
  answer_now_ = true;
  if (error_code == wire_code(ErrorCode::kKafkaStorageError) && ctx_.version() <= kLastVersionWithoutStorageError) {
    error_code = wire_code(ErrorCode::kNotLeaderOrFollower);
  }
  FetchResponse::Partition out = error_partition(request.partition, error_code);
  const bool leader_moved = error_code == wire_code(ErrorCode::kFencedLeaderEpoch) ||
                            error_code == wire_code(ErrorCode::kNotLeaderOrFollower);
  if (leader_moved && partition != nullptr && ctx_.version() >= kFirstLeaderEndpointsVersion) {
    out.current_leader = protocol::LeaderIdAndEpoch{partition->leader(), partition->leader_epoch()};
    named_leader_ = true;
  }
  return out;
}

FetchResponse::Partition FetchRound::read_partition(const std::string& topic,
                                                    const FetchRequest::Partition& request) {
  std::shared_ptr<cluster::Partition> partition = ctx_.broker.partitions().find(topic, request.partition);
  if (partition == nullptr) return failed(request, ctx_.broker.partition_not_here({topic, request.partition}));
  if (partition->config().compression_type == storage::Compression::kZstd && ctx_.version() < kFirstZstdVersion) {
    return failed(request, ErrorCode::kUnsupportedCompressionType);
  }
  const cluster::FetchPosition position{request.fetch_offset, request.current_leader_epoch,
                                        request.last_fetched_epoch};
  int64_t limit = std::max<int64_t>(
      0, std::min({static_cast<int64_t>(std::max(0, request.partition_max_bytes)), remaining_, room_}));
  if (limit > 1 && SLUICE_BUGGIFY(ctx_.broker.env().buggify, "fetch.fewer-bytes")) {
    // Fewer bytes than allowed, as Kafka's read stops at a segment's end: the consumer must fetch again from there.
    limit = 1 + static_cast<int64_t>(ctx_.broker.env().buggify.random().uniform(
                    static_cast<uint64_t>(std::min<int64_t>(limit - 1, kBuggifyFewestBytes))));
  }
  Result<cluster::PartitionRead> read = partition->read(position, static_cast<size_t>(limit), min_one_batch_);
  if (!read.ok()) {
    if (read.status().code() == Code::kCorruption) {
      // Damage in stored data is the operator's to repair: say so at every refused read.
      ctx_.broker.env().log.error("fetch of {}-{}: {}", topic, request.partition, read.status().message());
    }
    return failed(request, wire_code(to_error_code(read.status())), partition.get());
  }
  if (read->diverging) return diverged(request, *read);
  seen_.push_back({partition, read->data.high_watermark});
  if (static_cast<int64_t>(read->data.records.size()) > room_) {
    // Only a first batch (KIP-74) can get here, and only when it and the framing would not fit in a frame.
    SLUICE_PROBE("fetch.records_exceed_frame");
    read->data.records.clear();
    answer_now_ = true;
  }
  FetchResponse::Partition out;
  out.partition_index = request.partition;
  out.high_watermark = read->data.high_watermark;
  out.last_stable_offset = read->data.high_watermark;  // no open transactions: LSO = HW (pitfall 7)
  out.log_start_offset = read->data.log_start_offset;
  if (request_.isolation_level == protocol::kReadCommitted) {
    out.aborted_transactions.emplace();  // Kafka: a list (empty) under read_committed, null otherwise
  }
  out.records = Records::own(std::move(read->data.records));
  account(out, request);
  return out;
}

// v12 LastFetchedEpoch: the fetcher's epoch ended before its fetch offset. The answer names where, with no records.
FetchResponse::Partition FetchRound::diverged(const FetchRequest::Partition& request,
                                              const cluster::PartitionRead& read) {
  answer_now_ = true;
  FetchResponse::Partition out;
  out.partition_index = request.partition;
  out.high_watermark = read.data.high_watermark;
  out.last_stable_offset = read.data.high_watermark;
  out.log_start_offset = read.data.log_start_offset;
  out.diverging_epoch = FetchResponse::EpochEndOffset{read.diverging->epoch, read.diverging->end_offset};
  out.records = Records::own({});
  return out;
}

// Counts the partition's bytes against the request and notes whether it holds more than it returned.
void FetchRound::account(FetchResponse::Partition& partition, const FetchRequest::Partition& request) {
  const ByteView records = partition.records.bytes();
  int64_t next_offset = request.fetch_offset;
  if (!records.empty()) {
    // Past the last whole batch: a walk over the headers (split_batches would build a vector of every batch).
    for (size_t at = 0; records.size() - at >= storage::kBatchHeaderBytes;) {
      storage::BatchHeader header;
      if (!storage::parse_valid_batch_header(records.subspan(at), &header)) {
        next_offset = request.fetch_offset;  // as a failed split left it
        break;
      }
      if (header.size_bytes() > records.size() - at) break;
      next_offset = header.last_offset() + 1;
      at += header.size_bytes();
    }
    min_one_batch_ = false;
  }
  const auto size = static_cast<int64_t>(records.size());
  bytes_ += size;
  remaining_ = std::max<int64_t>(0, remaining_ - size);
  room_ -= size;
  if (next_offset < partition.high_watermark) answer_now_ = true;
}

// The partitions of a long poll that has nothing to read yet: each one this node leads, at the request's leader
// epoch, readable in its version, and asked for from its high watermark (no records, no error, no moved leader);
// empty when any partition falls outside that, or the request may not wait. Its first round would build an answer
// without records and drop it to wait: the caller waits first instead, and the round after reads as that one would.
std::vector<std::shared_ptr<cluster::Partition>> waiting_at_high_watermarks(RequestContext& ctx,
                                                                           const FetchRequest& request) {
  std::vector<std::shared_ptr<cluster::Partition>> waiting;
  if (request.max_wait_ms <= 0 || request.min_bytes <= 0 || request.max_bytes <= 0 ||
      ctx.broker.config().fetch_max_bytes <= 0 || request.topics.empty() || ctx.version() >= kFirstTopicIdVersion ||
      ctx.broker.stopping()) {
    return waiting;
  }
  for (const FetchRequest::Topic& topic : request.topics) {
    for (const FetchRequest::Partition& p : topic.partitions) {
      std::shared_ptr<cluster::Partition> partition = ctx.broker.partitions().find(topic.topic, p.partition);
      const bool idle = partition != nullptr && p.partition_max_bytes > 0 && partition->is_leader() &&
                        (p.current_leader_epoch < 0 || p.current_leader_epoch == partition->leader_epoch()) &&
                        p.last_fetched_epoch < 0 && p.fetch_offset == partition->high_watermark() &&
                        (partition->config().compression_type != storage::Compression::kZstd ||
                         ctx.version() >= kFirstZstdVersion);
      if (!idle) return {};
      waiting.push_back(std::move(partition));
    }
  }
  return waiting;
}

Result<FetchResponse> fetch(RequestContext& ctx, const FetchRequest& request) {
  if (!is_full_fetch(request)) {
    FetchResponse response;
    response.error_code = static_cast<int16_t>(ErrorCode::kFetchSessionIdNotFound);
    return response;
  }
  const Instant deadline = ctx.env.clock.now() + std::chrono::milliseconds(std::max(0, request.max_wait_ms));
  bool expired = false;
  if (const auto waiting = waiting_at_high_watermarks(ctx, request); !waiting.empty()) {
    SLUICE_PROBE("fetch.waits_before_its_first_round");
    cluster::AppendWatch watch(ctx.env.scheduler, waiting.size() + 1);
    watch.watch(ctx.broker.partitions().broker_wide());
    for (const auto& partition : waiting) watch.watch(partition->appends());
    expired = !watch.wait_until(deadline);
  }
  while (true) {
    FetchRound round(ctx, request);
    FetchResponse response = round.run();
    if (expired || round.satisfied() || ctx.broker.stopping() || ctx.env.clock.now() >= deadline) return response;
    if (round.stale()) continue;
    // Kafka's delayed fetch reads once more when it expires; so does this one.
    expired = !round.wait_for_appends(deadline);
  }
}

}  // namespace

Result<HandlerOutcome> handle_fetch(RequestContext& ctx, ByteView body) { return typed(ctx, body, fetch); }

}  // namespace sluice::kafka
