// ListOffsets (2), v1-9: the log start (-2, and -4 from v8: with no tiered storage every offset is local), the
// latest offset (-1: the high watermark for consumers, which is also the last stable offset with no transactions;
// the log end for other replica ids), the first record with the largest timestamp (-3, v7+), the last tiered offset
// (-5, v9+: none, so -1 with leader epoch -1, as Kafka answers for a log without remote storage), or the first
// offset whose timestamp is at or after a given one (-1 / -1 when none is below the high watermark). Per partition,
// in Kafka's order (KafkaApis.handleListOffsetRequestV1AndAbove, ReplicaManager.fetchOffset): a partition named
// twice → INVALID_REQUEST; a negative timestamp that is not one of these or is newer than the request's version →
// UNSUPPORTED_VERSION; unknown → UNKNOWN_TOPIC_OR_PARTITION; then the leader epoch fence.
//
// v0 (handleListOffsetRequestV0) answers a list of offsets instead: see legacy_offsets_before. It checks neither
// repeated partitions nor leader epochs.
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

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
  std::shared_ptr<storage::PartitionLog> log = ctx.broker.logs().find_shared({topic, wanted.partition_index});
  if (log == nullptr) return failed(wanted.partition_index, wire_code(ErrorCode::kUnknownTopicOrPartition));
  if (int16_t fenced = check_current_leader_epoch(wanted.current_leader_epoch); fenced != 0) {
    return failed(wanted.partition_index, fenced);
  }
  ListOffsetsResponse::Partition out = failed(wanted.partition_index, 0);
  out.leader_epoch = kCurrentLeaderEpoch;
  if (timestamp == protocol::kEarliestTimestamp || timestamp == protocol::kEarliestLocalTimestamp) {
    out.offset = log->log_start_offset();
  } else if (timestamp == protocol::kLatestTimestamp) {
    // Kafka: a consumer sees up to the HW (read_uncommitted) or the LSO (read_committed), equal here; other
    // replica ids (the -2 debug consumer) see the log end.
    out.offset = request.replica_id == kConsumerReplicaId ? log->high_watermark() : log->log_end_offset();
  } else if (timestamp == protocol::kLatestTieredTimestamp) {
    out.leader_epoch = kUndefinedEpoch;  // offset and timestamp stay -1: nothing is tiered
  } else {
    Result<std::optional<storage::OffsetAndTimestamp>> found =
        timestamp == protocol::kMaxTimestamp ? log->max_timestamp() : log->offset_for_timestamp(timestamp);
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

// v0's answer (UnifiedLog.legacyFetchOffsetsBefore): a list of entries, one per segment (its base offset, raised to
// the log start, with its time) and the log end at `now_ms` when the active segment holds data; the answer is the
// offsets of the last entry dated at or before `timestamp` (-1: the last entry, -2: the first) and of the entries
// before it, newest first, at most `max_num_offsets`. Kafka dates a segment by its file's modification time, which
// the Env does not offer: here a segment is dated by its largest record timestamp, and never before the segment
// ahead of it (appends come in order, and so do modification times).
std::vector<int64_t> legacy_offsets_before(const storage::PartitionLog& log, int64_t timestamp,
                                           int32_t max_num_offsets, int64_t now_ms) {
  struct Entry {
    int64_t offset;
    int64_t time_ms;
  };
  const std::vector<storage::SegmentInfo> segments = log.segments();
  std::vector<Entry> entries;
  int64_t time_ms = -1;
  for (const storage::SegmentInfo& segment : segments) {
    time_ms = std::max(time_ms, segment.max_timestamp);
    entries.push_back({std::max(segment.base_offset, log.log_start_offset()), time_ms});
  }
  if (!segments.empty() && segments.back().size_bytes > 0) entries.push_back({log.log_end_offset(), now_ms});
  auto last = static_cast<std::ptrdiff_t>(entries.size()) - 1;
  if (timestamp == protocol::kEarliestTimestamp) {
    last = std::min<std::ptrdiff_t>(last, 0);
  } else if (timestamp != protocol::kLatestTimestamp) {
    while (last >= 0 && entries[static_cast<size_t>(last)].time_ms > timestamp) --last;
  }
  std::vector<int64_t> offsets;
  for (std::ptrdiff_t i = last; i >= 0 && std::ssize(offsets) < max_num_offsets; --i) {
    offsets.push_back(entries[static_cast<size_t>(i)].offset);
  }
  std::stable_sort(offsets.begin(), offsets.end(), std::greater<>());
  return offsets;
}

ListOffsetsResponse::Partition legacy_lookup(RequestContext& ctx, const ListOffsetsRequest& request,
                                             const std::string& topic, const ListOffsetsRequest::Partition& wanted) {
  if (wanted.timestamp < protocol::kEarliestTimestamp) {
    return failed(wanted.partition_index, wire_code(ErrorCode::kUnsupportedVersion));
  }
  std::shared_ptr<storage::PartitionLog> log = ctx.broker.logs().find_shared({topic, wanted.partition_index});
  if (log == nullptr) return failed(wanted.partition_index, wire_code(ErrorCode::kUnknownTopicOrPartition));
  // Kafka sizes an array by the count and fails on a negative one (an unexpected exception there).
  if (wanted.max_num_offsets < 0) return failed(wanted.partition_index, wire_code(ErrorCode::kUnknownServerError));
  ListOffsetsResponse::Partition out = failed(wanted.partition_index, 0);
  out.old_style_offsets = legacy_offsets_before(*log, wanted.timestamp, wanted.max_num_offsets,
                                                to_unix_ms(ctx.env.clock.wall_now()));
  // A consumer sees nothing past the high watermark, which takes the place of the offsets beyond it.
  const int64_t high_watermark = log->high_watermark();
  std::vector<int64_t>& offsets = out.old_style_offsets;
  if (!offsets.empty() && offsets.front() > high_watermark && request.replica_id == kConsumerReplicaId) {
    std::erase_if(offsets, [&](int64_t offset) { return offset > high_watermark; });
    offsets.insert(offsets.begin(), high_watermark);
  }
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
