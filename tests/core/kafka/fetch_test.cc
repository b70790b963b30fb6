// Fetch (1) through a simulated broker: reads at every version, offset ranges, the long poll (woken by appends,
// timing out at max wait, ended by a stop), KIP-74 size limits, read_committed, sessions and leader epochs.
#include <gtest/gtest.h>

#include <numeric>

#include "core/protocol/messages/fetch.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::FetchRequest;
using protocol::FetchResponse;

FetchRequest::Partition at(int32_t partition, int64_t offset, int32_t max_bytes = 1 << 20) {
  FetchRequest::Partition p;
  p.partition = partition;
  p.fetch_offset = offset;
  p.partition_max_bytes = max_bytes;
  return p;
}

// A fetch that answers at once (max wait 0) unless the test sets a wait.
FetchRequest fetch_of(const std::string& topic, std::vector<FetchRequest::Partition> partitions) {
  FetchRequest request;
  request.max_wait_ms = 0;
  request.min_bytes = 1;
  request.max_bytes = 50 << 20;
  FetchRequest::Topic& named = request.topics.emplace_back();
  named.topic = topic;
  named.partitions.assign(partitions.begin(), partitions.end());
  return request;
}

FetchResponse call(KafkaClient& client, const FetchRequest& request, int16_t version = 12) {
  auto response = fetch_owned(client, request, version);
  EXPECT_TRUE(response.ok()) << "v" << version << ": " << response.status().to_string();
  return response.ok() ? *response : FetchResponse{};
}

// The single partition of a single-topic answer.
const FetchResponse::Partition& only(const FetchResponse& response) {
  static const FetchResponse::Partition kMissing = [] {
    FetchResponse::Partition missing;
    missing.error_code = -100;
    return missing;
  }();
  if (response.responses.size() != 1 || response.responses[0].partitions.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    return kMissing;
  }
  return response.responses[0].partitions[0];
}

std::vector<int64_t> base_offsets(const FetchResponse::Partition& partition) {
  std::vector<int64_t> out;
  for (const storage::BatchHeader& header : batches_in(partition.records.bytes())) out.push_back(header.base_offset);
  return out;
}

// Three batches of two records each: offsets 0-1, 2-3, 4-5.
void fill(Env env, Broker& broker, const std::string& topic = "t", int32_t partition = 0) {
  for (int i = 0; i < 3; ++i) append(env, broker, {topic, partition}, make_records(2));
}

TEST(Fetch, ReadsAppendedBatchesAtEveryVersion) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    for (int16_t version = 4; version <= 12; ++version) {
      const FetchResponse response = call(client, fetch_of("t", {at(0, 0)}), version);
      EXPECT_EQ(response.error_code, 0);
      EXPECT_EQ(response.session_id, 0);
      EXPECT_EQ(response.throttle_time_ms, 0);
      ASSERT_EQ(response.responses.size(), 1u);
      EXPECT_EQ(response.responses[0].topic, "t");
      const FetchResponse::Partition& p = only(response);
      EXPECT_EQ(p.error_code, 0) << "v" << version;
      EXPECT_EQ(p.high_watermark, 6);
      EXPECT_EQ(p.last_stable_offset, 6);
      EXPECT_EQ(p.log_start_offset, version >= 5 ? 0 : -1);
      EXPECT_FALSE(p.aborted_transactions.has_value()) << "read_uncommitted: null, as Kafka";
      EXPECT_EQ(p.preferred_read_replica, -1);
      EXPECT_EQ(base_offsets(p), (std::vector<int64_t>{0, 2, 4})) << "v" << version;
    }
    // From inside a batch: the whole batch holding the offset comes first.
    EXPECT_EQ(base_offsets(only(call(client, fetch_of("t", {at(0, 3)})))), (std::vector<int64_t>{2, 4}));
    const std::vector<storage::Record> records = [&] {
      auto decoded = storage::decode_records(only(call(client, fetch_of("t", {at(0, 4)}))).records.bytes());
      EXPECT_TRUE(decoded.ok());
      return decoded.ok() ? *decoded : std::vector<storage::Record>{};
    }();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[1].offset, 5);
    EXPECT_EQ(records[1].value, Bytes(8, 'b'));
  }));
}

