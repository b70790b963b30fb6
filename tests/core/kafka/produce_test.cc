// Produce (0) through a simulated broker: the acks contract, every per-partition error, and the append itself.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ProduceRequest;
using protocol::ProduceResponse;
using protocol::Records;
using PartitionResponse = ProduceResponse::PartitionResponse;

constexpr int64_t kTimestamp = 1700000000000;

// One batch of `count` records with keys k0.. and values of `value_bytes` bytes.
Bytes make_batch(int count = 1, storage::BatchOptions options = {}, bool keyed = true, size_t value_bytes = 4,
                 int64_t timestamp = kTimestamp) {
  std::vector<storage::Record> records;
  for (int i = 0; i < count; ++i) {
    storage::Record& record = records.emplace_back();
    record.offset = i;
    record.timestamp = timestamp + i;
    if (keyed) record.key = Bytes{'k', static_cast<uint8_t>('0' + i)};
    record.value = Bytes(value_bytes, 'v');
  }
  Result<Bytes> batch = storage::build_batch(records, options);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? *batch : Bytes();
}

ProduceRequest request_for(const std::string& topic, int32_t partition, Records records, int16_t acks = -1) {
  ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = 30000;
  request.topic_data.push_back({topic, {{partition, std::move(records)}}});
  return request;
}

// Produces one batch to topic/partition and returns that partition's answer.
PartitionResponse produce(KafkaClient& client, const std::string& topic, int32_t partition, const Bytes& batch,
                          int16_t version = 8, int16_t acks = -1) {
  auto response = client.call<ProduceResponse>(request_for(topic, partition, Records::own(batch), acks), version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1 || response->responses[0].partition_responses.size() != 1) {
    ADD_FAILURE() << "expected one partition in the answer";
    PartitionResponse missing;
    missing.error_code = -100;
    return missing;
  }
  EXPECT_EQ(response->responses[0].name, topic);
  return response->responses[0].partition_responses[0];
}

int64_t log_end(Broker& broker, const std::string& topic, int32_t partition = 0) {
  storage::PartitionLog* log = broker.logs().find({topic, partition});
  return log == nullptr ? -1 : log->log_end_offset();
}

bool closed(KafkaClient& client) {
  auto frame = client.receive_frame();
  return !frame.ok() || !frame->has_value();
}

TEST(Produce, AppendsAndAnswersWithOffsetsAtEveryServedVersion) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"orders"});
    int64_t next = 0;
    for (int16_t version = 3; version <= 11; ++version) {
      const PartitionResponse answer = produce(client, "orders", 0, make_batch(2), version, version % 2 ? 1 : -1);
      EXPECT_EQ(answer.error_code, 0) << "v" << version;
      EXPECT_EQ(answer.base_offset, next) << "v" << version;
      EXPECT_EQ(answer.log_append_time_ms, -1) << "CreateTime";
      EXPECT_EQ(answer.log_start_offset, version >= 5 ? 0 : -1) << "v" << version;
      EXPECT_FALSE(answer.error_message.has_value());
      EXPECT_FALSE(answer.current_leader.has_value()) << "this node leads: no leader hint (v10+)";
      next += 2;
    }
    EXPECT_EQ(log_end(broker, "orders"), next);
  }));
}

// storage-semantics.md A1: any acks but -1, 0, 1 fails every partition with 21 and stores nothing.
TEST(Produce, InvalidAcksFailEveryPartitionAndStoreNothing) {
  BrokerHarness harness;
  harness.config().num_partitions = 2;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"a"});
    ASSERT_EQ(produce(client, "a", 1, make_batch()).error_code, 0);
    for (int16_t acks : {2, -2, 5}) {
      ProduceRequest request = request_for("a", 0, Records::own(make_batch()), acks);
      request.topic_data[0].partition_data.push_back({1, Records::own(make_batch())});
      request.topic_data.push_back({"fresh", {{0, Records::own(make_batch())}}});
      auto response = client.call<ProduceResponse>(request, 7);
      ASSERT_TRUE(response.ok()) << response.status().to_string();
      ASSERT_EQ(response->responses.size(), 2u);
      for (const auto& topic : response->responses) {
        for (const PartitionResponse& partition : topic.partition_responses) {
          EXPECT_EQ(partition.error_code, 21) << "acks=" << acks;
          EXPECT_EQ(partition.base_offset, -1);
        }
      }
    }
    EXPECT_EQ(log_end(broker, "a", 0), 0);
    EXPECT_EQ(log_end(broker, "a", 1), 1);
    EXPECT_EQ(broker.topics().find("fresh"), nullptr) << "nothing is created either";
  }));
}

