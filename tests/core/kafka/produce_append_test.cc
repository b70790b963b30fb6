// Produce through a simulated broker: what the append makes of a valid batch. A CreateTime topic stores the max
// timestamp the records carry, not the header's (kafka-protocol.md trap 12), so the time index, ListOffsets by
// timestamp and time retention judge by the records' real times; a batch larger than segment.bytes is refused
// with RECORD_LIST_TOO_LARGE (18), as Kafka's UnifiedLog.append does.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/messages/list_offsets.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"
#include "tests/core/storage/batch_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

constexpr int64_t kHourMs = 3600000;
constexpr size_t kMaxTimestampField = 35;  // record_batch.h

// Three records from `oldest` on, the last two at oldest + 5 (the max), in a batch whose header says `header_max`.
Bytes batch_claiming(int64_t header_max, int64_t oldest, const storage::BatchOptions& options) {
  std::vector<storage::Record> records(3);
  for (int i = 0; i < 3; ++i) {
    records[i].offset = i;
    records[i].timestamp = i == 0 ? oldest : oldest + 5;
    records[i].key = Bytes{'k', static_cast<uint8_t>('0' + i)};
    records[i].value = Bytes(200, 'v');
  }
  Bytes batch = storage::build_batch(records, options).value();
  storage::testing_batches::patch_be(&batch, kMaxTimestampField, static_cast<uint64_t>(header_max), 8);
  storage::testing_batches::reseal(&batch);
  return batch;
}

// Produce v8 of one batch to topic/0 (created first through Metadata, as clients do): that partition's answer.
ProduceResponse::PartitionResponse produce_one(KafkaClient& client, const std::string& topic, const Bytes& batch) {
  auto_create(client, {topic});
  ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 30000;
  request.topic_data.push_back({topic, {{0, protocol::Records::own(batch)}}});
  Result<ProduceResponse> response = client.call<ProduceResponse>(request, 8);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (response.ok()) return response->responses.at(0).partition_responses.at(0);
  ProduceResponse::PartitionResponse missing;
  missing.error_code = -100;
  return missing;
}

// ListOffsets v5 of topic/0 at `timestamp`.
protocol::ListOffsetsResponse::Partition offset_at(KafkaClient& client, const std::string& topic, int64_t timestamp) {
  protocol::ListOffsetsRequest request;
  request.topics.push_back({topic, {{0, -1, timestamp}}});
  Result<protocol::ListOffsetsResponse> response = client.call<protocol::ListOffsetsResponse>(request, 5);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  return response.ok() ? response->topics.at(0).partitions.at(0)
                       : protocol::ListOffsetsResponse::Partition{.error_code = -100};
}

// What the log holds from offset 0 (read on the broker's node).
Bytes stored_bytes(Env env, Broker& broker, storage::PartitionLog& log) {
  Bytes out;
  on_broker(env, broker, [&] {
    Result<storage::ReadResult> read = log.read(0, 1 << 20, log.log_end_offset());
    ASSERT_TRUE(read.ok()) << read.status().to_string();
    out = std::move(read->records);
  });
  return out;
}

struct Claim {
  std::string topic;
  storage::Compression codec;
  std::optional<int64_t> later_by_ms;  // the header's max timestamp is now + this; nullopt: -1
  int64_t producer_id;                 // >= 0: through the idempotent producer's path
};

// sarama writes -1; another producer may write a later time. Either way the records' own max is stored, with a
// valid CRC and the records section as sent (a compressed one is not recompressed), and everything timed sees it.
TEST(ProduceAppend, TheStoredMaxTimestampIsTheRecordsNotTheHeaders) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.retention_ms = kHourMs;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    const int64_t now_ms = to_unix_ms(broker.env().clock.wall_now());
    const int64_t oldest = now_ms - 2 * kHourMs;
    const int64_t latest = oldest + 5;
    for (const Claim& claim : {Claim{"plain-minus-one", storage::Compression::kNone, std::nullopt, -1},
                               Claim{"plain-later", storage::Compression::kNone, kHourMs, -1},
                               Claim{"zstd-minus-one", storage::Compression::kZstd, std::nullopt, -1},
                               Claim{"lz4-later-idempotent", storage::Compression::kLz4, 0, 7}}) {
      SCOPED_TRACE(claim.topic);
      storage::BatchOptions options;
      options.compression = claim.codec;
      options.producer_id = claim.producer_id;
      if (claim.producer_id >= 0) {
        options.producer_epoch = 0;
        options.base_sequence = 0;
      }
      const int64_t header_max = claim.later_by_ms ? now_ms + *claim.later_by_ms : -1;
      const Bytes sent = batch_claiming(header_max, oldest, options);
      ASSERT_EQ(produce_one(client, claim.topic, sent).error_code, 0);
      storage::PartitionLog* log = broker.logs().find({claim.topic, 0});
      ASSERT_NE(log, nullptr);

      const Bytes kept = stored_bytes(env, broker, *log);
      const std::vector<storage::BatchHeader> headers = batches_in(kept);  // CRCs checked
      ASSERT_EQ(headers.size(), 1u);
      EXPECT_EQ(headers[0].max_timestamp, latest);
      EXPECT_EQ(headers[0].compression(), claim.codec);
      EXPECT_TRUE(std::equal(kept.begin() + storage::kBatchHeaderBytes, kept.end(),
                             sent.begin() + storage::kBatchHeaderBytes, sent.end()))
          << "the records section as sent";

      EXPECT_EQ(offset_at(client, claim.topic, oldest).offset, 0);
      const auto at_latest = offset_at(client, claim.topic, oldest + 1);
      EXPECT_EQ(at_latest.offset, 1);
      EXPECT_EQ(at_latest.timestamp, latest);
      EXPECT_EQ(log->segments().back().max_timestamp, latest) << "what the time index is given";
      on_broker(env, broker, [&] {
        const auto max = log->max_timestamp();
        ASSERT_TRUE(max.ok() && max->has_value());
        EXPECT_EQ(**max, (storage::OffsetAndTimestamp{1, latest})) << "the first record with the max";
      });

      on_broker(env, broker, [&] { ASSERT_TRUE(broker.logs().run_retention(now_ms).ok()); });
      EXPECT_EQ(log->log_start_offset(), 3) << "two hours old under retention.ms=1h";
      EXPECT_EQ(log->segments().size(), 1u) << "the expired active segment was rolled and dropped";
      EXPECT_EQ(offset_at(client, claim.topic, protocol::kEarliestTimestamp).offset, 3);
    }
  }));
}

// UnifiedLog.append: a batch that no segment could hold is RECORD_LIST_TOO_LARGE, not MESSAGE_TOO_LARGE (it fits
// max.message.bytes), and nothing is stored.
TEST(ProduceAppend, ABatchLargerThanSegmentBytesIsRecordListTooLarge) {
  BrokerHarness harness;
  harness.config().storage.topic_defaults.segment_bytes = 1024;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    const int64_t now_ms = to_unix_ms(broker.env().clock.wall_now());
    const Bytes big = make_records(8, 200, now_ms);
    ASSERT_GT(big.size(), 1024u);
    const auto refused = produce_one(client, "small-segments", big);
    EXPECT_EQ(refused.error_code, 18);
    EXPECT_EQ(refused.base_offset, -1);
    EXPECT_EQ(broker.logs().find({"small-segments", 0})->log_end_offset(), 0);
    EXPECT_EQ(produce_one(client, "small-segments", make_records(2, 200, now_ms)).error_code, 0);
  }));
}

}  // namespace
}  // namespace sluice::kafka
