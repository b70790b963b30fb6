// The requests this client sends, built from what a call means (a partition, an offset, a group), and the readers
// of their answers. Pure functions without I/O: the calls (client.cc, admin.cc, producer.cc, group_member.cc)
// send what these build, and tests/core/client/codec_cross_check_test.cc compares their encoding with other
// clients' captured frames. A builder fills the fields of every version it may be encoded at (the old and the new
// layout of an API both); the encoder skips those outside the chosen version.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/client/client.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/create_topics.h"
#include "core/protocol/messages/delete_records.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_configs.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/find_coordinator.h"
#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/incremental_alter_configs.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/list_offsets.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_fetch.h"
#include "core/protocol/messages/produce.h"
#include "core/protocol/messages/sync_group.h"

namespace sluice::client {

inline constexpr const char* kSoftwareName = "sluice-client";
inline constexpr const char* kSoftwareVersion = "0.1.0";

// ---- Connection, metadata ----
protocol::ApiVersionsRequest api_versions_request();
// `topics` empty: every topic.
protocol::MetadataRequest metadata_request(const std::vector<std::string>& topics, bool allow_auto_create);
ClusterInfo cluster_info(const protocol::MetadataResponse& response);

// ---- Produce ----
struct PartitionRecords {
  TopicPartitionId tp;
  ByteView records;  // one or more record batches; viewed, not copied, until encoded
};
// Partitions of one topic go under one topic entry, in order of first appearance.
protocol::ProduceRequest produce_request(int16_t acks, int32_t timeout_ms, const std::vector<PartitionRecords>& data);
// The same for one partition's records (a producer's every request), without a list to build first.
protocol::ProduceRequest produce_request(int16_t acks, int32_t timeout_ms, const TopicPartitionId& tp,
                                         ByteView records);
// The answer for `tp`; kCorruption when the response lacks it.
Result<protocol::ProduceResponse::PartitionResponse> produce_answer(const protocol::ProduceResponse& response,
                                                                    const TopicPartitionId& tp);
// One record batch of `records`, with absolute timestamps (-1 → `now_ms`) and offsets 0..n-1.
Result<Bytes> build_record_batch(const std::vector<ProducerRecord>& records, int64_t now_ms,
                                 const storage::BatchOptions& options);
protocol::InitProducerIdRequest init_producer_id_request(int64_t producer_id, int16_t producer_epoch);

// ---- Fetch and offsets ----
protocol::FetchRequest fetch_request(const TopicPartitionId& tp, int64_t offset, const FetchOptions& options);
// One request for several partitions (each topic once, its partitions in the order given).
protocol::FetchRequest fetch_request(std::span<const FetchPosition> positions, const FetchOptions& options);
// The partition's answer with its records decoded (batches checked by CRC; control batches, records below
// `offset` and a trailing partial batch dropped). kCorruption when the response lacks the partition or a batch
// is damaged.
// `answer` holds the bytes the response's records view; the FetchView takes it.
Result<FetchView> read_fetch(const protocol::FetchResponse& response, Bytes answer, const TopicPartitionId& tp,
                             int64_t offset);
// As read_fetch, leaving the answer's bytes (which the records view) with the caller.
Result<FetchView> read_fetch_partition(const protocol::FetchResponse& response, const TopicPartitionId& tp,
                                       int64_t offset);
// `next_offset`, when given, is raised to the end of the last whole batch returned (control batches included).
// A compressed batch's records are decompressed into a buffer added to `decompressed`, which they view.
Status decode_fetched_records(ByteView records, int64_t offset, std::vector<FetchedRecordView>* out,
                              std::vector<Bytes>* decompressed, int64_t* next_offset = nullptr);
// The same, with each key and value copied out of `records`.
Status decode_fetched_records(ByteView records, int64_t offset, std::vector<FetchedRecord>* out,
                              int64_t* next_offset = nullptr);
// A FetchResult that owns what `view` viewed.
FetchResult owned_fetch_result(const FetchView& view);
protocol::ListOffsetsRequest list_offsets_request(const TopicPartitionId& tp, int64_t timestamp);
// The partition's answer; its error code is the caller's to judge.
Result<protocol::ListOffsetsResponse::Partition> list_offsets_answer(const protocol::ListOffsetsResponse& response,
                                                                     const TopicPartitionId& tp);

// ---- Groups ----
protocol::FindCoordinatorRequest find_coordinator_request(const std::string& group_id);
struct Coordinator {
  int16_t error_code = 0;
  BrokerInfo broker;
};
// The first coordinator of a v4+ answer, or the single one of a v0-3 answer; COORDINATOR_NOT_AVAILABLE when it
// names no node.
Coordinator coordinator_answer(const protocol::FindCoordinatorResponse& response);

struct MemberIdentity {
  std::string group_id;
  std::string member_id;
  int32_t generation = -1;
  std::optional<std::string> group_instance_id;
};
inline constexpr const char* kConsumerProtocolType = "consumer";
inline constexpr const char* kRangeAssignor = "range";
// JoinGroup offering the range assignor with `subscription` (consumer_protocol.h).
protocol::JoinGroupRequest join_group_request(const GroupConfig& config, const std::string& member_id,
                                              Bytes subscription);
protocol::SyncGroupRequest sync_group_request(const MemberIdentity& member,
                                              const std::map<std::string, Bytes>& assignments);
protocol::HeartbeatRequest heartbeat_request(const MemberIdentity& member);
protocol::LeaveGroupRequest leave_group_request(const MemberIdentity& member);
protocol::OffsetCommitRequest offset_commit_request(const MemberIdentity& member,
                                                    const std::map<TopicPartitionId, int64_t>& offsets);
// The first error of the answer (a group-level or partition error), 0 when every partition was committed.
int16_t offset_commit_error(const protocol::OffsetCommitResponse& response);
// `partitions` empty: every partition the group committed (null topics, v2+; v1 has no null and asks for none).
protocol::OffsetFetchRequest offset_fetch_request(const std::string& group_id,
                                                  const std::vector<TopicPartitionId>& partitions, int16_t version);
// Committed offsets (-1 when none) of the partitions answered; a group or partition error fails.
// (A v8+ answer lists groups; an older one has the group's topics at the top.)
Result<std::map<TopicPartitionId, int64_t>> offset_fetch_answer(const protocol::OffsetFetchResponse& response);

// ---- Admin ----
protocol::CreateTopicsRequest create_topics_request(const std::vector<NewTopic>& topics, int32_t timeout_ms);
// The answer for `name`: ok, or its error.
Status create_topics_answer(const protocol::CreateTopicsResponse& response, const std::string& name);
protocol::DeleteTopicsRequest delete_topics_request(const std::vector<std::string>& names, int32_t timeout_ms);
Status delete_topics_answer(const protocol::DeleteTopicsResponse& response, const std::string& name);
protocol::IncrementalAlterConfigsRequest alter_configs_request(const std::string& topic,
                                                               const std::vector<ConfigChange>& changes);
Status alter_configs_answer(const protocol::IncrementalAlterConfigsResponse& response, const std::string& topic);
protocol::DescribeConfigsRequest describe_configs_request(const std::string& topic);
// Every config of the topic that has a value.
Result<std::map<std::string, std::string>> describe_configs_answer(const protocol::DescribeConfigsResponse& response,
                                                                   const std::string& topic);
protocol::DeleteRecordsRequest delete_records_request(const TopicPartitionId& tp, int64_t before_offset,
                                                      int32_t timeout_ms);
// The partition's new low watermark.
Result<int64_t> delete_records_answer(const protocol::DeleteRecordsResponse& response, const TopicPartitionId& tp);

}  // namespace sluice::client
