// ListOffsets (2), v1-9: the log start (-2, and -4 from v8: with no tiered storage every offset is local), the
// latest offset (-1: the high watermark for consumers, which is also the last stable offset with no transactions;
// the log end for other replica ids), the first record with the largest timestamp (-3, v7+), the last tiered offset
// (-5, v9+: none, so -1 with leader epoch -1, as Kafka answers for a log without remote storage), or the first
// offset whose timestamp is at or after a given one (-1 / -1 when none is below the high watermark). Per partition,
// in Kafka's order (KafkaApis.handleListOffsetRequestV1AndAbove, ReplicaManager.fetchOffset): a partition named
// twice → INVALID_REQUEST; a negative timestamp that is not one of these or is newer than the request's version →
// UNSUPPORTED_VERSION; unknown → UNKNOWN_TOPIC_OR_PARTITION; then the leader epoch fence.
//
// The lookups themselves, and the leader epoch fence, are the partition's (cluster::Partition::offset_for_timestamp,
// as Kafka's Partition.fetchOffsetForTimestamp). v0 (handleListOffsetRequestV0) answers a list of offsets instead:
// see cluster::Partition::legacy_offsets_before. It checks neither repeated partitions nor leader epochs.
#include <map>
#include <memory>
#include <optional>

#include "core/cluster/partition.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/list_offsets.h"

namespace sluice::kafka {
namespace {

using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int32_t kConsumerReplicaId = -1;

// A consumer sees up to the high watermark; other replica ids (the -2 debug consumer) up to the log end.
cluster::ReadUpTo visible_to(const ListOffsetsRequest& request) {
  return request.replica_id == kConsumerReplicaId ? cluster::ReadUpTo::kHighWatermark : cluster::ReadUpTo::kLogEnd;
}

// The first version that may ask for each special timestamp.
int16_t first_version_for(int64_t special_timestamp) {
  switch (special_timestamp) {
    case protocol::kLatestTimestamp:
    case protocol::kEarliestTimestamp: return 1;
    case protocol::kMaxTimestamp: return 7;
    case protocol::kEarliestLocalTimestamp: return 8;
    case protocol::kLatestTieredTimestamp: return 9;
    default: return protocol::kMaxVersion;
  }
}

ListOffsetsResponse::Partition failed(int32_t index, int16_t error_code) {
  ListOffsetsResponse::Partition partition;
  partition.partition_index = index;
  partition.error_code = error_code;
  return partition;
}

ListOffsetsResponse::Partition lookup(RequestContext& ctx, const ListOffsetsRequest& request, const std::string& topic,
                                      const ListOffsetsRequest::Partition& wanted) {
  const int64_t timestamp = wanted.timestamp;
  if (timestamp < 0 && ctx.version() < first_version_for(timestamp)) {
    return failed(wanted.partition_index, wire_code(ErrorCode::kUnsupportedVersion));
  }
  std::shared_ptr<cluster::Partition> partition = ctx.broker.partitions().find(topic, wanted.partition_index);
  if (partition == nullptr) {
    return failed(wanted.partition_index, wire_code(ctx.broker.partition_not_here({topic, wanted.partition_index})));
  }
  Result<std::optional<cluster::TimestampAndOffset>> found =
      partition->offset_for_timestamp(timestamp, visible_to(request), wanted.current_leader_epoch);
  if (!found.ok()) return failed(wanted.partition_index, wire_code(to_error_code(found.status())));
  ListOffsetsResponse::Partition out = failed(wanted.partition_index, 0);
  if (!found->has_value()) return out;  // none: offset, timestamp and leader epoch -1
  out.offset = (*found)->offset;
  out.timestamp = (*found)->timestamp;
  out.leader_epoch = (*found)->leader_epoch;
  return out;
}

ListOffsetsResponse::Partition legacy_lookup(RequestContext& ctx, const ListOffsetsRequest& request,
                                             const std::string& topic, const ListOffsetsRequest::Partition& wanted) {
  if (wanted.timestamp < protocol::kEarliestTimestamp) {
    return failed(wanted.partition_index, wire_code(ErrorCode::kUnsupportedVersion));
  }
  std::shared_ptr<cluster::Partition> partition = ctx.broker.partitions().find(topic, wanted.partition_index);
  if (partition == nullptr) {
    return failed(wanted.partition_index, wire_code(ctx.broker.partition_not_here({topic, wanted.partition_index})));
  }
  // Kafka sizes an array by the count and fails on a negative one (an unexpected exception there).
  if (wanted.max_num_offsets < 0) return failed(wanted.partition_index, wire_code(ErrorCode::kUnknownServerError));
  ListOffsetsResponse::Partition out = failed(wanted.partition_index, 0);
  out.old_style_offsets =
      partition->legacy_offsets_before(wanted.timestamp, wanted.max_num_offsets, visible_to(request));
  return out;
}

ListOffsetsResponse legacy_list_offsets(RequestContext& ctx, const ListOffsetsRequest& request) {
  ListOffsetsResponse response;
  for (const ListOffsetsRequest::Topic& topic : request.topics) {
    ListOffsetsResponse::Topic& out = response.topics.emplace_back();
    out.name = topic.name;
    for (const ListOffsetsRequest::Partition& partition : topic.partitions) {
      out.partitions.push_back(legacy_lookup(ctx, request, topic.name, partition));
    }
  }
  return response;
}

Result<ListOffsetsResponse> list_offsets(RequestContext& ctx, const ListOffsetsRequest& request) {
  if (ctx.version() == 0) return legacy_list_offsets(ctx, request);
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
