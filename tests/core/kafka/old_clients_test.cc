// A client from before ApiVersions (Kafka 0.10-0.11 era) picks its versions from a configured protocol level and
// never asks which the broker speaks: Metadata v0-4, ListOffsets v0-1, Produce v3 and Fetch v4. This walks one
// through discovery, offsets, a produce and a fetch at those versions; then a current client reads the same data at
// the top versions, by topic id.
#include <gtest/gtest.h>

#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/list_offsets.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/messages/produce.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

MetadataResponse metadata(KafkaClient& client, std::vector<std::string> names, int16_t version) {
  MetadataRequest request;
  request.topics.emplace();
  for (std::string& name : names) request.topics->push_back({.name = std::move(name)});
  auto response = client.call<MetadataResponse>(request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  return response.ok() ? *response : MetadataResponse{};
}

ListOffsetsResponse::Partition offsets(KafkaClient& client, int64_t timestamp, int16_t version) {
  ListOffsetsRequest request;
  request.topics.push_back({"events", {{.partition_index = 1, .timestamp = timestamp, .max_num_offsets = 1}}});
  auto response = client.call<ListOffsetsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  return response.ok() ? response->topics.at(0).partitions.at(0) : ListOffsetsResponse::Partition{.error_code = -100};
}

// Partition 1 of `topic` (by name before v13, by `id` from v13) from offset 0.
FetchResponse::Partition fetch(KafkaClient& client, const std::string& topic, protocol::Uuid id, int16_t version) {
  FetchRequest request;
  request.max_wait_ms = 100;
  request.min_bytes = 1;
  request.topics.push_back({.topic = topic,
                            .topic_id = id,
                            .partitions = {{.partition = 1, .fetch_offset = 0, .partition_max_bytes = 1 << 20}}});
  auto response = fetch_owned(client, request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  if (!response.ok()) {
    FetchResponse::Partition failed;
    failed.error_code = -100;
    return failed;
  }
  return response->responses.at(0).partitions.at(0);
}

TEST(OldClients, MetadataV0ListOffsetsV0AndV1ProduceV3FetchV4) {
  BrokerHarness harness;
  harness.config().num_partitions = 2;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "existing", 1);
    // Discovery: v0 with an empty list lists every topic; naming one creates it (no opt-out before v4).
    EXPECT_EQ(metadata(client, {}, 0).topics.size(), 1u);
    const MetadataResponse created = metadata(client, {"events"}, 0);
    ASSERT_EQ(created.topics.size(), 1u);
    EXPECT_EQ(created.topics[0].error_code, 0);
    EXPECT_EQ(created.topics[0].partitions.size(), 2u);
    EXPECT_EQ(created.topics[0].partitions[1].leader_id, 1);
    for (int16_t version = 1; version <= 4; ++version) {
      EXPECT_EQ(metadata(client, {"events"}, version).topics.at(0).partitions.size(), 2u) << "v" << version;
    }

    // Where to start: v0 answers a list, v1 one offset.
    EXPECT_EQ(offsets(client, protocol::kLatestTimestamp, 0).old_style_offsets, std::vector<int64_t>{0});
    EXPECT_EQ(offsets(client, protocol::kEarliestTimestamp, 1).offset, 0);

    // Produce v3: the first version with message format 2.
    ProduceRequest produce;
    produce.acks = 1;
    produce.timeout_ms = 1000;
    const Bytes batch = make_records(3);
    produce.topic_data.push_back({"events", {{1, protocol::Records::own(batch)}}});
    auto produced = client.call<ProduceResponse>(produce, 3);
    ASSERT_TRUE(produced.ok()) << produced.status().to_string();
    EXPECT_EQ(produced->responses.at(0).partition_responses.at(0).error_code, 0);
    EXPECT_EQ(produced->responses.at(0).partition_responses.at(0).base_offset, 0);

    EXPECT_EQ(offsets(client, protocol::kLatestTimestamp, 0).old_style_offsets, std::vector<int64_t>{3});
    EXPECT_EQ(offsets(client, protocol::kLatestTimestamp, 1).offset, 3);

    // Fetch v4 reads the records back.
    const FetchResponse::Partition read = fetch(client, "events", protocol::Uuid{}, 4);
    EXPECT_EQ(read.error_code, 0);
    EXPECT_EQ(read.high_watermark, 3);
    EXPECT_EQ(read.last_stable_offset, 3);
    Result<std::vector<storage::Record>> records = storage::decode_records(read.records.bytes());
    ASSERT_TRUE(records.ok()) << records.status().to_string();
    ASSERT_EQ(records->size(), 3u);
    EXPECT_EQ(records->at(2).offset, 2);
    EXPECT_EQ(records->at(2).timestamp, kBaseTimestamp + 2);

    // A current client: Metadata v12 gives the topic id, Fetch v17 reads by it.
    MetadataRequest all;
    all.topics = std::nullopt;
    auto listed = client.call<MetadataResponse>(all, 12);
    ASSERT_TRUE(listed.ok()) << listed.status().to_string();
    protocol::Uuid id;
    for (const MetadataResponse::Topic& topic : listed->topics) {
      if (topic.name == "events") id = topic.topic_id;
    }
    ASSERT_FALSE(id.is_zero());
    const FetchResponse::Partition by_id = fetch(client, "", id, 17);
    EXPECT_EQ(by_id.error_code, 0);
    EXPECT_EQ(batches_in(by_id.records.bytes()).size(), 1u);
  }));
}

}  // namespace
}  // namespace sluice::kafka
