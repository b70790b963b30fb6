// The client's produce and fetch paths against a simulated broker: round trips at every acks and codec, keys and
// tombstones, fetch offsets inside a batch, long polls, a fetch of several partitions (fetch_from), ListOffsets, and
// the metadata cache following topics that appear after the client looked.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/base/big_endian.h"
#include "core/client/client.h"
#include "core/client/requests.h"
#include "core/client/versions.h"
#include "core/protocol/messages/fetch.h"
#include "core/storage/record_batch.h"
#include "tests/core/client/client_test_util.h"

namespace sluice::client {
namespace {

using namespace testing;
using protocol::ApiKey;
using storage::Compression;

// One batch of `records` (offsets 0..n-1), moved to base offset `base`, as a fetch would return it.
Bytes batch_at_offset(int64_t base, const std::vector<storage::Record>& records,
                      const storage::BatchOptions& options = {}) {
  Result<Bytes> built = storage::build_batch(records, options);
  EXPECT_TRUE(built.ok());
  storage::set_base_offset(MutableByteView(built->data(), built->size()), base);
  return std::move(*built);
}

// Repetitive values, so that every codec makes the batch smaller.
std::vector<ProducerRecord> compressible_batch(int count) {
  std::vector<ProducerRecord> records;
  for (int i = 0; i < count; ++i) {
    std::string value;
    for (int r = 0; r < 20; ++r) value += fmt::format("value-{}-", i);
    records.push_back(record(fmt::format("k{}", i), value));
  }
  return records;
}

// The codec of the first batch stored at `tp`, as a raw Fetch sees it.
Compression stored_codec(Client& client, const TopicPartitionId& tp) {
  protocol::FetchRequest request;
  request.max_wait_ms = 0;
  request.topics.push_back({.topic = tp.topic, .partitions = {}});
  request.topics[0].partitions.push_back({});
  request.topics[0].partitions[0].partition = tp.partition;
  request.topics[0].partitions[0].partition_max_bytes = 1 << 20;
  Result<protocol::FetchResponse> response = client.call<protocol::FetchResponse>(1, request);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok()) return Compression::kNone;
  Result<storage::BatchHeader> header =
      storage::parse_batch_header(response->responses.at(0).partitions.at(0).records.bytes());
  EXPECT_TRUE(header.ok()) << header.status().to_string();
  return header.ok() ? header->compression() : Compression::kNone;
}

TEST(ClientProduceFetch, RoundTripsAtEveryAcksAndCodec) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    int topic_index = 0;
    for (int16_t acks : {0, 1, -1}) {
      for (Compression codec :
           {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4, Compression::kZstd}) {
        SCOPED_TRACE(fmt::format("acks={} codec={}", acks, static_cast<int>(codec)));
        const TopicPartitionId tp{fmt::format("round-trip-{}", topic_index++), 0};
        ProducerConfig config;
        config.acks = acks;
        config.compression = codec;
        Producer producer(client, config);
        const ProduceResult first = producer.send_and_wait(tp, compressible_batch(20));
        const ProduceResult second = producer.send_and_wait(tp, {record("k", "last")});
        EXPECT_EQ(first.outcome, Outcome::kOk) << first.error;
        EXPECT_EQ(second.outcome, Outcome::kOk) << second.error;
        EXPECT_EQ(first.base_offset, acks == 0 ? -1 : 0);
        EXPECT_EQ(second.base_offset, acks == 0 ? -1 : 20);
        while (harness.log_end(tp) < 21) env.scheduler.sleep_for(1ms);  // acks=0 settles when written
        const std::vector<FetchedRecord> records = fetch_all(client, tp);
        ASSERT_EQ(records.size(), 21u);
        for (int i = 0; i < 20; ++i) {
          EXPECT_EQ(records[i].offset, i);
          EXPECT_EQ(text(records[i].key), fmt::format("k{}", i));
          EXPECT_EQ(text(records[i].value), text(compressible_batch(20)[i].value));
        }
        EXPECT_EQ(text(records[20].value), "last");
        EXPECT_EQ(stored_codec(client, tp), codec) << "the batch travelled and was stored compressed";
      }
    }
  }));
}