TEST(Produce, AcksZeroSendsNoResponseAndTheNextFrameAnswersTheNextRequest) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(env, {"quiet"});
    ASSERT_TRUE(client.send(request_for("quiet", 0, Records::own(make_batch(3)), 0), 7).ok());  // correlation 1
    auto versions = client.call<protocol::ApiVersionsResponse>(protocol::ApiVersionsRequest{}, 2);   // correlation 2
    ASSERT_TRUE(versions.ok()) << versions.status().to_string();
    EXPECT_EQ(client.last_correlation_id(), 2) << "no frame came back for the acks=0 produce";
    EXPECT_EQ(log_end(broker, "quiet"), 3);
    EXPECT_EQ(produce(client, "quiet", 0, make_batch()).base_offset, 3);
  }));
}

TEST(Produce, AnAcksZeroFailureClosesTheConnection) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"t"});
    ASSERT_EQ(produce(client, "t", 0, make_batch()).error_code, 0);
    Bytes corrupt = make_batch();
    corrupt.back() ^= 0xff;  // the CRC no longer matches
    ASSERT_TRUE(client.send(request_for("t", 0, Records::own(corrupt), 0), 7).ok());
    EXPECT_TRUE(closed(client)) << "Kafka closes so that the client refreshes its metadata";
    EXPECT_EQ(log_end(broker, "t"), 1);
    KafkaClient other = BrokerHarness::connect(env);
    EXPECT_EQ(produce(other, "t", 0, make_batch()).base_offset, 1);
  }));
}

// min.insync.replicas (issue 19): this node is each partition's only in-sync replica, so a topic asking for 2 refuses
// acks=all with NOT_ENOUGH_REPLICAS and appends nothing, while acks=1 and acks=0 are not checked. Creating such a
// topic and altering the setting are allowed, as in Kafka.
TEST(Produce, AcksAllNeedsMinInsyncReplicasAndOtherAcksDoNot) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "strict", 1, {{"min.insync.replicas", "2"}});
    for (int16_t version : {3, 8}) {
      const PartitionResponse refused = produce(client, "strict", 0, make_batch(), version, -1);
      EXPECT_EQ(refused.error_code, 19) << "v" << version;
      EXPECT_EQ(refused.base_offset, -1) << "v" << version;
    }
    EXPECT_EQ(log_end(broker, "strict"), 0) << "nothing appended";
    EXPECT_EQ(produce(client, "strict", 0, make_batch(), 8, 1).base_offset, 0) << "acks=1";
    ASSERT_TRUE(client.send(request_for("strict", 0, Records::own(make_batch()), 0), 8).ok());  // acks=0: no answer
    EXPECT_EQ(produce(client, "strict", 0, make_batch(), 8, -1).error_code, 19) << "the next frame answers this";
    EXPECT_EQ(log_end(broker, "strict"), 2) << "acks=1 and acks=0 appended, acks=all did not";
    protocol::FetchRequest fetch;
    fetch.max_wait_ms = 0;
    fetch.topics.push_back(
        {.topic = "strict", .partitions = {{.partition = 0, .fetch_offset = 0, .partition_max_bytes = 1 << 20}}});
    auto fetched = fetch_owned(client, fetch, 11);
    ASSERT_TRUE(fetched.ok()) << fetched.status().to_string();
    const auto& partition = fetched->responses.at(0).partitions.at(0);
    EXPECT_EQ(partition.high_watermark, 2);
    EXPECT_EQ(batches_in(partition.records.bytes()).size(), 2u) << "only the acks=1 and acks=0 batches";

    EXPECT_EQ(alter_incrementally(client, "strict", {{"min.insync.replicas", 0, "1"}}).error_code, 0);
    EXPECT_EQ(produce(client, "strict", 0, make_batch(), 8, -1).base_offset, 2) << "acks=all, min.insync.replicas=1";
  }));
}

