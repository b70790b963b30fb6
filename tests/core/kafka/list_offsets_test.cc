// ListOffsets (2) and OffsetForLeaderEpoch (23) through a simulated broker: earliest, latest and timestamp lookups
// before and after the log start moves, v0's lists of segment offsets, v7-9's special timestamps, every
// per-partition error, and the end offsets of leader epochs.
#include <gtest/gtest.h>

#include "core/protocol/messages/list_offsets.h"
#include "core/protocol/messages/offset_for_leader_epoch.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;
using protocol::OffsetForLeaderEpochRequest;
using protocol::OffsetForLeaderEpochResponse;

// Batches at kBaseTimestamp, +10 and +20, two records each (offsets 0-1, 2-3, 4-5; record i at batch time + i).
void fill(Env env, Broker& broker, const std::string& topic = "t") {
  for (int i = 0; i < 3; ++i) append(env, broker, {topic, 0}, make_records(2, 8, kBaseTimestamp + 10 * i));
}

ListOffsetsResponse::Partition list(KafkaClient& client, int16_t version, int64_t timestamp,
                                    const std::string& topic = "t", int32_t partition = 0,
                                    int32_t current_leader_epoch = -1) {
  ListOffsetsRequest request;
  request.topics.push_back({topic, {{partition, current_leader_epoch, timestamp}}});
  auto response = client.call<ListOffsetsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  if (!response.ok() || response->topics.size() != 1 || response->topics[0].partitions.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    return {.error_code = -100};
  }
  EXPECT_EQ(response->topics[0].name, topic);
  EXPECT_EQ(response->topics[0].partitions[0].partition_index, partition);
  return response->topics[0].partitions[0];
}

TEST(ListOffsets, EarliestLatestAndByTimestampAtEveryVersion) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    for (int16_t version = 1; version <= 9; ++version) {
      const int32_t epoch = version >= 4 ? 0 : -1;  // the leader epoch field exists from v4
      auto earliest = list(client, version, protocol::kEarliestTimestamp);
      EXPECT_EQ(earliest.error_code, 0);
      EXPECT_EQ(earliest.offset, 0);
      EXPECT_EQ(earliest.timestamp, -1);
      EXPECT_EQ(earliest.leader_epoch, epoch);
      auto latest = list(client, version, protocol::kLatestTimestamp);
      EXPECT_EQ(latest.offset, 6);
      EXPECT_EQ(latest.timestamp, -1);
      EXPECT_EQ(latest.leader_epoch, epoch);
      auto exact = list(client, version, kBaseTimestamp + 10);
      EXPECT_EQ(exact.offset, 2);
      EXPECT_EQ(exact.timestamp, kBaseTimestamp + 10);
      EXPECT_EQ(exact.leader_epoch, epoch);
      auto between = list(client, version, kBaseTimestamp + 5);
      EXPECT_EQ(between.offset, 2) << "the first record at or after the target";
      auto inside = list(client, version, kBaseTimestamp + 21);
      EXPECT_EQ(inside.offset, 5);
      EXPECT_EQ(inside.timestamp, kBaseTimestamp + 21);
      auto none = list(client, version, kBaseTimestamp + 1000);
      EXPECT_EQ(none.error_code, 0);
      EXPECT_EQ(none.offset, -1);
      EXPECT_EQ(none.timestamp, -1);
      EXPECT_EQ(none.leader_epoch, -1);
    }
  }));
}

TEST(ListOffsets, AnEmptyLogAnswersZeroForBothEnds) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    EXPECT_EQ(list(client, 5, protocol::kEarliestTimestamp).offset, 0);
    EXPECT_EQ(list(client, 5, protocol::kLatestTimestamp).offset, 0);
    EXPECT_EQ(list(client, 5, kBaseTimestamp).offset, -1);
  }));
}

TEST(ListOffsets, FollowsTheLogStartAfterDeleteRecords) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    on_broker(env, broker, [&] { ASSERT_TRUE(broker.logs().delete_records({"t", 0}, 3).ok()); });
    EXPECT_EQ(list(client, 2, protocol::kEarliestTimestamp).offset, 3);
    EXPECT_EQ(list(client, 2, protocol::kLatestTimestamp).offset, 6);
    auto old = list(client, 2, kBaseTimestamp);
    EXPECT_EQ(old.offset, 3) << "records below the log start are gone";
    EXPECT_EQ(old.timestamp, kBaseTimestamp + 11);
  }));
}