TEST(ClientProduceFetch, KeysTombstonesAndTimestampsComeBackAsSent) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    const TopicPartitionId tp{"keyed", 0};
    ProducerRecord tombstone = record("gone", "");
    tombstone.value = std::nullopt;
    tombstone.timestamp_ms = 1700000000500;
    ProducerRecord unkeyed = record("", "no key", 1700000000200);
    const ProduceResult result =
        producer.send_and_wait(tp, {record("k1", "v1", 1700000000100), std::move(tombstone), std::move(unkeyed)});
    ASSERT_EQ(result.outcome, Outcome::kOk) << result.error;
    const std::vector<FetchedRecord> records = fetch_all(client, tp);
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(text(records[0].key), "k1");
    EXPECT_EQ(text(records[0].value), "v1");
    EXPECT_EQ(records[0].timestamp, 1700000000100);
    EXPECT_EQ(text(records[1].key), "gone");
    EXPECT_FALSE(records[1].value.has_value()) << "a tombstone";
    EXPECT_EQ(records[1].timestamp, 1700000000500);
    EXPECT_FALSE(records[2].key.has_value());
    EXPECT_EQ(text(records[2].value), "no key");
    for (const FetchedRecord& r : records) EXPECT_EQ(r.batch_max_timestamp, 1700000000500);
  }));
}

TEST(ClientProduceFetch, RecordsBelowTheRequestedOffsetAreDropped) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    const TopicPartitionId tp{"mid-batch", 0};
    ASSERT_EQ(producer.send_and_wait(tp, compressible_batch(5)).outcome, Outcome::kOk);
    ASSERT_EQ(producer.send_and_wait(tp, compressible_batch(2)).outcome, Outcome::kOk);
    Result<FetchResult> fetched = client.fetch(tp, 3);
    ASSERT_TRUE(fetched.ok()) << fetched.status().to_string();
    ASSERT_FALSE(fetched->records.empty());
    EXPECT_EQ(fetched->records.front().offset, 3) << "offsets 0-2 of the first batch are dropped";
    EXPECT_EQ(fetched->high_watermark, 7);
    EXPECT_EQ(fetched->log_start_offset, 0);
    Result<FetchResult> beyond = client.fetch(tp, 100);
    ASSERT_TRUE(beyond.ok()) << beyond.status().to_string();
    EXPECT_EQ(beyond->error_code, 1) << "OFFSET_OUT_OF_RANGE";
    EXPECT_TRUE(beyond->records.empty());
  }));
}

// A fetch answer holding only control batches (a new leader's LeaderChange marker at a segment's end: a fetch reads
// one segment) yields no records, yet the next fetch must start past them: next_offset says where. The simulator's
// final reader took such an answer for the end of the partition (seed 5 of cluster_crashes_partitions with
// stale-leader-serves-fetch reported 267 acks=all writes lost that were all in the log past offset 1397).
TEST(ClientProduceFetch, NextOffsetPassesControlBatches) {
  const auto batch_at = [](int64_t base, int count, bool control) {
    std::vector<storage::Record> records;
    for (int i = 0; i < count; ++i) {
      storage::Record r;
      r.offset = i;
      r.timestamp = 1000;
      r.value = to_bytes(control ? std::string("\0\0\0\2", 4) : fmt::format("v{}", i));
      if (control) r.key = to_bytes(std::string("\0\0\0\2", 4));
      records.push_back(std::move(r));
    }
    storage::BatchOptions options;
    options.control = control;
    return batch_at_offset(base, records, options);
  };
  const Bytes marker = batch_at(7, 1, true);
  std::vector<FetchedRecord> records;
  int64_t next = -1;
  ASSERT_TRUE(decode_fetched_records(marker, 7, &records, &next).ok());
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(next, 8) << "past the control batch, though it yields no record";

  Bytes both = batch_at(5, 2, false);
  both.insert(both.end(), marker.begin(), marker.end());
  records.clear();
  next = -1;
  ASSERT_TRUE(decode_fetched_records(both, 6, &records, &next).ok());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].offset, 6);
  EXPECT_EQ(next, 8);

  records.clear();
  next = -1;
  ASSERT_TRUE(decode_fetched_records(both, 9, &records, &next).ok());
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(next, -1) << "nothing at or above the offset asked for";
}

// A batch whose CRC holds but whose records do not decode (its header claims one record more than it holds) fails
// the answer, and leaves none of its records behind in it, though the ones before the damage decoded.
TEST(ClientProduceFetch, ABatchThatDoesNotDecodeWholeLeavesNoneOfItsRecords) {
  const auto batch_of_two = [](int64_t base) {
    std::vector<storage::Record> records(2);
    for (int i = 0; i < 2; ++i) {
      records[i].offset = i;
      records[i].timestamp = 1000;
      records[i].value = to_bytes(fmt::format("v{}", base + i));
    }
    return batch_at_offset(base, records);
  };
  Bytes bad = batch_of_two(2);
  constexpr size_t kRecordCountAt = 57;
  store_be<int32_t>(bad.data() + kRecordCountAt, 3);
  store_be<uint32_t>(bad.data() + storage::kBatchCrcOffset, storage::compute_batch_crc(bad));
  Bytes both = batch_of_two(0);
  both.insert(both.end(), bad.begin(), bad.end());
  std::vector<FetchedRecord> records;
  const Status status = decode_fetched_records(both, 0, &records, nullptr);
  EXPECT_EQ(status.code(), Code::kCorruption) << status.to_string();
  ASSERT_EQ(records.size(), 2u) << "the first batch's two, none of the second's";
  EXPECT_EQ(records[1].offset, 1);
}

