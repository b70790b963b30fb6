// Slow work off the event loop (issue 20 item 7): while the broker checks a big zstd batch (every record
// decompressed and decoded, the CRC), another connection's requests keep being answered. The broker, the producer
// and the pinging client are fibers of one RealEnv: a check run on the loop thread would hold all of them. The
// check is the only call on the loop's workers while the batch is in flight, so an answer that reaches the pinger
// while a worker call is outstanding was answered during the check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/broker/node.h"
#include "core/client/client.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"
#include "net/real_env.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// ~16 MiB of small records: their check takes a good many milliseconds, a ping round trip well under one.
constexpr size_t kRecords = 160'000;
constexpr size_t kRecordBytes = 100;

Bytes big_zstd_batch(int64_t now_ms) {
  std::vector<storage::Record> records(kRecords);
  uint64_t state = 88172645463325252ULL;
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].offset = static_cast<int64_t>(i);
    records[i].timestamp = now_ms;
    Bytes value(kRecordBytes);
    for (uint8_t& byte : value) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      byte = static_cast<uint8_t>("etaoin shrdlu"[state % 13]);
    }
    records[i].value = std::move(value);
  }
  storage::BatchOptions options;
  options.compression = storage::Compression::kZstd;
  Result<Bytes> batch = storage::build_batch(records, options);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? std::move(*batch) : Bytes();
}

client::ClientConfig client_config(uint16_t port, const std::string& id) {
  client::ClientConfig config;
  config.bootstrap = {Address{"127.0.0.1", port}};
  config.client_id = id;
  config.request_timeout = 60s;
  return config;
}

TEST(SlowWorkOffTheLoop, OtherConnectionsAreAnsweredWhileABigZstdBatchIsChecked) {
  net_test::TempDir dir;
  RealEnv real("offload", LogLevel::kOff);
  broker::NodeOptions options;
  options.listen = {"127.0.0.1", 0};
  options.data_dir = dir / "data";
  broker::Node node(real.env(), options);
  const EventLoop::Stats& stats = real.loop().stats();

  int pings = 0;
  int pings_during_check = 0;
  int16_t produce_error = -1;
  int64_t latest = -1;
  ASSERT_EQ(real.run([&](Env& env) {
    uint16_t port = 0;
    FiberRef serving = env.scheduler.spawn("broker", [&] {
      const Status run = node.run([&](kafka::Broker&, const Address& bound) { port = bound.port; });
      EXPECT_TRUE(run.ok()) << run.to_string();
    });
    while (port == 0) env.scheduler.sleep_for(1ms);  // polls the condition

    client::Client producer(env, client_config(port, "producer"));
    ASSERT_TRUE(producer.create_topic({"big", 1, 1, {{"max.message.bytes", std::to_string(64 << 20)}}}).ok());
    const Bytes batch = big_zstd_batch(to_unix_ms(env.clock.wall_now()));
    protocol::ProduceRequest request;
    request.acks = 1;
    request.timeout_ms = 60000;
    request.topic_data.push_back({"big", {{0, protocol::Records::view(batch)}}});

    client::Client pinger(env, client_config(port, "pinger"));
    ASSERT_TRUE(pinger.call<protocol::ApiVersionsResponse>(-1, protocol::ApiVersionsRequest{}).ok());
    ASSERT_EQ(stats.blocking_started, stats.blocking_completed) << "a worker call outstanding before the produce";

    bool produced = false;
    FiberRef pinging = env.scheduler.spawn("pinger", [&] {
      while (!produced) {
        Result<protocol::ApiVersionsResponse> answer =
            pinger.call<protocol::ApiVersionsResponse>(-1, protocol::ApiVersionsRequest{});
        ASSERT_TRUE(answer.ok()) << answer.status().to_string();
        ++pings;
        if (stats.blocking_started > stats.blocking_completed) ++pings_during_check;
      }
    });
    Result<protocol::ProduceResponse> answer = producer.call<protocol::ProduceResponse>(-1, request);
    produced = true;
    env.scheduler.join(pinging);
    ASSERT_TRUE(answer.ok()) << answer.status().to_string();
    ASSERT_EQ(answer->responses.size(), 1u);
    ASSERT_EQ(answer->responses[0].partition_responses.size(), 1u);
    produce_error = answer->responses[0].partition_responses[0].error_code;
    Result<client::ListedOffset> end = producer.list_offset({"big", 0}, client::kLatestTimestamp);
    if (end.ok()) latest = end->offset;
    producer.close();
    pinger.close();
    node.stop();
    env.scheduler.join(serving);
  }), 0);
  EXPECT_EQ(produce_error, 0);
  EXPECT_EQ(latest, static_cast<int64_t>(kRecords));
  std::printf("pings answered: %d, while the batch was checked on a worker: %d\n", pings, pings_during_check);
  EXPECT_GE(pings_during_check, 1) << "no other request was answered while the batch was checked";
}

}  // namespace
}  // namespace sluice
