// A broker whose data directory holds one partition that does not load (issue 20, hardening) starts and serves the
// rest: requests for that partition are answered KAFKA_STORAGE_ERROR, as Kafka 3.9's ReplicaManager answers for an
// offline replica, the produce answer names the reason, and Metadata lists the replica offline with no leader.
#include <gtest/gtest.h>

#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/list_offsets.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/log_format.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka::testing {
namespace {

using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;
using protocol::Records;

ProduceResponse::PartitionResponse produce(KafkaClient& client, int32_t partition, const Bytes& batch) {
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 30000;
  request.topic_data.push_back({"t", {{partition, Records::own(batch)}}});
  auto response = client.call<ProduceResponse>(request, 9);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1 || response->responses[0].partition_responses.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    return {};
  }
  return response->responses[0].partition_responses[0];
}

FetchResponse::Partition fetch(KafkaClient& client, int32_t partition) {
  FetchRequest request;
  request.max_wait_ms = 0;
  request.min_bytes = 1;
  request.max_bytes = 1 << 20;
  FetchRequest::Partition wanted;
  wanted.partition = partition;
  wanted.partition_max_bytes = 1 << 20;
  request.topics.push_back({.topic = "t", .partitions = {wanted}});
  auto response = fetch_owned(client, request, 12);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1 || response->responses[0].partitions.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    return {};
  }
  return response->responses[0].partitions[0];
}

int16_t list_latest(KafkaClient& client, int32_t partition) {
  ListOffsetsRequest request;
  request.replica_id = -1;
  request.topics.push_back({.name = "t", .partitions = {{.partition_index = partition, .timestamp = -1}}});
  auto response = client.call<ListOffsetsResponse>(request, 7);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->topics.size() != 1 || response->topics[0].partitions.size() != 1) return -100;
  return response->topics[0].partitions[0].error_code;
}

MetadataResponse::Topic describe_topic(KafkaClient& client) {
  MetadataRequest request;
  request.topics = std::vector<MetadataRequest::Topic>{{.name = std::string("t")}};
  auto metadata = client.call<MetadataResponse>(request, 9);
  EXPECT_TRUE(metadata.ok()) << metadata.status().to_string();
  if (!metadata.ok() || metadata->topics.size() != 1) {
    ADD_FAILURE() << "expected one topic in the answer";
    return {};
  }
  return metadata->topics[0];
}

TEST(OfflinePartition, ABrokerWithAPartitionThatDoesNotLoadServesTheRest) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient&, Broker& broker) {
    create_topic(env, broker, "t", 2);
    append(env, broker, {"t", 0}, make_records(2));
    append(env, broker, {"t", 1}, make_records(2));
  }));
  {  // A damaged partition.state in t-1: it holds the log start offset, so that partition refuses to load.
    FileSystem& fs = harness.server().fs();
    auto file = fs.open("data/t-1/" + std::string(storage::kStateFileName), OpenMode::kReadWrite);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    ASSERT_TRUE((*file)->pwrite(10, Bytes{0x7f}).ok());
    ASSERT_TRUE((*file)->sync().ok());
  }
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    const std::vector<storage::TopicPartition> offline{{"t", 1}};
    EXPECT_EQ(broker.partitions().offline_partitions(), offline);

    const ProduceResponse::PartitionResponse served = produce(client, 0, make_records(1));
    EXPECT_EQ(served.error_code, 0);
    EXPECT_EQ(served.base_offset, 2);
    const ProduceResponse::PartitionResponse refused = produce(client, 1, make_records(1));
    EXPECT_EQ(refused.error_code, wire_code(ErrorCode::kKafkaStorageError));
    ASSERT_TRUE(refused.error_message.has_value());
    EXPECT_NE(refused.error_message->find("t-1 is offline"), std::string::npos) << *refused.error_message;
    EXPECT_NE(refused.error_message->find("partition.state: CRC mismatch"), std::string::npos)
        << *refused.error_message;

    const FetchResponse::Partition read = fetch(client, 0);
    EXPECT_EQ(read.error_code, 0);
    EXPECT_EQ(read.high_watermark, 3);
    EXPECT_EQ(fetch(client, 1).error_code, wire_code(ErrorCode::kKafkaStorageError));
    EXPECT_EQ(list_latest(client, 0), 0);
    EXPECT_EQ(list_latest(client, 1), wire_code(ErrorCode::kKafkaStorageError));

    const MetadataResponse::Topic topic = describe_topic(client);
    EXPECT_EQ(topic.error_code, 0);
    ASSERT_EQ(topic.partitions.size(), 2u);
    EXPECT_EQ(topic.partitions[0].error_code, 0);
    EXPECT_EQ(topic.partitions[0].leader_id, 1);
    EXPECT_TRUE(topic.partitions[0].offline_replicas.empty());
    EXPECT_EQ(topic.partitions[1].error_code, wire_code(ErrorCode::kLeaderNotAvailable));
    EXPECT_EQ(topic.partitions[1].leader_id, -1);
    EXPECT_EQ(topic.partitions[1].replica_nodes, std::vector<int32_t>{1});
    EXPECT_EQ(topic.partitions[1].offline_replicas, std::vector<int32_t>{1});
  }));
}

// A log that goes offline while the broker runs (its sync failed: never retried) is reported like one that did
// not load: Metadata answers no leader with this node offline, so clients stop routing to it; the rest is served.
TEST(OfflinePartition, ALogThatGoesOfflineWhileServingIsListedOfflineInMetadata) {
  BrokerHarness harness;
  harness.allow_failed_close();
  ASSERT_TRUE(harness.run([&harness](Env env, KafkaClient& client, Broker& broker) {
    storage::TopicConfig persisted;
    persisted.durability = storage::Durability::kPersisted;  // every acknowledged produce is synced first
    create_topic(env, broker, "t", 2, persisted);
    EXPECT_EQ(produce(client, 1, make_records(1)).error_code, 0);
    EXPECT_TRUE(describe_topic(client).partitions.at(1).offline_replicas.empty());

    harness.server().disk().fail_next(DiskOp::kSync, 1, "data/t-1/");
    const ProduceResponse::PartitionResponse failed = produce(client, 1, make_records(1));
    EXPECT_EQ(failed.error_code, wire_code(ErrorCode::kKafkaStorageError));
    EXPECT_EQ(produce(client, 0, make_records(1)).error_code, 0);

    const MetadataResponse::Topic topic = describe_topic(client);
    ASSERT_EQ(topic.partitions.size(), 2u);
    EXPECT_EQ(topic.partitions[0].error_code, 0);
    EXPECT_EQ(topic.partitions[0].leader_id, 1);
    EXPECT_EQ(topic.partitions[1].error_code, wire_code(ErrorCode::kLeaderNotAvailable));
    EXPECT_EQ(topic.partitions[1].leader_id, -1);
    EXPECT_EQ(topic.partitions[1].offline_replicas, std::vector<int32_t>{1});
    EXPECT_EQ(fetch(client, 1).error_code, 0) << "what is durable is still served to a client that asks";
  }));
}

}  // namespace
}  // namespace sluice::kafka::testing