// fetch_view's records view the answer, or for a compressed batch its decompressed records, which the view keeps:
// they read the same after the decoding returned and after the FetchView moved (AddressSanitizer sees a stale one).
TEST(ClientProduceFetch, FetchedViewsOfCompressedAndPlainBatchesOutliveTheDecoding) {
  const auto batch_at = [](int64_t base, storage::Compression compression) {
    std::vector<storage::Record> records(3);
    for (int i = 0; i < 3; ++i) {
      records[i].offset = i;
      records[i].timestamp = 1000;
      records[i].key = to_bytes(fmt::format("k{}", base + i));
      records[i].value = to_bytes(fmt::format("value-{}-{}", base + i, std::string(40, 'x')));
    }
    storage::BatchOptions options;
    options.compression = compression;
    return batch_at_offset(base, records, options);
  };
  FetchView view;
  view.answer = batch_at(0, storage::Compression::kLz4);
  const Bytes plain = batch_at(3, storage::Compression::kNone);
  view.answer.insert(view.answer.end(), plain.begin(), plain.end());
  const Bytes zstd = batch_at(6, storage::Compression::kZstd);
  view.answer.insert(view.answer.end(), zstd.begin(), zstd.end());
  ASSERT_TRUE(decode_fetched_records(view.answer, 1, &view.records, &view.decompressed, &view.next_offset).ok());
  EXPECT_EQ(view.decompressed.size(), 2u) << "the lz4 and zstd batches' records";
  EXPECT_EQ(view.next_offset, 9);
  const FetchView moved = std::move(view);
  ASSERT_EQ(moved.records.size(), 8u) << "offset 0 lies below the fetch offset";
  for (size_t i = 0; i < moved.records.size(); ++i) {
    const FetchedRecordView& r = moved.records[i];
    const int64_t offset = static_cast<int64_t>(i) + 1;
    EXPECT_EQ(r.offset, offset);
    ASSERT_TRUE(r.key && r.value);
    EXPECT_EQ(as_chars(*r.key), fmt::format("k{}", offset));
    EXPECT_EQ(as_chars(*r.value), fmt::format("value-{}-{}", offset, std::string(40, 'x')));
  }
  const FetchResult owned = owned_fetch_result(moved);
  ASSERT_EQ(owned.records.size(), 8u);
  EXPECT_EQ(as_chars(*owned.records[7].value), as_chars(*moved.records[7].value));
  EXPECT_EQ(owned.next_offset, 9);
}

TEST(ClientProduceFetch, FetchWaitsUpToMaxWaitAndReturnsEarlyWhenRecordsArrive) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    const TopicPartitionId tp{"long-poll", 0};
    ASSERT_EQ(producer.send_and_wait(tp, {record("a", "1")}).outcome, Outcome::kOk);
    FetchOptions options;
    options.max_wait = 300ms;
    Instant start = env.clock.now();
    Result<FetchResult> idle = client.fetch(tp, 1, options);
    ASSERT_TRUE(idle.ok()) << idle.status().to_string();
    EXPECT_TRUE(idle->records.empty());
    EXPECT_GE(env.clock.now() - start, 300ms);
    // Another client produces meanwhile: a long poll holds up the requests behind it on its own connection.
    options.max_wait = 5s;
    Client other(env, harness.client_config());
    Producer late(other, {});
    env.scheduler.spawn("late-producer", [&] {
      env.scheduler.sleep_for(100ms);
      late.send(tp, {record("b", "2")}, [](const ProduceResult&) {});
    });
    start = env.clock.now();
    Result<FetchResult> woken = client.fetch(tp, 1, options);
    ASSERT_TRUE(woken.ok()) << woken.status().to_string();
    ASSERT_EQ(woken->records.size(), 1u);
    EXPECT_EQ(text(woken->records[0].value), "2");
    EXPECT_LT(env.clock.now() - start, 1s);
    late.flush();
  }));
}