TEST(ListOffsets, FollowsTheLogStartAfterTimeRetention) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    storage::TopicConfig config;
    config.retention_ms = 60000;
    create_topic(env, broker, "t", 1, config);
    const int64_t now_ms = to_unix_ms(broker.env().clock.wall_now());
    append(env, broker, {"t", 0}, make_records(2, 8, now_ms - 120000));  // expired
    append(env, broker, {"t", 0}, make_records(2, 8, now_ms));
    on_broker(env, broker, [&] { ASSERT_TRUE(broker.logs().run_retention(now_ms).ok()); });
    EXPECT_EQ(list(client, 5, protocol::kEarliestTimestamp).offset, 2);
    EXPECT_EQ(list(client, 5, protocol::kLatestTimestamp).offset, 4);
    EXPECT_EQ(list(client, 5, now_ms - 120000).offset, 2);
  }));
}

TEST(ListOffsets, ReadCommittedLatestIsTheHighWatermark) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    ListOffsetsRequest request;
    request.isolation_level = 1;
    request.topics.push_back({"t", {{0, -1, protocol::kLatestTimestamp}}});
    for (int16_t version = 2; version <= 9; ++version) {
      auto response = client.call<ListOffsetsResponse>(request, version);
      ASSERT_TRUE(response.ok());
      EXPECT_EQ(response->topics[0].partitions[0].offset, 6);
    }
  }));
}

// v0 answers segment boundaries, newest first: with each batch in a segment of its own, the base offsets of the
// segments dated at or before the timestamp (a segment's date is its largest record timestamp), and the log end
// for "latest" (its date is now).
TEST(ListOffsets, V0ListsSegmentOffsetsNewestFirst) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    storage::TopicConfig config;
    config.segment_bytes = 150;  // one batch per segment
    create_topic(env, broker, "t", 1, config);
    auto offsets = [&](int64_t timestamp, int32_t max_num_offsets, int32_t replica_id = -1) {
      ListOffsetsRequest request;
      request.replica_id = replica_id;
      request.topics.push_back({"t", {{.timestamp = timestamp, .max_num_offsets = max_num_offsets}}});
      auto response = client.call<ListOffsetsResponse>(request, 0);
      EXPECT_TRUE(response.ok()) << response.status().to_string();
      if (!response.ok()) return std::vector<int64_t>{-100};
      const ListOffsetsResponse::Partition& p = response->topics[0].partitions[0];
      EXPECT_EQ(p.error_code, 0);
      EXPECT_EQ(p.offset, -1) << "v0 has no offset field";
      return p.old_style_offsets;
    };
    using Offsets = std::vector<int64_t>;
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 5), Offsets{0}) << "an empty log";
    EXPECT_EQ(offsets(protocol::kEarliestTimestamp, 5), Offsets{0});
    fill(env, broker);  // segments [0, 2), [2, 4), [4, 6), dated base + 1, + 11, + 21
    ASSERT_EQ(broker.logs().find({"t", 0})->segments().size(), 3u);
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 10), (Offsets{6, 4, 2, 0}));
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 1), Offsets{6});
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 0), Offsets{});
    EXPECT_EQ(offsets(protocol::kEarliestTimestamp, 10), Offsets{0});
    EXPECT_EQ(offsets(kBaseTimestamp + 11, 10), (Offsets{2, 0}));
    EXPECT_EQ(offsets(kBaseTimestamp + 15, 1), Offsets{2});
    EXPECT_EQ(offsets(kBaseTimestamp + 1000, 10), (Offsets{4, 2, 0})) << "the log end is dated now";
    EXPECT_EQ(offsets(kBaseTimestamp, 10), Offsets{}) << "older than every segment";

    on_broker(env, broker, [&] { ASSERT_TRUE(broker.logs().delete_records({"t", 0}, 3).ok()); });
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 10), (Offsets{6, 4, 3, 3})) << "bases below the start rise to it";
    EXPECT_EQ(offsets(protocol::kEarliestTimestamp, 10), Offsets{3});
    // A consumer sees nothing past the high watermark, which takes the place of the offsets above it.
    on_broker(env, broker, [&] { broker.logs().find({"t", 0})->set_high_watermark(5); });
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 10), (Offsets{5, 4, 3, 3}));
    EXPECT_EQ(offsets(protocol::kLatestTimestamp, 10, /*replica_id=*/-2), (Offsets{6, 4, 3, 3}));
  }));
}

