// OffsetForLeaderEpoch (23), v0-4: the end offset of the largest leader epoch at or below the one asked for
// (cluster::Partition::last_offset_for_leader_epoch: on one node epoch 0 spans the whole log, so it ends at the log
// end offset; a newer epoch is undefined, -1 / -1). Consumers use it to detect log truncation after a leader change
// (KIP-320). Unknown partitions get UNKNOWN_TOPIC_OR_PARTITION; a stale or future CurrentLeaderEpoch (v2+) is
// fenced as in Fetch. v0-1 carry no current epoch (-1: not checked, as Kafka's Partition.lastOffsetForLeaderEpoch
// skips an empty one), and v0's answer has no epoch field; the replica id (v3+, -2 before) changes nothing in Kafka
// 3.9's handler.
#include <memory>

#include "core/cluster/partition.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/offset_for_leader_epoch.h"

namespace sluice::kafka {
namespace {

using protocol::OffsetForLeaderEpochRequest;
using protocol::OffsetForLeaderEpochResponse;

OffsetForLeaderEpochResponse::Partition end_of_epoch(RequestContext& ctx, const std::string& topic,
                                                     const OffsetForLeaderEpochRequest::Partition& wanted) {
  OffsetForLeaderEpochResponse::Partition out;
  out.partition = wanted.partition;
  std::shared_ptr<cluster::Partition> partition = ctx.broker.partitions().find(topic, wanted.partition);
  if (partition == nullptr) {
    out.error_code = wire_code(ctx.broker.partition_not_here({topic, wanted.partition}));
    return out;
  }
  const Result<cluster::EpochEndOffset> end =
      partition->last_offset_for_leader_epoch(wanted.current_leader_epoch, wanted.leader_epoch);
  if (!end.ok()) {
    out.error_code = wire_code(to_error_code(end.status()));
    return out;
  }
  if (end->end_offset != cluster::kUndefinedEpochOffset) {  // Kafka leaves both at -1 when the offset is undefined
    out.leader_epoch = end->epoch;
    out.end_offset = end->end_offset;
  }
  return out;
}

Result<OffsetForLeaderEpochResponse> offset_for_leader_epoch(RequestContext& ctx,
                                                             const OffsetForLeaderEpochRequest& request) {
  OffsetForLeaderEpochResponse response;
  for (const OffsetForLeaderEpochRequest::Topic& topic : request.topics) {
    OffsetForLeaderEpochResponse::Topic& out = response.topics.emplace_back();
    out.topic = topic.topic;
    for (const OffsetForLeaderEpochRequest::Partition& partition : topic.partitions) {
      out.partitions.push_back(end_of_epoch(ctx, topic.topic, partition));
    }
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_offset_for_leader_epoch(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, offset_for_leader_epoch);
}

}  // namespace sluice::kafka