TEST(ClientProduceFetch, FetchHonoursMaxBytesAndMinBytes) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    const TopicPartitionId tp{"sized", 0};
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(producer.send_and_wait(tp, {record("k", std::string(1000, static_cast<char>('a' + i)))}).outcome,
                Outcome::kOk);
    }
    FetchOptions small;
    small.max_bytes = 1500;  // one batch of ~1.1 KB fits, two do not
    Result<FetchResult> one = client.fetch(tp, 0, small);
    ASSERT_TRUE(one.ok()) << one.status().to_string();
    ASSERT_EQ(one->records.size(), 1u);
    EXPECT_EQ(one->records[0].offset, 0);
    small.max_bytes = 10;  // smaller than a batch: the first batch still comes whole (KIP-74)
    Result<FetchResult> first = client.fetch(tp, 1, small);
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    ASSERT_EQ(first->records.size(), 1u);
    EXPECT_EQ(first->records[0].offset, 1);

    FetchOptions patient;
    patient.min_bytes = 100000;  // more than the partition holds: the broker waits the whole max_wait
    patient.max_wait = 400ms;
    const Instant start = env.clock.now();
    Result<FetchResult> all = client.fetch(tp, 0, patient);
    ASSERT_TRUE(all.ok()) << all.status().to_string();
    EXPECT_EQ(all->records.size(), 3u);
    EXPECT_GE(env.clock.now() - start, 400ms);
  }));
}

std::string text(const std::optional<ByteView>& bytes) {
  return bytes ? std::string(as_chars(*bytes)) : std::string("<null>");
}

// fetch_from: one request for partitions of two topics, answered per position in the order asked, an empty partition
// and an unknown one among them; a single long poll for all of them; the views outlive a move of the answer.
TEST(ClientProduceFetch, FetchFromReadsSeveralPartitionsInOneRequest) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    ASSERT_TRUE(client.create_topic({"multi", 3, 1, {}}).ok());
    Producer producer(client, {});
    ASSERT_EQ(producer.send_and_wait({"multi", 0}, {record("a", "m0-0"), record("b", "m0-1")}).outcome, Outcome::kOk);
    ASSERT_EQ(producer.send_and_wait({"multi", 2}, {record("c", "m2-0")}).outcome, Outcome::kOk);
    ASSERT_EQ(producer.send_and_wait({"solo", 0}, {record("d", "s-0")}).outcome, Outcome::kOk);
    Result<int32_t> leader = client.leader_for({"multi", 0});
    ASSERT_TRUE(leader.ok()) << leader.status().to_string();

    const std::vector<FetchPosition> positions = {
        {{"multi", 2}, 0}, {{"solo", 0}, 0}, {{"multi", 1}, 0}, {{"multi", 9}, 0}, {{"multi", 0}, 1}};
    FetchMany fetched = client.fetch_from(*leader, positions);
    const FetchMany moved = std::move(fetched);  // the views point into the answer's buffer, which a move keeps
    ASSERT_EQ(moved.partitions.size(), positions.size());
    for (size_t i = 0; i < positions.size(); ++i) {
      ASSERT_TRUE(moved.partitions[i].ok()) << positions[i].tp.to_string() << ": "
                                             << moved.partitions[i].status().to_string();
    }
    auto values_of = [&](size_t i) {
      std::vector<std::string> out;
      for (const FetchedRecordView& r : moved.partitions[i]->records) out.push_back(text(r.value));
      return out;
    };
    EXPECT_THAT(values_of(0), ::testing::ElementsAre("m2-0"));
    EXPECT_THAT(values_of(1), ::testing::ElementsAre("s-0"));
    EXPECT_THAT(values_of(2), ::testing::IsEmpty());
    EXPECT_EQ(moved.partitions[2]->error_code, 0);
    EXPECT_EQ(moved.partitions[2]->high_watermark, 0);
    EXPECT_EQ(moved.partitions[3]->error_code, 3) << "UNKNOWN_TOPIC_OR_PARTITION for multi-9 alone";
    EXPECT_THAT(values_of(4), ::testing::ElementsAre("m0-1")) << "from offset 1 of its batch";
    EXPECT_EQ(moved.partitions[4]->next_offset, 2);
    EXPECT_EQ(moved.partitions[4]->high_watermark, 2);

    // Every partition at its end: one long poll of max_wait for all of them, not one per partition.
    FetchOptions patient;
    patient.max_wait = 300ms;
    const Instant start = env.clock.now();
    const FetchMany idle = client.fetch_from(*leader, {{{"multi", 0}, 2}, {{"multi", 1}, 0}, {{"multi", 2}, 1}}, patient);
    const Duration took = env.clock.now() - start;
    ASSERT_EQ(idle.partitions.size(), 3u);
    for (const Result<FetchView>& partition : idle.partitions) {
      ASSERT_TRUE(partition.ok()) << partition.status().to_string();
      EXPECT_TRUE(partition->records.empty());
    }
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 600ms);

    // A broker the client cannot reach: every partition says why.
    const FetchMany nowhere = client.fetch_from(*leader + 100, {{{"multi", 0}, 0}, {{"solo", 0}, 0}});
    ASSERT_EQ(nowhere.partitions.size(), 2u);
    for (const Result<FetchView>& partition : nowhere.partitions) EXPECT_FALSE(partition.ok());
  }));
}

