// Fetch (1) version by version, where Kafka's handler treats versions differently: v13+ names topics by id, v16+
// names the current leader of a fenced partition, v4-9 cannot read a zstd topic, v4-5 get NOT_LEADER_OR_FOLLOWER
// for a storage error.
#include <gtest/gtest.h>

#include "core/protocol/messages/fetch.h"
#include "sim/world/sim_disk.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::Uuid;

FetchRequest::Partition from(int32_t partition, int64_t offset) {
  FetchRequest::Partition p;
  p.partition = partition;
  p.fetch_offset = offset;
  p.partition_max_bytes = 1 << 20;
  return p;
}

FetchRequest fetch_of(FetchRequest::Topic topic) {
  FetchRequest request;
  request.max_wait_ms = 0;
  request.min_bytes = 1;
  request.topics.push_back(std::move(topic));
  return request;
}

FetchResponse call(KafkaClient& client, const FetchRequest& request, int16_t version) {
  auto response = fetch_owned(client, request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  return response.ok() ? *response : FetchResponse{};
}

// The error of the single partition of a single-topic answer.
int16_t error_of(const FetchResponse& response) {
  if (response.responses.size() != 1 || response.responses[0].partitions.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    return -100;
  }
  return response.responses[0].partitions[0].error_code;
}

TEST(FetchVersions, V13AndLaterNameTopicsById) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 2);
    append(env, broker, {"t", 1}, make_records(2));
    const Uuid id = id_of(broker, "t");
    for (int16_t version = 13; version <= 17; ++version) {
      const FetchResponse response =
          call(client, fetch_of({.topic = "", .topic_id = id, .partitions = {from(1, 0), from(7, 0)}}), version);
      ASSERT_EQ(response.responses.size(), 1u);
      EXPECT_EQ(response.responses[0].topic_id, id) << "v" << version;
      EXPECT_EQ(response.responses[0].topic, "") << "names are gone from v13";
      ASSERT_EQ(response.responses[0].partitions.size(), 2u);
      const FetchResponse::Partition& read = response.responses[0].partitions[0];
      EXPECT_EQ(read.error_code, 0);
      EXPECT_EQ(read.high_watermark, 2);
      EXPECT_EQ(batches_in(read.records.bytes()).size(), 1u);
      EXPECT_EQ(response.responses[0].partitions[1].error_code, 3) << "a partition the topic does not have";
    }
    Uuid unknown = id;
    unknown.bytes[15] ^= 1;
    const FetchResponse missing =
        call(client, fetch_of({.topic = "", .topic_id = unknown, .partitions = {from(0, 0)}}), 13);
    EXPECT_EQ(error_of(missing), 100) << "UNKNOWN_TOPIC_ID";
    EXPECT_EQ(missing.responses[0].topic_id, unknown);
    EXPECT_EQ(missing.responses[0].partitions[0].high_watermark, -1);
    EXPECT_EQ(error_of(call(client, fetch_of({.topic = "t", .partitions = {from(1, 0)}}), 13)), 100)
        << "a name means nothing from v13: the zero id is unknown";
    EXPECT_EQ(error_of(call(client, fetch_of({.topic = "t", .partitions = {from(1, 0)}}), 12)), 0);
  }));
}

TEST(FetchVersions, ATopicRecreatedUnderItsNameHasANewId) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    append(env, broker, {"t", 0}, make_records(3));
    const Uuid old_id = id_of(broker, "t");
    on_broker(env, broker, [&] { ASSERT_TRUE(broker.topics().remove("t").ok()); });
    create_topic(env, broker, "t", 1);
    const Uuid new_id = id_of(broker, "t");
    ASSERT_NE(old_id, new_id);
    EXPECT_EQ(error_of(call(client, fetch_of({.topic = "", .topic_id = old_id, .partitions = {from(0, 0)}}), 17)), 100)
        << "the deleted topic's consumer learns it is gone instead of reading the new one";
    const FetchResponse fresh =
        call(client, fetch_of({.topic = "", .topic_id = new_id, .partitions = {from(0, 0)}}), 17);
    EXPECT_EQ(error_of(fresh), 0);
    EXPECT_EQ(fresh.responses[0].partitions[0].high_watermark, 0);
  }));
}

TEST(FetchVersions, V16NamesTheLeaderOfAFencedPartition) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    const Uuid id = id_of(broker, "t");
    FetchRequest::Partition stale = from(0, 0);
    stale.current_leader_epoch = -2;  // older than ours (0): FENCED_LEADER_EPOCH
    for (int16_t version = 12; version <= 17; ++version) {
      const FetchResponse response =
          call(client, fetch_of({.topic = "t", .topic_id = id, .partitions = {stale}}), version);
      EXPECT_EQ(error_of(response), 74) << "v" << version;
      const FetchResponse::Partition& p = response.responses[0].partitions[0];
      EXPECT_EQ(p.current_leader.has_value(), version >= 16) << "v" << version;
      EXPECT_EQ(response.node_endpoints.has_value(), version >= 16) << "v" << version;
      if (version < 16) continue;
      EXPECT_EQ(p.current_leader->leader_id, 1);
      EXPECT_EQ(p.current_leader->leader_epoch, 0);
      ASSERT_EQ(response.node_endpoints->size(), 1u);
      EXPECT_EQ((*response.node_endpoints)[0].node_id, 1);
      EXPECT_EQ((*response.node_endpoints)[0].host, "n1");
      EXPECT_EQ((*response.node_endpoints)[0].port, 9092);
    }
    const FetchResponse good = call(client, fetch_of({.topic = "", .topic_id = id, .partitions = {from(0, 0)}}), 16);
    EXPECT_FALSE(good.node_endpoints.has_value()) << "only a moved leader is named";
    EXPECT_FALSE(good.responses[0].partitions[0].current_leader.has_value());
  }));
}

TEST(FetchVersions, VersionsBeforeTenCannotReadAZstdTopic) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    storage::TopicConfig zstd;
    zstd.compression_type = storage::Compression::kZstd;
    create_topic(env, broker, "z", 1, zstd);
    create_topic(env, broker, "plain", 1);
    for (int16_t version = 4; version <= 12; ++version) {
      EXPECT_EQ(error_of(call(client, fetch_of({.topic = "z", .partitions = {from(0, 0)}}), version)),
                version < 10 ? 76 : 0)
          << "v" << version << ": UNSUPPORTED_COMPRESSION_TYPE before v10";
      EXPECT_EQ(error_of(call(client, fetch_of({.topic = "plain", .partitions = {from(0, 0)}}), version)), 0);
    }
  }));
}

TEST(FetchVersions, VersionsUpToFiveGetNotLeaderForAStorageError) {
  BrokerHarness harness;
  harness.allow_failed_close();
  ASSERT_TRUE(harness.run([&harness](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    append(env, broker, {"t", 0}, make_records(2));
    for (int16_t version : {4, 5, 6, 12}) {
      harness.server().disk().fail_next(DiskOp::kRead, 1, "data/t-0");
      EXPECT_EQ(error_of(call(client, fetch_of({.topic = "t", .partitions = {from(0, 0)}}), version)),
                version <= 5 ? 6 : 56)
          << "v" << version << ": KAFKA_STORAGE_ERROR is unknown to v4-5 clients";
    }
  }));
}

}  // namespace
}  // namespace sluice::kafka