// Kafka 4 (KIP-896) still advertises Produce from v0 for librdkafka (KAFKA-18659) but closes on v0-2 requests.
TEST(Produce, VersionsZeroToTwoCloseTheConnection) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient&, Broker& broker) {
    for (int16_t version = 0; version <= 2; ++version) {
      KafkaClient client = BrokerHarness::connect(env);
      ASSERT_TRUE(client.send(request_for("old", 0, Records::own(make_batch())), version).ok());
      EXPECT_TRUE(closed(client)) << "v" << version;
    }
    EXPECT_EQ(broker.topics().find("old"), nullptr);
  }));
}

// Kafka's KafkaApis.handleProduceRequest: a topic-partition missing from the metadata is UNKNOWN_TOPIC_OR_PARTITION
// and nothing is created, whatever auto.create.topics.enable says (only Metadata creates topics).
TEST(Produce, UnknownTopicsAndPartitionsAreUnknownAndNothingIsCreated) {
  for (const bool auto_create : {true, false}) {
    BrokerHarness harness;
    harness.config().auto_create_topics_enable = auto_create;
    ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
      for (const std::string topic : {"absent", "bad/name", "__consumer_offsets"}) {
        const PartitionResponse answer = produce(client, topic, 0, make_batch());
        EXPECT_EQ(answer.error_code, 3) << topic;
        EXPECT_EQ(answer.base_offset, -1) << topic;
        EXPECT_EQ(answer.log_start_offset, -1) << topic;
        EXPECT_EQ(broker.topics().find(topic), nullptr) << topic << ": produce never creates";
      }
      create_topic(env, broker, "two", 2);
      EXPECT_EQ(produce(client, "two", 1, make_batch()).error_code, 0);
      EXPECT_EQ(produce(client, "two", 2, make_batch()).error_code, 3);
      EXPECT_EQ(produce(client, "two", -1, make_batch()).error_code, 3);
      create_topic(env, broker, "__consumer_offsets", 1);
      EXPECT_EQ(produce(client, "__consumer_offsets", 0, make_batch()).error_code, 17) << "internal, once it exists";
    })) << "auto.create.topics.enable=" << auto_create;
  }
}

// Each partition is judged alone: one bad batch does not fail its neighbours.
TEST(Produce, EachPartitionsBatchIsValidated) {
  BrokerHarness harness;
  harness.config().num_partitions = 6;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"v"});
    Bytes corrupt = make_batch();
    corrupt.back() ^= 0x01;
    Bytes two = make_batch();
    const Bytes second = make_batch();
    two.insert(two.end(), second.begin(), second.end());
    storage::BatchOptions control;
    control.control = true;
    ProduceRequest request = request_for("v", 0, Records::own(corrupt));
    auto& partitions = request.topic_data[0].partition_data;
    partitions.push_back({1, Records::own(two)});
    partitions.push_back({2, Records()});
    partitions.push_back({3, Records::own(make_batch(1, control))});
    partitions.push_back({4, Records::own(make_batch(2))});
    const Bytes whole = make_batch();
    partitions.push_back({5, Records::own(Bytes(whole.begin(), whole.begin() + 30))});
    auto response = client.call<ProduceResponse>(request, 8);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    const auto& answers = response->responses[0].partition_responses;
    ASSERT_EQ(answers.size(), 6u);
    const int16_t expected[] = {2, 87, 87, 87, 0, 87};  // CRC, two batches, null, control, ok, truncated
    for (size_t i = 0; i < answers.size(); ++i) {
      EXPECT_EQ(answers[i].index, static_cast<int32_t>(i));
      EXPECT_EQ(answers[i].error_code, expected[i]) << "partition " << i;
      EXPECT_EQ(answers[i].error_message.has_value(), expected[i] != 0) << "v8 says why";
      EXPECT_EQ(log_end(broker, "v", static_cast<int32_t>(i)), expected[i] == 0 ? 2 : 0);
    }
  }));
}

TEST(Produce, ZstdNeedsVersionSeven) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto_create(client, {"z"});
    storage::BatchOptions zstd;
    zstd.compression = storage::Compression::kZstd;
    const Bytes batch = make_batch(3, zstd, true, 200);
    EXPECT_EQ(produce(client, "z", 0, batch, 6).error_code, 76);
    EXPECT_EQ(produce(client, "z", 0, batch, 3).error_code, 76);
    const PartitionResponse answer = produce(client, "z", 0, batch, 7);
    EXPECT_EQ(answer.error_code, 0);
    EXPECT_EQ(answer.base_offset, 0);
    storage::BatchOptions gzip;
    gzip.compression = storage::Compression::kGzip;
    EXPECT_EQ(produce(client, "z", 0, make_batch(2, gzip, true, 200), 3).base_offset, 3);
  }));
}