TEST(Fetch, OffsetsOutsideTheLogAreOutOfRangeOnBothSides) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    const FetchResponse::Partition past = only(call(client, fetch_of("t", {at(0, 7)})));
    EXPECT_EQ(past.error_code, 1);
    EXPECT_EQ(past.high_watermark, -1);
    EXPECT_TRUE(past.records.bytes().empty());
    const FetchResponse::Partition end = only(call(client, fetch_of("t", {at(0, 6)})));
    EXPECT_EQ(end.error_code, 0) << "the log end itself is in range: nothing yet";
    EXPECT_TRUE(end.records.bytes().empty());

    on_broker(env, broker, [&] { ASSERT_TRUE(broker.logs().delete_records({"t", 0}, 4).ok()); });
    const FetchResponse::Partition before = only(call(client, fetch_of("t", {at(0, 3)})));
    EXPECT_EQ(before.error_code, 1);
    const FetchResponse::Partition start = only(call(client, fetch_of("t", {at(0, 4)})));
    EXPECT_EQ(start.error_code, 0);
    EXPECT_EQ(start.log_start_offset, 4);
    EXPECT_EQ(base_offsets(start), (std::vector<int64_t>{4}));
  }));
}

TEST(Fetch, UnknownTopicsAndPartitionsAnswerThreeBesideGoodOnes) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 2);
    fill(env, broker, "t", 1);
    FetchRequest request = fetch_of("t", {at(5, 0), at(1, 0)});
    request.topics.push_back({.topic = "nope", .partitions = {at(0, 0)}});
    const FetchResponse response = call(client, request);
    ASSERT_EQ(response.responses.size(), 2u);
    ASSERT_EQ(response.responses[0].partitions.size(), 2u);
    EXPECT_EQ(response.responses[0].partitions[0].partition_index, 5);
    EXPECT_EQ(response.responses[0].partitions[0].error_code, 3);
    EXPECT_EQ(response.responses[0].partitions[1].error_code, 0);
    EXPECT_EQ(base_offsets(response.responses[0].partitions[1]).size(), 3u);
    EXPECT_EQ(response.responses[1].topic, "nope");
    EXPECT_EQ(response.responses[1].partitions[0].error_code, 3);
    EXPECT_EQ(broker.topics().find("nope"), nullptr) << "fetch never creates topics";
  }));
}

TEST(Fetch, LongPollIsWokenByAnAppendFromAnotherFiber) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    FetchRequest request = fetch_of("t", {at(0, 0)});
    request.max_wait_ms = 10000;
    bool appended = false;
    broker.env().scheduler.spawn("appender", [&] {
      broker.env().scheduler.sleep_for(300ms);
      ASSERT_TRUE(broker.logs().append({"t", 0}, make_records(3)).ok());
      broker.notify_appended();
      appended = true;
    });
    const Instant start = env.clock.now();
    const FetchResponse response = call(client, request, 11);
    const Duration waited = env.clock.now() - start;
    EXPECT_TRUE(appended);
    EXPECT_GE(waited, 300ms);
    EXPECT_LT(waited, 320ms) << "answered on the append, not at max wait";
    EXPECT_EQ(base_offsets(only(response)), (std::vector<int64_t>{0}));
    EXPECT_EQ(only(response).high_watermark, 3);
  }));
}

TEST(Fetch, LongPollAnswersEmptyAtMaxWait) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    create_topic(env, broker, "other", 1);
    FetchRequest request = fetch_of("t", {at(0, 6)});
    request.max_wait_ms = 500;
    broker.env().scheduler.spawn("unrelated", [&] {
      broker.env().scheduler.sleep_for(100ms);
      ASSERT_TRUE(broker.logs().append({"other", 0}, make_records(1)).ok());
      broker.notify_appended();  // wakes the poll, which finds nothing new and waits again
    });
    const Instant start = env.clock.now();
    const FetchResponse response = call(client, request, 12);
    const Duration waited = env.clock.now() - start;
    EXPECT_GE(waited, 500ms);
    EXPECT_LT(waited, 510ms);
    EXPECT_EQ(only(response).error_code, 0);
    EXPECT_TRUE(only(response).records.bytes().empty());
    EXPECT_EQ(only(response).high_watermark, 6);
  }));
}

