// ListOffsets (2), v1-5: the log start (-2), the latest offset (-1: the high watermark for consumers, which is also
// the last stable offset with no transactions; the log end for other replica ids), or the first offset whose
// timestamp is at or after a given one (-1 / -1 when none is below the high watermark). Per partition, in Kafka's
// order (ReplicaManager.fetchOffset): a partition named twice → INVALID_REQUEST; another negative timestamp (-3
// and below need v7+) → UNSUPPORTED_VERSION; unknown → UNKNOWN_TOPIC_OR_PARTITION; then the leader epoch fence.
#include <map>
#include <memory>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/handlers/leader_epoch.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/list_offsets.h"

namespace sluice::kafka {
namespace {

using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int32_t kConsumerReplicaId = -1;

ListOffsetsResponse::Partition failed(int32_t index, int16_t error_code) {
  ListOffsetsResponse::Partition partition;
  partition.partition_index = index;
  partition.error_code = error_code;
  return partition;
}

ListOffsetsResponse::Partition lookup(RequestContext& ctx, const ListOffsetsRequest& request, const std::string& topic,
                                      const ListOffsetsRequest::Partition& wanted) {
  const int64_t timestamp = wanted.timestamp;
  if (timestamp < 0 && timestamp != protocol::kLatestTimestamp && timestamp != protocol::kEarliestTimestamp) {
    return failed(wanted.partition_index, wire_code(ErrorCode::kUnsupportedVersion));
  }
  std::shared_ptr<storage::PartitionLog> log = ctx.broker.logs().find_shared({topic, wanted.partition_index});
  if (log == nullptr) return failed(wanted.partition_index, wire_code(ErrorCode::kUnknownTopicOrPartition));
  if (int16_t fenced = check_current_leader_epoch(wanted.current_leader_epoch); fenced != 0) {
    return failed(wanted.partition_index, fenced);
  }
  ListOffsetsResponse::Partition out = failed(wanted.partition_index, 0);
  out.leader_epoch = kCurrentLeaderEpoch;
  if (timestamp == protocol::kEarliestTimestamp) {
    out.offset = log->log_start_offset();
  } else if (timestamp == protocol::kLatestTimestamp) {
    // Kafka: a consumer sees up to the HW (read_uncommitted) or the LSO (read_committed), equal here; other
    // replica ids (the -2 debug consumer) see the log end.
    out.offset = request.replica_id == kConsumerReplicaId ? log->high_watermark() : log->log_end_offset();
  } else {
    Result<std::optional<storage::OffsetAndTimestamp>> found = log->offset_for_timestamp(timestamp);
    if (!found.ok()) {
      const int16_t error = found.status().code() == Code::kClosed ? wire_code(ErrorCode::kUnknownTopicOrPartition)
                                                                   : wire_code(to_error_code(found.status()));
      return failed(wanted.partition_index, error);
    }
    if (!found->has_value()) return failed(wanted.partition_index, 0);  // none: offset and timestamp -1
    out.offset = (*found)->offset;
    out.timestamp = (*found)->timestamp;
  }
  return out;
}

Result<ListOffsetsResponse> list_offsets(RequestContext& ctx, const ListOffsetsRequest& request) {
  std::map<storage::TopicPartition, int> mentions;
  for (const ListOffsetsRequest::Topic& topic : request.topics) {
    for (const ListOffsetsRequest::Partition& partition : topic.partitions) {
      ++mentions[{topic.name, partition.partition_index}];
    }
  }
  ListOffsetsResponse response;
  for (const ListOffsetsRequest::Topic& topic : request.topics) {
    ListOffsetsResponse::Topic& out = response.topics.emplace_back();
    out.name = topic.name;
    for (const ListOffsetsRequest::Partition& partition : topic.partitions) {
      if (mentions[{topic.name, partition.partition_index}] > 1) {
        out.partitions.push_back(failed(partition.partition_index, wire_code(ErrorCode::kInvalidRequest)));
      } else {
        out.partitions.push_back(lookup(ctx, request, topic.name, partition));
      }
    }
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_list_offsets(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, list_offsets);
}

}  // namespace sluice::kafka