TEST(Produce, ABatchOverMaxMessageBytesIsTooLarge) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.max_message_bytes = 200;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"big"});
    EXPECT_EQ(produce(client, "big", 0, make_batch(1, {}, true, 300)).error_code, 10);
    EXPECT_EQ(produce(client, "big", 0, make_batch(1, {}, true, 10)).error_code, 0);
    EXPECT_EQ(log_end(broker, "big"), 1);
  }));
}

TEST(Produce, ATimestampOutsideTheWindowIsInvalid) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.message_timestamp_before_max_ms = 3600000;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker&) {
    auto_create(client, {"ts"});
    EXPECT_EQ(produce(client, "ts", 0, make_batch(1, {}, true, 4, /*timestamp=*/1000)).error_code, 32);
    const int64_t now = to_unix_ms(env.clock.wall_now());
    EXPECT_EQ(produce(client, "ts", 0, make_batch(1, {}, true, 4, now)).error_code, 0);
  }));
}

TEST(Produce, ACompactedTopicNeedsKeys) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.cleanup_compact = true;
  harness.config().storage.topic_defaults.cleanup_delete = false;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto_create(client, {"c"});
    EXPECT_EQ(produce(client, "c", 0, make_batch(2, {}, /*keyed=*/false)).error_code, 87);
    EXPECT_EQ(produce(client, "c", 0, make_batch(2)).error_code, 0);
  }));
}

// One batch of four keyed records but for those at `keyless`.
Bytes batch_without_keys_at(std::initializer_list<int> keyless, storage::BatchOptions options = {}) {
  std::vector<storage::Record> records;
  for (int i = 0; i < 4; ++i) {
    storage::Record& record = records.emplace_back();
    record.offset = i;
    record.timestamp = kTimestamp + i;
    if (std::find(keyless.begin(), keyless.end(), i) == keyless.end()) record.key = Bytes{'k'};
    record.value = Bytes{'v'};
  }
  return storage::build_batch(records, options).value();
}

// KIP-467: v8+ names the records a batch was refused for, by index, and says why in error_message.
TEST(Produce, RecordErrorsNameTheFailingRecords) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.cleanup_compact = true;
  harness.config().storage.topic_defaults.cleanup_delete = false;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"c"});
    const PartitionResponse one = produce(client, "c", 0, batch_without_keys_at({2}));
    EXPECT_EQ(one.error_code, 87);
    EXPECT_EQ(one.base_offset, -1);
    ASSERT_EQ(one.record_errors.size(), 1u);
    EXPECT_EQ(one.record_errors[0].batch_index, 2);
    ASSERT_TRUE(one.record_errors[0].batch_index_error_message.has_value());
    EXPECT_NE(one.record_errors[0].batch_index_error_message->find("no key, which a compacted topic requires"),
              std::string::npos)
        << *one.record_errors[0].batch_index_error_message;
    ASSERT_TRUE(one.error_message.has_value());
    EXPECT_NE(one.error_message->find("record 2 has no key"), std::string::npos) << *one.error_message;

    storage::BatchOptions zstd;  // inside a compressed batch too, and every failing record in order
    zstd.compression = storage::Compression::kZstd;
    const PartitionResponse two = produce(client, "c", 0, batch_without_keys_at({1, 3}, zstd));
    EXPECT_EQ(two.error_code, 87);
    ASSERT_EQ(two.record_errors.size(), 2u);
    EXPECT_EQ(two.record_errors[0].batch_index, 1);
    EXPECT_EQ(two.record_errors[1].batch_index, 3);
    EXPECT_NE(two.error_message->find("2 records rejected"), std::string::npos) << *two.error_message;

    const PartitionResponse v7 = produce(client, "c", 0, batch_without_keys_at({2}), 7);
    EXPECT_EQ(v7.error_code, 87);
    EXPECT_TRUE(v7.record_errors.empty()) << "record_errors is a v8 field";
    EXPECT_FALSE(v7.error_message.has_value());

    const PartitionResponse ok = produce(client, "c", 0, batch_without_keys_at({}));
    EXPECT_EQ(ok.error_code, 0);
    EXPECT_TRUE(ok.record_errors.empty());
    EXPECT_EQ(log_end(broker, "c"), 4) << "refused batches store nothing";
  }));
}