TEST(Fetch, LongPollWaitsUntilMinBytesAccumulate) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    const Bytes batch = make_records(1, 100);
    FetchRequest request = fetch_of("t", {at(0, 0)});
    request.max_wait_ms = 5000;
    request.min_bytes = static_cast<int32_t>(batch.size() * 2);
    broker.env().scheduler.spawn("appender", [&] {
      for (int i = 0; i < 2; ++i) {
        broker.env().scheduler.sleep_for(100ms);
        ASSERT_TRUE(broker.logs().append({"t", 0}, batch).ok());
        broker.notify_appended();
      }
    });
    const Instant start = env.clock.now();
    const FetchResponse response = call(client, request);
    const Duration waited = env.clock.now() - start;
    EXPECT_GE(waited, 200ms) << "one batch is below min_bytes";
    EXPECT_LT(waited, 220ms);
    EXPECT_EQ(base_offsets(only(response)), (std::vector<int64_t>{0, 1}));
  }));
}

TEST(Fetch, ABrokerStopEndsALongPollPromptly) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    FetchRequest request = fetch_of("t", {at(0, 0)});
    request.max_wait_ms = 600000;
    ASSERT_TRUE(client.send(request, 12).ok());
    env.scheduler.sleep_for(50ms);
    const Instant stop = env.clock.now();
    broker.env().scheduler.spawn("stopper", [&] { broker.stop(); });
    while (broker.open_connections() > 0 && env.clock.now() - stop < 60s) env.scheduler.sleep_for(1ms);
    EXPECT_LT(env.clock.now() - stop, 100ms) << "the connection fiber ended without waiting out max wait";
  }));
}

// KIP-74: the first batch comes whole even when larger than both limits; after it, nothing may exceed them.
TEST(Fetch, AFirstBatchLargerThanTheLimitsComesWholeAndAloneInItsPartition) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 2);
    for (int32_t p = 0; p < 2; ++p) {
      append(env, broker, {"t", p}, make_records(4, 200));
      append(env, broker, {"t", p}, make_records(1, 10));
    }
    FetchRequest request = fetch_of("t", {at(0, 0, 10), at(1, 0, 10)});
    request.max_bytes = 10;
    request.max_wait_ms = 5000;
    const Instant start = env.clock.now();
    const FetchResponse response = call(client, request, 4);
    EXPECT_LT(env.clock.now() - start, 10ms) << "more data than the limits allow answers at once";
    const auto& partitions = response.responses[0].partitions;
    ASSERT_EQ(partitions.size(), 2u);
    EXPECT_EQ(base_offsets(partitions[0]), (std::vector<int64_t>{0})) << "one whole batch, over 800 bytes";
    EXPECT_GT(partitions[0].records.bytes().size(), 800u);
    EXPECT_EQ(partitions[1].error_code, 0);
    EXPECT_TRUE(partitions[1].records.bytes().empty()) << "the request's bytes are spent";
    EXPECT_EQ(partitions[1].high_watermark, 5);
  }));
}

TEST(Fetch, TheRequestMaxBytesBoundsEveryPartitionAfterTheFirst) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 3);
    const Bytes batch = make_records(1, 100);
    const auto size = static_cast<int32_t>(batch.size());
    for (int32_t p = 0; p < 3; ++p) {
      for (int i = 0; i < 3; ++i) append(env, broker, {"t", p}, batch);
    }
    // Partition limit: 2.5 batches. Request limit: 3.5 batches. p0 gets 2, p1 gets 1 (1.5 left), p2 none.
    FetchRequest request = fetch_of("t", {at(0, 0, size * 5 / 2), at(1, 0, size * 5 / 2), at(2, 0, size * 5 / 2)});
    request.max_bytes = size * 7 / 2;
    const FetchResponse response = call(client, request);
    const auto& partitions = response.responses[0].partitions;
    ASSERT_EQ(partitions.size(), 3u);
    EXPECT_EQ(base_offsets(partitions[0]).size(), 2u);
    EXPECT_EQ(base_offsets(partitions[1]).size(), 1u);
    EXPECT_EQ(base_offsets(partitions[2]).size(), 0u);
    size_t total = 0;
    for (const auto& p : partitions) total += p.records.bytes().size();
    EXPECT_LE(total, static_cast<size_t>(request.max_bytes));
    // The limits restart with each request: the client moves on to the next partition first.
    FetchRequest next = fetch_of("t", {at(2, 0, size * 5 / 2), at(0, 2, size * 5 / 2)});
    next.max_bytes = size * 7 / 2;
    const FetchResponse again = call(client, next);
    EXPECT_EQ(base_offsets(again.responses[0].partitions[0]).size(), 2u);
    EXPECT_EQ(base_offsets(again.responses[0].partitions[1]).size(), 1u);
  }));
}

