// OffsetCommit (8), OffsetFetch (9), OffsetDelete (47): committed offsets through the group coordinator
// (core/group), which keeps them in __consumer_offsets.
//
// Version 0 of OffsetCommit and OffsetFetch: Kafka 3.9 keeps those offsets in ZooKeeper, apart from the
// coordinator's (and a KRaft broker answers them UNSUPPORTED_VERSION). Sluice has no ZooKeeper: a v0 commit is a
// standalone commit into the coordinator (v0 has no generation or member), and a v0 fetch reads the coordinator's
// offsets but answers as the ZooKeeper path does: no metadata, and UNKNOWN_TOPIC_OR_PARTITION for a partition
// without an offset. So v0 and v1+ clients of one group see each other's offsets, which they would not on Kafka.
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_delete.h"
#include "core/protocol/messages/offset_fetch.h"

namespace sluice::kafka {
namespace {

using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;
using protocol::OffsetDeleteRequest;
using protocol::OffsetDeleteResponse;
using protocol::OffsetFetchRequest;
using protocol::OffsetFetchResponse;

Result<OffsetCommitResponse> offset_commit(RequestContext& ctx, const OffsetCommitRequest& request) {
  group::CommitRequest commit;
  commit.group_id = request.group_id;
  commit.generation_id = request.generation_id;
  commit.member_id = request.member_id;
  commit.group_instance_id = request.group_instance_id;
  const int64_t now = to_unix_ms(ctx.env.clock.wall_now());
  // v2-4: an explicit retention time becomes the offset's expire timestamp (stored in the v1 value layout).
  std::optional<int64_t> expire;
  if (ctx.version() <= 4 && request.retention_time_ms != -1) expire = now + request.retention_time_ms;
  for (const OffsetCommitRequest::Topic& topic : request.topics) {
    for (const OffsetCommitRequest::Partition& p : topic.partitions) {
      // v1's commit timestamp is stored as the client sent it (it is the base of the offset's expiry).
      const int64_t committed_at = p.commit_timestamp != -1 ? p.commit_timestamp : now;
      commit.offsets.push_back({{topic.name, p.partition_index}, p.committed_offset, p.committed_leader_epoch,
                                p.committed_metadata, committed_at, expire});
    }
  }
  const std::vector<ErrorCode> errors = ctx.broker.groups().commit(commit);
  OffsetCommitResponse response;
  size_t i = 0;
  for (const OffsetCommitRequest::Topic& topic : request.topics) {
    OffsetCommitResponse::Topic& out = response.topics.emplace_back();
    out.name = topic.name;
    for (const OffsetCommitRequest::Partition& p : topic.partitions) {
      out.partitions.push_back({p.partition_index, wire_code(errors[i++])});
    }
  }
  return response;
}

std::optional<std::vector<storage::TopicPartition>> wanted(
    const std::optional<std::vector<OffsetFetchRequest::Topic>>& topics) {
  if (!topics.has_value()) return std::nullopt;
  std::vector<storage::TopicPartition> out;
  for (const OffsetFetchRequest::Topic& t : *topics) {
    for (int32_t p : t.partition_indexes) out.push_back({t.name, p});
  }
  return out;
}

// The fetched offsets grouped by topic, in the order they came.
std::vector<OffsetFetchResponse::Topic> by_topic(const group::FetchResult& fetched) {
  std::vector<OffsetFetchResponse::Topic> topics;
  for (const group::FetchedOffset& f : fetched.partitions) {
    if (topics.empty() || topics.back().name != f.tp.topic) topics.push_back({f.tp.topic, {}});
    topics.back().partitions.push_back({f.tp.partition, f.offset, f.leader_epoch, f.metadata, wire_code(f.error)});
  }
  return topics;
}

// A group-level error before v2 has no field of its own: every requested partition carries it.
group::FetchResult fetch_group(RequestContext& ctx, const std::string& group_id,
                               const std::optional<std::vector<storage::TopicPartition>>& partitions) {
  group::FetchResult fetched = ctx.broker.groups().fetch(group_id, partitions);
  if (fetched.error != ErrorCode::kNone && partitions.has_value()) {
    for (const storage::TopicPartition& tp : *partitions) {
      group::FetchedOffset f;
      f.tp = tp;
      f.error = fetched.error;
      fetched.partitions.push_back(std::move(f));
    }
  }
  return fetched;
}

// Kafka 3.9's v0 answer (read from ZooKeeper, which keeps only the offset): no metadata, and a partition without a
// committed offset (an unknown topic has none) is UNKNOWN_TOPIC_OR_PARTITION.
void as_zookeeper_fetch(group::FetchResult& fetched) {
  for (group::FetchedOffset& f : fetched.partitions) {
    f.metadata.clear();
    if (f.error == ErrorCode::kNone && f.offset < 0) f.error = ErrorCode::kUnknownTopicOrPartition;
  }
}

Result<OffsetFetchResponse> offset_fetch(RequestContext& ctx, const OffsetFetchRequest& request) {
  OffsetFetchResponse response;
  if (ctx.version() >= 8) {
    for (const OffsetFetchRequest::Group& g : request.groups) {
      const group::FetchResult fetched = ctx.broker.groups().fetch(g.group_id, wanted(g.topics));
      response.groups.push_back({g.group_id, by_topic(fetched), wire_code(fetched.error)});
    }
    return response;
  }
  group::FetchResult fetched = fetch_group(ctx, request.group_id, wanted(request.topics));
  if (ctx.version() == 0) as_zookeeper_fetch(fetched);
  response.topics = by_topic(fetched);
  response.error_code = wire_code(fetched.error);
  return response;
}

Result<OffsetDeleteResponse> offset_delete(RequestContext& ctx, const OffsetDeleteRequest& request) {
  std::vector<storage::TopicPartition> partitions;
  for (const OffsetDeleteRequest::Topic& t : request.topics) {
    for (const OffsetDeleteRequest::Partition& p : t.partitions) partitions.push_back({t.name, p.partition_index});
  }
  const group::OffsetDeleteResult result = ctx.broker.groups().delete_offsets(request.group_id, partitions);
  OffsetDeleteResponse response;
  response.error_code = wire_code(result.error);
  if (result.error != ErrorCode::kNone) return response;  // a group error answers no partition
  size_t i = 0;
  for (const OffsetDeleteRequest::Topic& t : request.topics) {
    OffsetDeleteResponse::Topic& out = response.topics.emplace_back();
    out.name = t.name;
    for (const OffsetDeleteRequest::Partition& p : t.partitions) {
      out.partitions.push_back({p.partition_index, wire_code(result.partitions[i++])});
    }
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_offset_commit(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, offset_commit);
}
Result<HandlerOutcome> handle_offset_fetch(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, offset_fetch);
}
Result<HandlerOutcome> handle_offset_delete(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, offset_delete);
}

}  // namespace sluice::kafka