TEST(Produce, RecordErrorsNameRecordsWithBadTimestamps) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.message_timestamp_after_max_ms = 3600000;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker&) {
    auto_create(client, {"ts2"});
    const int64_t now = to_unix_ms(env.clock.wall_now());
    std::vector<storage::Record> records(3);
    for (int i = 0; i < 3; ++i) {
      records[i].offset = i;
      records[i].timestamp = i == 1 ? now + 7200000 : now;  // record 1 is two hours ahead
      records[i].value = Bytes{'v'};
    }
    const PartitionResponse answer = produce(client, "ts2", 0, storage::build_batch(records).value());
    EXPECT_EQ(answer.error_code, 32);
    ASSERT_EQ(answer.record_errors.size(), 1u);
    EXPECT_EQ(answer.record_errors[0].batch_index, 1);
    EXPECT_NE(answer.record_errors[0].batch_index_error_message->find("outside the window"), std::string::npos);
  }));
}

// What topic/0 stores from offset 0, as Fetch returns it (v10+: older versions cannot read a zstd topic).
Bytes stored(KafkaClient& client, const std::string& topic) {
  protocol::FetchRequest fetch;
  fetch.max_bytes = 1 << 20;
  protocol::FetchRequest::Partition from_start;
  from_start.partition_max_bytes = 1 << 20;
  fetch.topics.push_back({.topic = topic, .partitions = {from_start}});
  Result<protocol::FetchResponse> response = testing::fetch_owned(client, fetch, 12);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok()) return Bytes();
  const ByteView bytes = response->responses.at(0).partitions.at(0).records.bytes();
  return Bytes(bytes.begin(), bytes.end());
}

storage::BatchOptions in_codec(storage::Compression codec) {
  storage::BatchOptions options;
  options.compression = codec;
  return options;
}

// compression.type other than producer: a batch in another codec is stored re-encoded, with the same records.
TEST(Produce, TopicCompressionTypeReencodesBatchesInOtherCodecs) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.compression_type = storage::Compression::kZstd;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto_create(client, {"z"});
    const Bytes sent = make_batch(3, in_codec(storage::Compression::kGzip), true, 300);
    ASSERT_EQ(produce(client, "z", 0, sent).error_code, 0);
    const Bytes kept = stored(client, "z");
    const std::vector<storage::BatchHeader> batches = testing::batches_in(kept);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(batches[0].compression(), storage::Compression::kZstd);
    EXPECT_EQ(batches[0].max_timestamp, kTimestamp + 2);
    const std::vector<storage::Record> records = storage::decode_records(kept).value();
    const std::vector<storage::Record> original = storage::decode_records(sent).value();
    ASSERT_EQ(records.size(), 3u);
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ(records[i].offset, original[i].offset);
      EXPECT_EQ(records[i].timestamp, original[i].timestamp);
      EXPECT_EQ(records[i].key, original[i].key);
      EXPECT_EQ(records[i].value, original[i].value);
    }
  }));
}

// A batch already in the topic's codec, and every batch under `producer`, is stored exactly as it came.
TEST(Produce, BatchesInTheTopicsCodecAreStoredAsSent) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.compression_type = storage::Compression::kLz4;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"same"});
    const Bytes lz4 = make_batch(2, in_codec(storage::Compression::kLz4), true, 300);
    ASSERT_EQ(produce(client, "same", 0, lz4).error_code, 0);
    EXPECT_EQ(stored(client, "same"), lz4) << "byte for byte (base offset 0 is the offset it gets)";
    storage::TopicConfig producer;  // compression.type=producer: each codec is kept
    testing::create_topic(env, broker, "mixed", 1, producer);
    const Bytes snappy = make_batch(2, in_codec(storage::Compression::kSnappy), true, 300);
    ASSERT_EQ(produce(client, "mixed", 0, snappy).error_code, 0);
    EXPECT_EQ(stored(client, "mixed"), snappy);
  }));
}