TEST(ListOffsets, V0ErrorsAndWhatItDoesNotCheck) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    ListOffsetsRequest request;
    request.topics.push_back({"t",
                              {{.timestamp = protocol::kMaxTimestamp},
                               {.partition_index = 3, .timestamp = protocol::kLatestTimestamp},
                               {.timestamp = protocol::kLatestTimestamp, .max_num_offsets = -1}}});
    request.topics.push_back({"t", {{.timestamp = protocol::kLatestTimestamp}}});  // named twice: fine in v0
    auto response = client.call<ListOffsetsResponse>(request, 0);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    const auto& partitions = response->topics[0].partitions;
    ASSERT_EQ(partitions.size(), 3u);
    EXPECT_EQ(partitions[0].error_code, 35) << "v0 knows only -1 and -2";
    EXPECT_EQ(partitions[1].error_code, 3);
    EXPECT_EQ(partitions[2].error_code, -1) << "Kafka fails to size its answer by a negative count";
    EXPECT_EQ(response->topics[1].partitions[0].error_code, 0);
    EXPECT_EQ(response->topics[1].partitions[0].old_style_offsets, std::vector<int64_t>{6});
  }));
}

TEST(ListOffsets, SpecialTimestampsOfV7ToV9) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    auto empty_max = list(client, 7, protocol::kMaxTimestamp);
    EXPECT_EQ(empty_max.error_code, 0);
    EXPECT_EQ(empty_max.offset, -1) << "an empty log has no largest timestamp";
    fill(env, broker);
    on_broker(env, broker, [&] { ASSERT_TRUE(broker.logs().delete_records({"t", 0}, 1).ok()); });
    for (int16_t version = 7; version <= 9; ++version) {
      auto max = list(client, version, protocol::kMaxTimestamp);
      EXPECT_EQ(max.error_code, 0);
      EXPECT_EQ(max.offset, 5) << "the first record with the largest timestamp";
      EXPECT_EQ(max.timestamp, kBaseTimestamp + 21);
      EXPECT_EQ(max.leader_epoch, 0);
    }
    EXPECT_EQ(list(client, 6, protocol::kMaxTimestamp).error_code, 35);
    for (int16_t version = 8; version <= 9; ++version) {
      auto local = list(client, version, protocol::kEarliestLocalTimestamp);
      EXPECT_EQ(local.error_code, 0);
      EXPECT_EQ(local.offset, 1) << "no tiered storage: the local log starts at the log start";
      EXPECT_EQ(local.timestamp, -1);
      EXPECT_EQ(local.leader_epoch, 0);
    }
    EXPECT_EQ(list(client, 7, protocol::kEarliestLocalTimestamp).error_code, 35);
    auto tiered = list(client, 9, protocol::kLatestTieredTimestamp);
    EXPECT_EQ(tiered.error_code, 0);
    EXPECT_EQ(tiered.offset, -1) << "nothing is tiered";
    EXPECT_EQ(tiered.timestamp, -1);
    EXPECT_EQ(tiered.leader_epoch, -1);
    EXPECT_EQ(list(client, 8, protocol::kLatestTieredTimestamp).error_code, 35);
    EXPECT_EQ(list(client, 9, -6).error_code, 35);
  }));
}

