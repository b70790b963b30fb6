// Helpers for the read-path handler tests (fetch_test.cc, list_offsets_test.cc, ...): topics, their ids and appends
// made straight on the broker's node (storage calls suspend on that node's scheduler, so they run on a fiber spawned
// there), batches of known shape, and a look inside fetched record bytes.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/kafka/broker.h"
#include "core/protocol/messages/fetch.h"
#include "core/storage/record_batch.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka::testing {

inline constexpr int64_t kBaseTimestamp = 1700000000000;

// Runs `fn` on a fresh fiber of the broker's node and waits (on the caller's node) until it has finished.
inline void on_broker(Env env, Broker& broker, const std::function<void()>& fn) {
  bool done = false;
  broker.env().scheduler.spawn("test.on_broker", [&] {
    fn();
    done = true;
  });
  while (!done) env.scheduler.sleep_for(std::chrono::milliseconds(1));
}

inline void create_topic(Env env, Broker& broker, const std::string& name, int32_t partitions,
                         storage::TopicConfig config = {}) {
  on_broker(env, broker, [&] {
    Result<const TopicInfo*> created = broker.topics().create(name, partitions, config);
    ASSERT_TRUE(created.ok()) << created.status().to_string();
  });
}

// The id of an existing topic (zero, and a test failure, when it does not exist).
inline protocol::Uuid id_of(Broker& broker, const std::string& topic) {
  const TopicInfo* info = broker.topics().find(topic);
  EXPECT_NE(info, nullptr) << topic;
  return info == nullptr ? protocol::Uuid{} : info->id;
}

// One uncompressed batch of `count` records with `value_bytes`-byte values; record i has timestamp `timestamp + i`.
inline Bytes make_records(int count, size_t value_bytes = 8, int64_t timestamp = kBaseTimestamp) {
  std::vector<storage::Record> records;
  for (int i = 0; i < count; ++i) {
    storage::Record& record = records.emplace_back();
    record.offset = i;
    record.timestamp = timestamp + i;
    record.key = Bytes{'k', static_cast<uint8_t>('0' + i % 10)};
    record.value = Bytes(value_bytes, static_cast<uint8_t>('a' + i % 26));
  }
  Result<Bytes> batch = storage::build_batch(records);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? *batch : Bytes();
}

// Appends on the broker's node and wakes long polls, as Produce does. Returns the base offset (-1 on failure).
inline int64_t append(Env env, Broker& broker, const storage::TopicPartition& tp, const Bytes& batch) {
  int64_t base = -1;
  on_broker(env, broker, [&] {
    Result<storage::AppendResult> appended = broker.logs().append(tp, batch);
    ASSERT_TRUE(appended.ok()) << appended.status().to_string();
    base = appended->base_offset;
    broker.notify_appended();
  });
  return base;
}

// A Fetch call whose records outlive it: KafkaClient::receive decodes them as views into a frame it then frees.
inline Result<protocol::FetchResponse> fetch_owned(KafkaClient& client, const protocol::FetchRequest& request,
                                                   int16_t version) {
  SLUICE_TRY(client.send(request, version));
  SLUICE_ASSIGN_OR_RETURN(std::optional<Bytes> frame, client.receive_frame());
  if (!frame.has_value()) return Status(Code::kClosed, "the broker closed the connection");
  ByteView body;
  SLUICE_TRY(protocol::decode_response_header(*frame, protocol::ApiKey::kFetch, version, &body).status());
  SLUICE_ASSIGN_OR_RETURN(protocol::FetchResponse response,
                          protocol::decode_message<protocol::FetchResponse>(body, version));
  for (protocol::FetchResponse::Topic& topic : response.responses) {
    for (protocol::FetchResponse::Partition& partition : topic.partitions) {
      if (partition.records.is_null()) continue;
      const ByteView bytes = partition.records.bytes();
      partition.records = protocol::Records::own(Bytes(bytes.begin(), bytes.end()));
    }
  }
  return response;
}

// The batches inside fetched record bytes; the test fails if they are not whole, valid batches.
inline std::vector<storage::BatchHeader> batches_in(ByteView records) {
  size_t consumed = 0;
  Result<std::vector<storage::BatchSpan>> spans = storage::split_batches(records, &consumed);
  EXPECT_TRUE(spans.ok()) << spans.status().to_string();
  EXPECT_EQ(consumed, records.size()) << "a partial batch";
  std::vector<storage::BatchHeader> headers;
  if (!spans.ok()) return headers;
  for (const storage::BatchSpan& span : *spans) {
    EXPECT_TRUE(storage::batch_crc_ok(records.subspan(span.position, span.header.size_bytes())));
    headers.push_back(span.header);
  }
  return headers;
}

}  // namespace sluice::kafka::testing
