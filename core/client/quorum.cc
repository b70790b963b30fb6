#include "core/client/quorum.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/protocol/messages/describe_cluster.h"

namespace sluice::client {
namespace {

using protocol::DescribeQuorumResponse;
using ReplicaState = DescribeQuorumResponse::ReplicaState;

constexpr int kAttempts = 5;
constexpr Duration kBackoff = std::chrono::milliseconds(200);

Status not_leader(std::string why) {
  return Status(Code::kInvalidArgument, std::move(why), static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower));
}

// One DescribeCluster and one DescribeQuorum; no leader yet, or the leadership moved between the two, comes back
// as NOT_LEADER_OR_FOLLOWER for the caller's loop.
Result<QuorumDescription> describe_once(Client& client) {
  SLUICE_ASSIGN_OR_RETURN(protocol::DescribeClusterResponse cluster,
                          client.call<protocol::DescribeClusterResponse>(-1, protocol::DescribeClusterRequest{}));
  if (cluster.error_code != 0) {
    return Status(Code::kInvalidArgument, "DescribeCluster: " + cluster.error_message.value_or(""), cluster.error_code);
  }
  if (cluster.controller_id < 0) return not_leader("the metadata quorum has no leader yet");
  protocol::DescribeQuorumRequest request;
  request.topics.push_back({.topic_name = protocol::kClusterMetadataTopic, .partitions = {{.partition_index = 0}}});
  SLUICE_ASSIGN_OR_RETURN(DescribeQuorumResponse response,
                          client.call<DescribeQuorumResponse>(cluster.controller_id, request));
  if (response.error_code != 0) return Status(Code::kInvalidArgument, "DescribeQuorum", response.error_code);
  if (response.topics.size() != 1 || response.topics[0].partitions.size() != 1) {
    return Status(Code::kCorruption, "DescribeQuorum answered for another partition than __cluster_metadata-0");
  }
  const DescribeQuorumResponse::Partition& partition = response.topics[0].partitions[0];
  if (partition.error_code == static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower)) {
    return not_leader("the metadata quorum's leadership moved");
  }
  if (partition.error_code != 0) {
    return Status(Code::kInvalidArgument, "DescribeQuorum __cluster_metadata-0", partition.error_code);
  }
  return QuorumDescription{.cluster_id = cluster.cluster_id, .quorum = partition};
}

const ReplicaState* leader_of(const QuorumDescription& d) {
  for (const ReplicaState& voter : d.quorum.current_voters) {
    if (voter.replica_id == d.quorum.leader_id) return &voter;
  }
  return nullptr;
}

std::string ids(const std::vector<ReplicaState>& replicas) {
  std::string text;
  for (const ReplicaState& r : replicas) text += fmt::format("{}{}", text.empty() ? "" : ",", r.replica_id);
  return "[" + text + "]";
}

std::string timestamp(int64_t ms, int64_t now_ms) {
  if (ms < 0 || now_ms < 0) return fmt::format("{}", ms);
  return fmt::format("{} ms ago", std::max<int64_t>(0, now_ms - ms));
}

}  // namespace

Result<QuorumDescription> describe_metadata_quorum(Client& client) {
  Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (attempt > 0) client.env().scheduler.sleep_for(kBackoff);
    Result<QuorumDescription> described = describe_once(client);
    const bool moved = !described.ok() &&
                       described.status().protocol_error() == static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower);
    if (!moved) return described;
    last = described.status();
  }
  return last;
}

std::string format_quorum_status(const QuorumDescription& d) {
  const ReplicaState* leader = leader_of(d);
  int64_t max_lag = 0;
  int64_t max_lag_time_ms = 0;
  if (leader != nullptr && !d.quorum.current_voters.empty()) {
    // Kafka's tool: the voter with the lowest log end offset, and how far its last catch-up trails the leader's.
    const ReplicaState& laggiest = *std::min_element(
        d.quorum.current_voters.begin(), d.quorum.current_voters.end(),
        [](const ReplicaState& a, const ReplicaState& b) { return a.log_end_offset < b.log_end_offset; });
    max_lag = leader->log_end_offset - laggiest.log_end_offset;
    if (laggiest.replica_id != leader->replica_id) {
      max_lag_time_ms = leader->last_caught_up_timestamp >= 0 && laggiest.last_caught_up_timestamp >= 0
                            ? leader->last_caught_up_timestamp - laggiest.last_caught_up_timestamp
                            : -1;
    }
  }
  return fmt::format(
      "ClusterId:              {}\nLeaderId:               {}\nLeaderEpoch:            {}\n"
      "HighWatermark:          {}\nMaxFollowerLag:         {}\nMaxFollowerLagTimeMs:   {}\n"
      "CurrentVoters:          {}\nCurrentObservers:       {}\n",
      d.cluster_id, d.quorum.leader_id, d.quorum.leader_epoch, d.quorum.high_watermark, max_lag, max_lag_time_ms,
      ids(d.quorum.current_voters), ids(d.quorum.observers));
}

std::string format_quorum_replication(const QuorumDescription& d, int64_t now_ms) {
  const ReplicaState* leader = leader_of(d);
  const int64_t leader_end = leader != nullptr ? leader->log_end_offset : -1;
  std::vector<std::vector<std::string>> rows = {
      {"NodeId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"}};
  auto add = [&](const ReplicaState& r, const char* status) {
    rows.push_back({fmt::format("{}", r.replica_id), fmt::format("{}", r.log_end_offset),
                    fmt::format("{}", leader_end - r.log_end_offset), timestamp(r.last_fetch_timestamp, now_ms),
                    timestamp(r.last_caught_up_timestamp, now_ms), status});
  };
  if (leader != nullptr) add(*leader, "Leader");
  for (const ReplicaState& r : d.quorum.current_voters) {
    if (r.replica_id != d.quorum.leader_id) add(r, "Follower");
  }
  for (const ReplicaState& r : d.quorum.observers) add(r, "Observer");
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 1, ' ');
    }
    text += line + "\n";
  }
  return text;
}

}  // namespace sluice::client