// Re-encoding can make a batch larger: max.message.bytes applies to what would be stored.
TEST(Produce, AReencodedBatchOverMaxMessageBytesIsTooLarge) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.compression_type = storage::Compression::kNone;
  harness.config().storage.topic_defaults.max_message_bytes = 1000;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"grow"});
    const Bytes gzip = make_batch(4, in_codec(storage::Compression::kGzip), true, 1000);
    ASSERT_LT(gzip.size(), 1000u);
    const PartitionResponse answer = produce(client, "grow", 0, gzip);
    EXPECT_EQ(answer.error_code, 10);
    EXPECT_NE(answer.error_message->find("compression.type uncompressed"), std::string::npos) << *answer.error_message;
    EXPECT_EQ(log_end(broker, "grow"), 0);
  }));
}

TEST(Produce, LogAppendTimeTopicsAnswerTheAppendTime) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.message_timestamp_type = storage::MessageTimestampType::kLogAppendTime;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto_create(client, {"lat"});
    const PartitionResponse v2 = produce(client, "lat", 0, make_batch(), 3);
    EXPECT_EQ(v2.error_code, 0);
    EXPECT_GT(v2.log_append_time_ms, 0);
    EXPECT_NE(v2.log_append_time_ms, kTimestamp);
  }));
}

TEST(Produce, DiskPressureRefusesWithKafkaStorageError) {
  BrokerHarness harness;
  harness.config().storage.log_disk_usage_max_percent = 50;
  ASSERT_TRUE(harness.run([&harness](Env env, KafkaClient& client, Broker& broker) {
    auto_create(client, {"full"});
    ASSERT_EQ(produce(client, "full", 0, make_batch()).error_code, 0);
    SimDisk& disk = harness.server().disk();
    disk.set_capacity_bytes(disk.used_bytes() + disk.used_bytes() / 2);  // now over 50 % full
    env.scheduler.sleep_for(storage::LogManager::kDiskUsageRecheckInterval);
    EXPECT_EQ(produce(client, "full", 0, make_batch()).error_code, 56);
    EXPECT_EQ(log_end(broker, "full"), 1);
  }));
}

TEST(Produce, TransactionalBatchesAreNotAuthorized) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    storage::BatchOptions transactional;
    transactional.transactional = true;
    transactional.producer_id = 1;
    transactional.producer_epoch = 0;
    transactional.base_sequence = 0;
    ProduceRequest request = request_for("tx", 0, Records::own(make_batch(1, transactional)));
    request.transactional_id = "my-txn";
    request.topic_data.push_back({"tx", {{0, Records::own(make_batch())}}});
    auto response = client.call<ProduceResponse>(request, 8);
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->responses[0].partition_responses[0].error_code, 53);
    EXPECT_EQ(response->responses[1].partition_responses[0].error_code, 53) << "the whole request is refused";
    EXPECT_EQ(broker.topics().find("tx"), nullptr);
  }));
}

// kafkajs sends base sequence 0 with producer id -1 on every batch: sequences are ignored without a producer id.
TEST(Produce, SequencesAreIgnoredWithoutAProducerId) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    auto_create(client, {"js"});
    storage::BatchOptions kafkajs;
    kafkajs.base_sequence = 0;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(produce(client, "js", 0, make_batch(1, kafkajs)).base_offset, i);
  }));
}

// A long-polling fetch is woken by the append rather than waiting out its max wait.
TEST(Produce, AnAppendWakesALongPollingFetch) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker&) {
    auto_create(client, {"poll"});
    ASSERT_EQ(produce(client, "poll", 0, make_batch()).error_code, 0);
    KafkaClient consumer = BrokerHarness::connect(env);
    protocol::FetchRequest fetch;
    fetch.max_wait_ms = 60000;
    fetch.min_bytes = 1;
    protocol::FetchRequest::Partition from_one;
    from_one.fetch_offset = 1;
    from_one.partition_max_bytes = 1 << 20;
    fetch.topics.push_back({.topic = "poll", .partitions = {from_one}});
    ASSERT_TRUE(consumer.send(fetch, 4).ok());
    env.scheduler.sleep_for(100ms);
    const Instant sent = env.clock.now();
    ASSERT_EQ(produce(client, "poll", 0, make_batch()).error_code, 0);
    auto answer = consumer.receive<protocol::FetchResponse>(protocol::ApiKey::kFetch, 4);
    ASSERT_TRUE(answer.ok()) << answer.status().to_string();
    EXPECT_LT(env.clock.now() - sent, std::chrono::seconds(5)) << "woken by the append";
    EXPECT_FALSE(answer->responses[0].partitions[0].records.bytes().empty());
  }));
}

}  // namespace
}  // namespace sluice::kafka