TEST(ListOffsets, PerPartitionErrors) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    auto unknown_topic = list(client, 5, protocol::kLatestTimestamp, "nope");
    EXPECT_EQ(unknown_topic.error_code, 3);
    EXPECT_EQ(unknown_topic.offset, -1);
    EXPECT_EQ(unknown_topic.timestamp, -1);
    EXPECT_EQ(list(client, 1, protocol::kLatestTimestamp, "t", 4).error_code, 3);
    EXPECT_EQ(list(client, 5, protocol::kMaxTimestamp).error_code, 35) << "max timestamp needs v7";
    EXPECT_EQ(list(client, 5, -7).error_code, 35);
    EXPECT_EQ(list(client, 4, protocol::kLatestTimestamp, "t", 0, 1).error_code, 75) << "UNKNOWN_LEADER_EPOCH";
    EXPECT_EQ(list(client, 4, protocol::kLatestTimestamp, "t", 0, -2).error_code, 74) << "FENCED_LEADER_EPOCH";
    EXPECT_EQ(list(client, 4, protocol::kLatestTimestamp, "t", 0, 0).error_code, 0);

    ListOffsetsRequest twice;
    twice.topics.push_back({"t", {{0, -1, protocol::kLatestTimestamp}}});
    twice.topics.push_back({"t", {{0, -1, protocol::kEarliestTimestamp}}});
    auto response = client.call<ListOffsetsResponse>(twice, 3);
    ASSERT_TRUE(response.ok());
    ASSERT_EQ(response->topics.size(), 2u);
    EXPECT_EQ(response->topics[0].partitions[0].error_code, 42) << "INVALID_REQUEST for a repeated partition";
    EXPECT_EQ(response->topics[1].partitions[0].error_code, 42);
  }));
}

OffsetForLeaderEpochResponse::Partition end_of(KafkaClient& client, int16_t version, int32_t leader_epoch,
                                               const std::string& topic = "t", int32_t current_leader_epoch = -1) {
  OffsetForLeaderEpochRequest request;
  request.replica_id = -1;
  request.topics.push_back({topic, {{0, current_leader_epoch, leader_epoch}}});
  auto response = client.call<OffsetForLeaderEpochResponse>(request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  if (!response.ok() || response->topics.size() != 1 || response->topics[0].partitions.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    return {.error_code = -100};
  }
  return response->topics[0].partitions[0];
}

TEST(OffsetForLeaderEpoch, EpochZeroEndsAtTheLogEndAndNewerEpochsAreUndefined) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    for (int16_t version = 0; version <= 4; ++version) {
      EXPECT_EQ(end_of(client, version, 0).end_offset, 0) << "empty log";
    }
    fill(env, broker);
    for (int16_t version = 0; version <= 4; ++version) {
      auto current = end_of(client, version, 0);
      EXPECT_EQ(current.error_code, 0);
      EXPECT_EQ(current.leader_epoch, version >= 1 ? 0 : -1) << "v0 answers no epoch";
      EXPECT_EQ(current.end_offset, 6);
      auto newer = end_of(client, version, 1);
      EXPECT_EQ(newer.error_code, 0);
      EXPECT_EQ(newer.leader_epoch, -1);
      EXPECT_EQ(newer.end_offset, -1);
      auto undefined = end_of(client, version, -1);
      EXPECT_EQ(undefined.leader_epoch, -1);
      EXPECT_EQ(undefined.end_offset, -1);
    }
    append(env, broker, {"t", 0}, make_records(1));
    EXPECT_EQ(end_of(client, 4, 0).end_offset, 7);
  }));
}

TEST(OffsetForLeaderEpoch, UnknownPartitionsAndStaleEpochs) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    auto unknown = end_of(client, 4, 0, "nope");
    EXPECT_EQ(unknown.error_code, 3);
    EXPECT_EQ(unknown.leader_epoch, -1);
    EXPECT_EQ(unknown.end_offset, -1);
    EXPECT_EQ(end_of(client, 3, 0, "t", 2).error_code, 75);
    EXPECT_EQ(end_of(client, 3, 0, "t", -3).error_code, 74);
    EXPECT_EQ(end_of(client, 3, 0, "t", 0).error_code, 0);
    EXPECT_EQ(end_of(client, 1, 0, "t", -3).error_code, 0) << "v0-1 carry no current epoch to fence";
  }));
}

}  // namespace
}  // namespace sluice::kafka
