// DeleteRecords (21): moves each partition's log start to the offset given (-1: the high watermark) and answers
// with the new low watermark. Kafka's refusals (ReplicaManager.deleteRecordsOnLocalLog, here; then
// Partition.deleteRecordsOnLeader, cluster::Partition::delete_records): an internal topic is
// INVALID_TOPIC_EXCEPTION, an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION, a topic whose cleanup.policy
// lacks delete POLICY_VIOLATION, an offset below -1 or above the high watermark OFFSET_OUT_OF_RANGE. A failed
// partition reports low watermark -1.
#include "core/protocol/messages/delete_records.h"

#include <fmt/format.h>

#include "core/cluster/partition.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using protocol::DeleteRecordsRequest;
using protocol::DeleteRecordsResponse;

Result<int64_t> delete_partition_records(Broker& broker, const std::string& topic, int32_t partition, int64_t offset,
                                         Instant deadline) {
  if (is_internal_topic(topic)) {
    return kafka_error(ErrorCode::kInvalidTopicException,
                       fmt::format("Cannot delete records of internal topic {}", topic));
  }
  const storage::TopicPartition tp{topic, partition};
  const std::shared_ptr<cluster::Partition> found = broker.partitions().find(tp);
  if (found == nullptr) {
    if (const auto* offline = broker.partitions().offline(tp)) return offline->reason;
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("{} does not exist", tp.to_string()));
  }
  return found->delete_records(offset, deadline);
}

Result<DeleteRecordsResponse> delete_records(RequestContext& ctx, const DeleteRecordsRequest& request) {
  DeleteRecordsResponse response;
  const Instant deadline = ctx.env.clock.now() + std::chrono::milliseconds(std::max(request.timeout_ms, 0));
  for (const DeleteRecordsRequest::Topic& topic : request.topics) {
    DeleteRecordsResponse::Topic& answer = response.topics.emplace_back();
    answer.name = topic.name;
    for (const DeleteRecordsRequest::Partition& partition : topic.partitions) {
      DeleteRecordsResponse::Partition& result = answer.partitions.emplace_back();
      result.partition_index = partition.partition_index;
      Result<int64_t> low =
          delete_partition_records(ctx.broker, topic.name, partition.partition_index, partition.offset, deadline);
      if (low.ok()) {
        result.low_watermark = *low;
        continue;
      }
      result.error_code = static_cast<int16_t>(to_error_code(low.status()));
      ctx.env.log.info("DeleteRecords {}-{} to {}: {}", topic.name, partition.partition_index, partition.offset,
                       low.status().to_string());
    }
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_delete_records(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, delete_records);
}

}  // namespace sluice::kafka