TEST(ClientProduceFetch, ListOffsetsEarliestLatestAndByTimestamp) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    const TopicPartitionId tp{"timeline", 0};
    for (int64_t ts : {1700000001000, 1700000002000, 1700000003000}) {
      ASSERT_EQ(producer.send_and_wait(tp, {record("k", "v", ts)}).outcome, Outcome::kOk);
    }
    Result<ListedOffset> earliest = client.list_offset(tp, kEarliestTimestamp);
    Result<ListedOffset> latest = client.list_offset(tp, kLatestTimestamp);
    Result<ListedOffset> exact = client.list_offset(tp, 1700000002000);
    Result<ListedOffset> between = client.list_offset(tp, 1700000002500);
    Result<ListedOffset> after = client.list_offset(tp, 1700000009000);
    ASSERT_TRUE(earliest.ok() && latest.ok() && exact.ok() && between.ok() && after.ok());
    EXPECT_EQ(earliest->offset, 0);
    EXPECT_EQ(latest->offset, 3);
    EXPECT_EQ(exact->offset, 1);
    EXPECT_EQ(exact->timestamp, 1700000002000);
    EXPECT_EQ(between->offset, 2);
    EXPECT_EQ(after->offset, -1) << "no record that late";
    Result<ListedOffset> missing = client.list_offset({"timeline", 5}, kLatestTimestamp);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().protocol_error(), 3);
  }));
}

// The broker offers Kafka 3.9's top versions; the client stays at the highest it builds for each API.
TEST(ClientProduceFetch, EachApiUsesTheClientsHighestVersionAgainstThisBroker) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    ASSERT_TRUE(client.metadata({}).ok());
    for (ApiKey api : {ApiKey::kProduce, ApiKey::kFetch, ApiKey::kListOffsets, ApiKey::kMetadata}) {
      Result<int16_t> version = client.version_for(-1, api);
      ASSERT_TRUE(version.ok()) << protocol::api_name(api) << ": " << version.status().to_string();
      EXPECT_EQ(*version, client_versions(api).max) << protocol::api_name(api);
      EXPECT_LT(*version, protocol::api_info(api).max_version) << protocol::api_name(api);
    }
  }));
}

TEST(ClientProduceFetch, MetadataFollowsTopicsCreatedAfterTheClientLooked) {
  ClientHarness harness;
  harness.broker_config().auto_create_topics_enable = false;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Client admin(env, harness.client_config());
    Result<ClusterInfo> before = client.metadata({"fresh"});
    ASSERT_TRUE(before.ok()) << before.status().to_string();
    EXPECT_EQ(before->topics.at("fresh").error_code, 3);
    EXPECT_EQ(before->brokers.size(), 1u);
    EXPECT_EQ(before->controller_id, 1);
    ASSERT_TRUE(admin.create_topic({"fresh", 3, 1, {}}).ok());
    Result<int32_t> leader = client.leader_for({"fresh", 2});
    ASSERT_TRUE(leader.ok()) << "an unknown topic is not cached: " << leader.status().to_string();
    EXPECT_EQ(*leader, 1);

    // A cached topic that another client deletes and recreates larger: a produce to a partition the cache does not
    // know fails, invalidates the cache and succeeds once the refresh shows it.
    ASSERT_TRUE(admin.create_topic({"grows", 1, 1, {}}).ok());
    ASSERT_TRUE(client.leader_for({"grows", 0}).ok());
    ASSERT_TRUE(admin.delete_topic("grows").ok());
    ASSERT_TRUE(admin.create_topic({"grows", 3, 1, {}}).ok());
    EXPECT_FALSE(client.leader_for({"grows", 2}).ok()) << "the cache still says one partition";
    Producer producer(client, {});
    const ProduceResult result = producer.send_and_wait({"grows", 2}, {record("k", "v")});
    EXPECT_EQ(result.outcome, Outcome::kOk) << result.error;
    EXPECT_EQ(harness.log_end({"grows", 2}), 1);
  }));
}

}  // namespace
}  // namespace sluice::client
