// The client's request encoding against another client's: for every API this client sends that kafka-python 2.0.2
// also sent (foreign_frames.h, from fuzz/corpus), the foreign frame is decoded with core/protocol (and its fields
// checked against what make_corpus.py asked kafka-python to send), then the same content is built with this
// client's request builders (requests.h) and encoded: the bytes must be kafka-python's, header aside. The broker
// and this client share core/protocol, so a codec bug both sides agree on would hide from every simulated test;
// this one compares with bytes neither side wrote.
//
// Where kafka-python chooses differently from this client (a field this client always sets otherwise, or a second
// partition or resource its calls never combine), the built request is patched to kafka-python's choice; each
// patch says which. The opaque group blobs (subscription, assignment) are passed through: their layout is checked in
// consumer_protocol_test.cc.
//
// foreign_frames.h was generated from fuzz/corpus/*.bin with a few lines of Python (hex of each file, 96 digits a
// line); regenerate it when fuzz/make_corpus.py changes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/client/consumer_protocol.h"
#include "core/client/requests.h"
#include "core/protocol/header.h"
#include "tests/core/client/foreign_frames.h"

namespace sluice::client {
namespace {

using namespace testing;
using protocol::ApiKey;

std::string hex(ByteView bytes) {
  std::string out;
  for (uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

Bytes unhex(std::string_view text) {
  Bytes out;
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

struct Foreign {
  protocol::RequestHeader header;
  Bytes frame;
  ByteView body;
  int16_t version() const { return header.api_version; }
};

Foreign foreign(std::string_view name, ApiKey api) {
  Foreign out;
  for (const ForeignFrame& frame : kKafkaPythonFrames) {
    if (frame.name == name) out.frame = unhex(frame.hex);
  }
  EXPECT_FALSE(out.frame.empty()) << name;
  Result<protocol::RequestHeader> header = protocol::decode_request_header(out.frame, &out.body);
  EXPECT_TRUE(header.ok()) << name << ": " << header.status().to_string();
  if (header.ok()) out.header = *header;
  EXPECT_EQ(out.header.api_key, api) << name;
  EXPECT_EQ(out.header.client_id, "kafka-python");
  return out;
}

template <protocol::ApiMessage Req>
Req decoded(const Foreign& f) {
  Result<Req> request = protocol::decode_message<Req>(f.body, f.version());
  EXPECT_TRUE(request.ok()) << request.status().to_string();
  return request.ok() ? *request : Req{};
}

// This client's encoding of `mine` at the foreign frame's version is the foreign body, byte for byte.
template <protocol::ApiMessage Req>
void expect_same_bytes(const Foreign& f, const Req& mine) {
  Bytes body;
  const Status encoded = protocol::encode_message(mine, f.version(), &body);
  ASSERT_TRUE(encoded.ok()) << encoded.to_string();
  EXPECT_EQ(hex(body), hex(f.body)) << protocol::api_name(Req::kApiKey) << " v" << f.version();
}

TEST(ClientCodec, ApiVersionsAndMetadataMatchKafkaPython) {
  for (const char* name : {"ApiVersions-v0", "ApiVersions-v2"}) {
    const Foreign f = foreign(name, ApiKey::kApiVersions);
    decoded<protocol::ApiVersionsRequest>(f);
    expect_same_bytes(f, api_versions_request());  // the software name and version start at v3
  }
  const Foreign all = foreign("Metadata-v1", ApiKey::kMetadata);
  EXPECT_FALSE(decoded<protocol::MetadataRequest>(all).topics.has_value()) << "null: every topic";
  expect_same_bytes(all, metadata_request({}, true));
  const Foreign named = foreign("Metadata-v5", ApiKey::kMetadata);
  const protocol::MetadataRequest request = decoded<protocol::MetadataRequest>(named);
  ASSERT_TRUE(request.topics.has_value());
  EXPECT_EQ(request.topics->size(), 2u);
  EXPECT_FALSE(request.allow_auto_topic_creation);
  expect_same_bytes(named, metadata_request({"orders", "users"}, false));
}

TEST(ClientCodec, ProduceMatchesKafkaPython) {
  for (const char* name : {"Produce-v3", "Produce-v7", "Produce-v8"}) {
    SCOPED_TRACE(name);
    const Foreign f = foreign(name, ApiKey::kProduce);
    const protocol::ProduceRequest request = decoded<protocol::ProduceRequest>(f);
    EXPECT_FALSE(request.transactional_id.has_value());
    EXPECT_EQ(request.acks, -1);
    EXPECT_EQ(request.timeout_ms, 30000);
    ASSERT_EQ(request.topic_data.size(), 1u);
    ASSERT_EQ(request.topic_data[0].partition_data.size(), 2u);
    // The records are what kafka-python built: the produce codec carries them as bytes.
    const ByteView first = request.topic_data[0].partition_data[0].records.bytes();
    const ByteView second = request.topic_data[0].partition_data[1].records.bytes();
    std::vector<FetchedRecord> records;
    ASSERT_TRUE(decode_fetched_records(first, 0, &records).ok());
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(std::string(as_chars(*records[0].value)), "hello");
    expect_same_bytes(f, produce_request(-1, 30000, {{{"orders", 0}, first}, {{"orders", 1}, second}}));
  }
}

// A producer's request for one partition encodes as the list of that one partition does.
TEST(ClientCodec, OnePartitionsProduceRequestIsTheListOfIt) {
  const Bytes records = {1, 2, 3, 4, 5};
  const TopicPartitionId tp{"orders", 3};
  for (const int16_t version : {3, 7, 8}) {
    Bytes one;
    Bytes listed;
    ASSERT_TRUE(protocol::encode_message(produce_request(1, 1500, tp, records), version, &one).ok());
    ASSERT_TRUE(protocol::encode_message(produce_request(1, 1500, {{tp, records}}), version, &listed).ok());
    EXPECT_EQ(one, listed) << "v" << version;
  }
}

TEST(ClientCodec, FetchMatchesKafkaPython) {
  FetchOptions options;
  options.max_wait = std::chrono::milliseconds(500);
  options.min_bytes = 1;
  options.max_bytes = 1048576;
  const Foreign v4 = foreign("Fetch-v4", ApiKey::kFetch);
  EXPECT_EQ(decoded<protocol::FetchRequest>(v4).topics.at(0).partitions.at(0).fetch_offset, 0);
  protocol::FetchRequest mine = fetch_request({"orders", 0}, 0, options);
  mine.max_bytes = 52428800;  // kafka-python's fetch.max.bytes; this client uses one limit for both
  expect_same_bytes(v4, mine);

  const Foreign v11 = foreign("Fetch-v11", ApiKey::kFetch);
  const protocol::FetchRequest request = decoded<protocol::FetchRequest>(v11);
  EXPECT_EQ(request.session_epoch, -1);
  EXPECT_EQ(request.topics.at(0).partitions.at(0).fetch_offset, 5);
  mine = fetch_request({"orders", 0}, 5, options);
  mine.max_bytes = 52428800;
  mine.isolation_level = protocol::kReadCommitted;    // this client reads uncommitted
  mine.topics[0].partitions[0].log_start_offset = 0;  // a consumer's -1, kafka-python's 0
  mine.rack_id = "rack-a";                            // this client names no rack
  expect_same_bytes(v11, mine);
}

TEST(ClientCodec, ListOffsetsMatchesKafkaPython) {
  const Foreign v1 = foreign("ListOffsets-v1", ApiKey::kListOffsets);
  EXPECT_EQ(decoded<protocol::ListOffsetsRequest>(v1).topics.at(0).partitions.at(0).timestamp, -1);
  expect_same_bytes(v1, list_offsets_request({"orders", 0}, kLatestTimestamp));

  // kafka-python 2.0.2 writes ListOffsets v4+'s current_leader_epoch as an int64 (Kafka's schema: int32), so its
  // v5 frame is not a Kafka frame: core/protocol refuses it, and there is nothing to compare with.
  const Foreign v5 = foreign("ListOffsets-v5", ApiKey::kListOffsets);
  EXPECT_FALSE(protocol::decode_message<protocol::ListOffsetsRequest>(v5.body, v5.version()).ok());
}

TEST(ClientCodec, GroupRequestsMatchKafkaPython) {
  const MemberIdentity member{"g1", "m-1", 3, std::nullopt};
  const Foreign find0 = foreign("FindCoordinator-v0", ApiKey::kFindCoordinator);
  EXPECT_EQ(decoded<protocol::FindCoordinatorRequest>(find0).key, "g1");
  expect_same_bytes(find0, find_coordinator_request("g1"));
  expect_same_bytes(foreign("FindCoordinator-v1", ApiKey::kFindCoordinator), find_coordinator_request("g1"));

  const Foreign join = foreign("JoinGroup-v2", ApiKey::kJoinGroup);
  const protocol::JoinGroupRequest joined = decoded<protocol::JoinGroupRequest>(join);
  ASSERT_EQ(joined.protocols.size(), 1u);
  Result<std::vector<std::string>> topics = decode_subscription(joined.protocols[0].metadata);
  ASSERT_TRUE(topics.ok()) << topics.status().to_string();
  EXPECT_EQ(*topics, std::vector<std::string>{"orders"});
  GroupConfig config;
  config.group_id = "g1";
  config.session_timeout = std::chrono::seconds(10);
  config.rebalance_timeout = std::chrono::seconds(300);
  expect_same_bytes(join, join_group_request(config, "", joined.protocols[0].metadata));

  expect_same_bytes(foreign("Heartbeat-v1", ApiKey::kHeartbeat), heartbeat_request(member));
  expect_same_bytes(foreign("LeaveGroup-v1", ApiKey::kLeaveGroup), leave_group_request(member));
  const Foreign sync = foreign("SyncGroup-v1", ApiKey::kSyncGroup);
  const protocol::SyncGroupRequest synced = decoded<protocol::SyncGroupRequest>(sync);
  ASSERT_EQ(synced.assignments.size(), 1u);
  expect_same_bytes(sync, sync_group_request(member, {{"m-1", synced.assignments[0].assignment}}));
}

TEST(ClientCodec, OffsetRequestsMatchKafkaPython) {
  const MemberIdentity member{"g1", "m-1", 3, std::nullopt};
  const Foreign commit = foreign("OffsetCommit-v2", ApiKey::kOffsetCommit);
  EXPECT_EQ(decoded<protocol::OffsetCommitRequest>(commit).topics.at(0).partitions.at(0).committed_offset, 42);
  protocol::OffsetCommitRequest mine = offset_commit_request(member, {{{"orders", 0}, 42}});
  mine.topics[0].partitions[0].committed_metadata = "meta";  // this client commits empty metadata, as Java's does
  expect_same_bytes(commit, mine);

  const Foreign some = foreign("OffsetFetch-v1", ApiKey::kOffsetFetch);
  EXPECT_EQ(decoded<protocol::OffsetFetchRequest>(some).topics->at(0).partition_indexes.size(), 2u);
  expect_same_bytes(some, offset_fetch_request("g1", {{"orders", 0}, {"orders", 1}}, some.version()));
  const Foreign all = foreign("OffsetFetch-v3", ApiKey::kOffsetFetch);
  EXPECT_FALSE(decoded<protocol::OffsetFetchRequest>(all).topics.has_value());
  expect_same_bytes(all, offset_fetch_request("g1", {}, all.version()));
}

TEST(ClientCodec, AdminRequestsMatchKafkaPython) {
  const Foreign create = foreign("CreateTopics-v3", ApiKey::kCreateTopics);
  EXPECT_EQ(decoded<protocol::CreateTopicsRequest>(create).topics.size(), 2u);
  protocol::CreateTopicsRequest created = create_topics_request(
      {{"orders", 3, 1, {{"cleanup.policy", "compact"}, {"retention.ms", "-1"}}}, {"manual", -1, -1, {}}}, 30000);
  created.topics[1].assignments.push_back({0, {1}});  // a manual assignment, which this client never sends
  expect_same_bytes(create, created);

  const Foreign remove = foreign("DeleteTopics-v3", ApiKey::kDeleteTopics);
  EXPECT_EQ(decoded<protocol::DeleteTopicsRequest>(remove).topic_names.size(), 2u);
  expect_same_bytes(remove, delete_topics_request({"orders", "users"}, 30000));

  const Foreign describe = foreign("DescribeConfigs-v2", ApiKey::kDescribeConfigs);
  EXPECT_EQ(decoded<protocol::DescribeConfigsRequest>(describe).resources.size(), 2u);
  protocol::DescribeConfigsRequest described = describe_configs_request("orders");
  // This client describes topics only, without synonyms; kafka-python's frame adds a broker resource.
  described.resources.push_back({4, "1", std::vector<std::string>{"num.partitions"}});
  described.include_synonyms = true;
  expect_same_bytes(describe, described);
}

}  // namespace
}  // namespace sluice::client
