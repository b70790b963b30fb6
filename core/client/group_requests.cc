// Builders and readers for the group requests: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// OffsetCommit, OffsetFetch (requests.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/client/errors.h"
#include "core/client/requests.h"

namespace sluice::client {

using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;
using protocol::OffsetFetchRequest;
using protocol::OffsetFetchResponse;

namespace {

int32_t to_ms(Duration d) {
  return static_cast<int32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

std::vector<OffsetFetchRequest::Topic> fetch_topics(const std::vector<TopicPartitionId>& partitions) {
  std::vector<OffsetFetchRequest::Topic> topics;
  for (const TopicPartitionId& tp : partitions) {
    auto topic = std::find_if(topics.begin(), topics.end(),
                              [&](const OffsetFetchRequest::Topic& t) { return t.name == tp.topic; });
    if (topic == topics.end()) topic = topics.insert(topics.end(), OffsetFetchRequest::Topic{tp.topic, {}});
    topic->partition_indexes.push_back(tp.partition);
  }
  return topics;
}

}  // namespace

protocol::FindCoordinatorRequest find_coordinator_request(const std::string& group_id) {
  protocol::FindCoordinatorRequest request;
  request.key = group_id;  // v0-3
  request.key_type = protocol::kCoordinatorGroup;
  request.coordinator_keys = {group_id};  // v4+
  return request;
}

Coordinator coordinator_answer(const protocol::FindCoordinatorResponse& response) {
  Coordinator out;
  if (!response.coordinators.empty()) {  // v4+
    const protocol::FindCoordinatorResponse::Coordinator& first = response.coordinators.front();
    out.error_code = first.error_code;
    out.broker = {first.node_id, Address{first.host, static_cast<uint16_t>(first.port)}};
  } else {
    out.error_code = response.error_code;
    out.broker = {response.node_id, Address{response.host, static_cast<uint16_t>(response.port)}};
  }
  if (out.error_code == 0 && out.broker.node_id < 0) out.error_code = errc::kCoordinatorNotAvailable;
  return out;
}

protocol::JoinGroupRequest join_group_request(const GroupConfig& config, const std::string& member_id,
                                              Bytes subscription) {
  protocol::JoinGroupRequest request;
  request.group_id = config.group_id;
  request.session_timeout_ms = to_ms(config.session_timeout);
  request.rebalance_timeout_ms = to_ms(config.rebalance_timeout);
  request.member_id = member_id;
  request.group_instance_id = config.group_instance_id;
  request.protocol_type = kConsumerProtocolType;
  request.protocols.push_back({kRangeAssignor, std::move(subscription)});
  return request;
}

protocol::SyncGroupRequest sync_group_request(const MemberIdentity& member,
                                              const std::map<std::string, Bytes>& assignments) {
  protocol::SyncGroupRequest request;
  request.group_id = member.group_id;
  request.generation_id = member.generation;
  request.member_id = member.member_id;
  request.group_instance_id = member.group_instance_id;
  for (const auto& [member_id, assignment] : assignments) request.assignments.push_back({member_id, assignment});
  return request;
}

protocol::HeartbeatRequest heartbeat_request(const MemberIdentity& member) {
  protocol::HeartbeatRequest request;
  request.group_id = member.group_id;
  request.generation_id = member.generation;
  request.member_id = member.member_id;
  request.group_instance_id = member.group_instance_id;
  return request;
}

protocol::LeaveGroupRequest leave_group_request(const MemberIdentity& member) {
  protocol::LeaveGroupRequest request;
  request.group_id = member.group_id;
  request.member_id = member.member_id;                                     // v0-2
  request.members.push_back({member.member_id, member.group_instance_id, std::nullopt});  // v3+
  return request;
}

OffsetCommitRequest offset_commit_request(const MemberIdentity& member,
                                          const std::map<TopicPartitionId, int64_t>& offsets) {
  OffsetCommitRequest request;
  request.group_id = member.group_id;
  request.generation_id = member.generation;
  request.member_id = member.member_id;
  request.group_instance_id = member.group_instance_id;
  request.retention_time_ms = -1;             // the broker's offsets.retention.minutes
  for (const auto& [tp, offset] : offsets) {  // ordered by topic, so each topic's partitions are adjacent
    if (request.topics.empty() || request.topics.back().name != tp.topic) request.topics.push_back({tp.topic, {}});
    OffsetCommitRequest::Partition partition;
    partition.partition_index = tp.partition;
    partition.committed_offset = offset;
    partition.committed_metadata = "";  // the Java consumer's OffsetAndMetadata default
    request.topics.back().partitions.push_back(std::move(partition));
  }
  return request;
}

int16_t offset_commit_error(const OffsetCommitResponse& response) {
  for (const OffsetCommitResponse::Topic& topic : response.topics) {
    for (const OffsetCommitResponse::Partition& partition : topic.partitions) {
      if (partition.error_code != 0) return partition.error_code;
    }
  }
  return 0;
}

OffsetFetchRequest offset_fetch_request(const std::string& group_id, const std::vector<TopicPartitionId>& partitions,
                                        int16_t version) {
  OffsetFetchRequest request;
  std::optional<std::vector<OffsetFetchRequest::Topic>> topics = fetch_topics(partitions);
  if (partitions.empty() && version >= 2) topics = std::nullopt;
  request.group_id = group_id;  // v0-7
  request.topics = topics;
  OffsetFetchRequest::Group& group = request.groups.emplace_back();  // v8+
  group.group_id = group_id;
  group.topics = topics;
  return request;
}

Result<std::map<TopicPartitionId, int64_t>> offset_fetch_answer(const OffsetFetchResponse& response) {
  const std::vector<OffsetFetchResponse::Topic>* topics = &response.topics;
  int16_t group_error = response.error_code;
  if (!response.groups.empty()) {  // v8+
    topics = &response.groups.front().topics;
    group_error = response.groups.front().error_code;
  }
  if (group_error != 0) return broker_error(group_error, "offset fetch");
  std::map<TopicPartitionId, int64_t> committed;
  for (const OffsetFetchResponse::Topic& topic : *topics) {
    for (const OffsetFetchResponse::Partition& partition : topic.partitions) {
      const TopicPartitionId tp{topic.name, partition.partition_index};
      if (partition.error_code != 0) return broker_error(partition.error_code, "offset fetch " + tp.to_string());
      committed[tp] = partition.committed_offset;
    }
  }
  return committed;
}

}  // namespace sluice::client