TEST(Fetch, ReadCommittedSeesTheSameDataWithTheLastStableOffsetAtTheHighWatermark) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    for (int16_t version : {4, 11, 12}) {
      FetchRequest request = fetch_of("t", {at(0, 0)});
      request.isolation_level = protocol::kReadCommitted;
      const FetchResponse::Partition p = only(call(client, request, version));
      EXPECT_EQ(p.error_code, 0);
      EXPECT_EQ(p.last_stable_offset, p.high_watermark);
      EXPECT_EQ(p.last_stable_offset, 6);
      ASSERT_TRUE(p.aborted_transactions.has_value()) << "read_committed: an empty list";
      EXPECT_TRUE(p.aborted_transactions->empty());
      EXPECT_EQ(base_offsets(p), (std::vector<int64_t>{0, 2, 4}));
    }
  }));
}

TEST(Fetch, SessionlessFullFetchesAndUnknownIncrementalSessions) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    for (int16_t version = 7; version <= 12; ++version) {
      FetchRequest initial = fetch_of("t", {at(0, 0)});
      initial.session_epoch = 0;  // asks for a new session: Kafka without session slots answers id 0, in full
      initial.session_id = 0;
      const FetchResponse full = call(client, initial, version);
      EXPECT_EQ(full.error_code, 0);
      EXPECT_EQ(full.session_id, 0);
      EXPECT_EQ(base_offsets(only(full)).size(), 3u);
      FetchRequest closing = initial;  // epoch -1 with an id closes that session and is answered in full
      closing.session_id = 77;
      closing.session_epoch = -1;
      EXPECT_EQ(call(client, closing, version).session_id, 0);
      FetchRequest incremental = initial;
      incremental.session_id = 77;
      incremental.session_epoch = 1;
      const FetchResponse refused = call(client, incremental, version);
      EXPECT_EQ(refused.error_code, 70) << "FETCH_SESSION_ID_NOT_FOUND";
      EXPECT_EQ(refused.session_id, 0);
      EXPECT_TRUE(refused.responses.empty());
    }
  }));
}

TEST(Fetch, CurrentLeaderEpochIsFencedAndLastFetchedEpochDetectsDivergence) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 1);
    fill(env, broker);
    FetchRequest request = fetch_of("t", {at(0, 0)});
    request.topics[0].partitions[0].current_leader_epoch = 0;
    EXPECT_EQ(only(call(client, request, 9)).error_code, 0);
    request.topics[0].partitions[0].current_leader_epoch = 1;
    EXPECT_EQ(only(call(client, request, 9)).error_code, 75) << "UNKNOWN_LEADER_EPOCH";
    request.topics[0].partitions[0].current_leader_epoch = -2;
    EXPECT_EQ(only(call(client, request, 12)).error_code, 74) << "FENCED_LEADER_EPOCH";
    EXPECT_EQ(only(call(client, request, 8)).error_code, 0) << "no epoch field before v9";

    FetchRequest::Partition& p = request.topics[0].partitions[0];
    p.current_leader_epoch = -1;
    p.last_fetched_epoch = 0;
    p.fetch_offset = 2;
    EXPECT_EQ(base_offsets(only(call(client, request, 12))).size(), 2u) << "epoch 0 runs to the log end";
    p.last_fetched_epoch = 3;
    EXPECT_EQ(only(call(client, request, 12)).error_code, 1) << "an epoch this log never had";
    p.last_fetched_epoch = 0;
    p.fetch_offset = 9;  // the fetcher saw epoch 0 run past our log end: it must truncate to 6
    const FetchResponse::Partition diverged = only(call(client, request, 12));
    EXPECT_EQ(diverged.error_code, 0);
    ASSERT_TRUE(diverged.diverging_epoch.has_value());
    EXPECT_EQ(diverged.diverging_epoch->epoch, 0);
    EXPECT_EQ(diverged.diverging_epoch->end_offset, 6);
    EXPECT_TRUE(diverged.records.bytes().empty());
    EXPECT_EQ(only(call(client, request, 11)).error_code, 1) << "before v12 the field is absent";
  }));
}

}  // namespace
}  // namespace sluice::kafka
