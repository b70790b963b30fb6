// DescribeQuorum (55): the state of the cluster metadata quorum, Kafka's `__cluster_metadata` partition 0, which
// Sluice keeps in its metadata raft group (core/cluster/raft_groups.h). As Kafka's KafkaRaftClient: a request that
// does not name exactly that one partition gets UNKNOWN_TOPIC_OR_PARTITION on every partition it names; a node that
// does not lead the group answers NOT_LEADER_OR_FOLLOWER (the caller asks the leader, DescribeCluster's controller);
// the leader answers from its raft status. Offsets are Kafka's: raft index i is offset i - 1, so a log end offset
// (the next offset) is the last index, and the high watermark is the commit index. A replica's log end offset is
// what the leader knows it holds (its match index); the leader's own is its last index. Voters and observers
// (learners) are listed with the leader's wall clock at their latest answer (LastFetchTimestamp) and at their
// latest answer that held the leader's whole log (LastCaughtUpTimestamp), to the raft tick; the leader reports the
// current time for both, as Kafka 3.9 does. A single node has no metadata quorum: UNKNOWN_TOPIC_OR_PARTITION.
#include "core/protocol/messages/describe_quorum.h"

#include <algorithm>

#include "core/cluster/raft_groups.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"
#include "core/raft/host.h"

namespace sluice::kafka {
namespace {

using protocol::DescribeQuorumRequest;
using protocol::DescribeQuorumResponse;

bool names_the_metadata_partition(const DescribeQuorumRequest& request) {
  return request.topics.size() == 1 && request.topics[0].topic_name == protocol::kClusterMetadataTopic &&
         request.topics[0].partitions.size() == 1 && request.topics[0].partitions[0].partition_index == 0;
}

// Every partition the request names, with `error`.
DescribeQuorumResponse partition_errors(const DescribeQuorumRequest& request, ErrorCode error) {
  DescribeQuorumResponse response;
  for (const DescribeQuorumRequest::Topic& topic : request.topics) {
    DescribeQuorumResponse::Topic& out = response.topics.emplace_back();
    out.topic_name = topic.topic_name;
    for (const DescribeQuorumRequest::Partition& partition : topic.partitions) {
      out.partitions.push_back({.partition_index = partition.partition_index,
                                .error_code = static_cast<int16_t>(error)});
    }
  }
  return response;
}

DescribeQuorumResponse metadata_partition(DescribeQuorumResponse::Partition partition) {
  DescribeQuorumResponse response;
  response.topics.push_back({.topic_name = protocol::kClusterMetadataTopic, .partitions = {std::move(partition)}});
  return response;
}

// The time `ticks` raft ticks before `now_ms` (-1 stays -1: never).
int64_t ticks_before(int64_t now_ms, int64_t ticks, Duration tick) {
  if (ticks < 0) return -1;
  return now_ms - ticks * std::chrono::duration_cast<std::chrono::milliseconds>(tick).count();
}

DescribeQuorumResponse::Partition leader_view(const raft::GroupStatus& status, int64_t now_ms, Duration tick) {
  DescribeQuorumResponse::Partition partition;
  partition.leader_id = static_cast<int32_t>(status.id);
  partition.leader_epoch = static_cast<int32_t>(status.term);
  partition.high_watermark = static_cast<int64_t>(status.commit_index);
  partition.current_voters.push_back({.replica_id = static_cast<int32_t>(status.id),
                                      .log_end_offset = static_cast<int64_t>(status.last_index),
                                      .last_fetch_timestamp = now_ms,
                                      .last_caught_up_timestamp = now_ms});
  for (const raft::FollowerStatus& follower : status.followers) {
    DescribeQuorumResponse::ReplicaState replica{
        .replica_id = static_cast<int32_t>(follower.id),
        .log_end_offset = static_cast<int64_t>(follower.match),
        .last_fetch_timestamp = ticks_before(now_ms, follower.ticks_since_answer, tick),
        .last_caught_up_timestamp = ticks_before(now_ms, follower.ticks_since_caught_up, tick)};
    (follower.learner ? partition.observers : partition.current_voters).push_back(replica);
  }
  // By id, as the voters are configured: the leader first would move with every election.
  std::sort(partition.current_voters.begin(), partition.current_voters.end(),
            [](const auto& a, const auto& b) { return a.replica_id < b.replica_id; });
  std::sort(partition.observers.begin(), partition.observers.end(),
            [](const auto& a, const auto& b) { return a.replica_id < b.replica_id; });
  return partition;
}

Result<DescribeQuorumResponse> describe_quorum(RequestContext& ctx, const DescribeQuorumRequest& request) {
  ClusterTopics* cluster = ctx.broker.cluster();
  if (cluster == nullptr || !names_the_metadata_partition(request)) {
    return partition_errors(request, ErrorCode::kUnknownTopicOrPartition);
  }
  const raft::RaftHost& host = cluster->node().host();
  const std::optional<raft::GroupStatus> status = host.status(cluster::kMetadataGroup);
  if (!status || status->role != raft::Role::kLeader) {
    return metadata_partition({.error_code = static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower)});
  }
  return metadata_partition(leader_view(*status, to_unix_ms(ctx.env.clock.wall_now()), host.options().tick));
}

}  // namespace

Result<HandlerOutcome> handle_describe_quorum(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, describe_quorum);
}

}  // namespace sluice::kafka
