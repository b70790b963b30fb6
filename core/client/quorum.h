// The cluster metadata quorum as `kafka-metadata-quorum.sh describe` shows it: DescribeQuorum asked of the node
// that leads it (DescribeCluster's controller), and the two views of the tool, --status and --replication, as
// text. The formatting is apart from the call so that tests and the simulator can print a response they hold.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/result.h"
#include "core/client/client.h"
#include "core/protocol/messages/describe_quorum.h"

namespace sluice::client {

struct QuorumDescription {
  std::string cluster_id;
  protocol::DescribeQuorumResponse::Partition quorum;  // `__cluster_metadata` partition 0, without error
};

// DescribeCluster for the cluster id and the controller, then DescribeQuorum of that node; NOT_LEADER_OR_FOLLOWER
// (the leadership moved meanwhile) is retried as the client retries any retriable error.
Result<QuorumDescription> describe_metadata_quorum(Client& client);

// `describe --status`: ClusterId, LeaderId, LeaderEpoch, HighWatermark, MaxFollowerLag, MaxFollowerLagTimeMs,
// CurrentVoters and CurrentObservers, one per line, as Kafka 3.8's tool prints them (v0-1 carry no directory ids
// or endpoints).
std::string format_quorum_status(const QuorumDescription& description);
// `describe --replication`: a table of NodeId, LogEndOffset, Lag, LastFetchTimestamp, LastCaughtUpTimestamp and
// Status (Leader, Follower, Observer), the leader first. With `now_ms` >= 0 the timestamps read "N ms ago" (the
// tool's --human-readable).
std::string format_quorum_replication(const QuorumDescription& description, int64_t now_ms = -1);

}  // namespace sluice::client
