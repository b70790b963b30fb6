// Pipelining: a producer keeps up to max_in_flight produce requests written on one connection before the first
// answer is read, and no more; answers settle in send order with consecutive offsets.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/client/client.h"
#include "tests/core/client/client_test_util.h"

namespace sluice::client {
namespace {

using namespace testing;

struct PipelineRun {
  int64_t appended_at_first_answer = -1;  // batches the broker had appended when the first answer was read
  std::vector<int64_t> offsets;           // in settle order
  uint64_t connections_during = 0;        // connections opened while the batches went out
};

// Sends `batches` one-record batches at once over a link whose answers take 200 ms (requests ~1 ms).
PipelineRun run_pipeline(int max_in_flight, int batches) {
  PipelineRun run;
  ClientHarness harness;
  EXPECT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    ProducerConfig config;
    config.max_in_flight = max_in_flight;
    Producer producer(client, config);
    const TopicPartitionId tp{"pipelined", 0};
    ASSERT_EQ(producer.send_and_wait(tp, {record("warm", "up")}).outcome, Outcome::kOk);
    harness.network().set_link_latency(harness.broker_node(), harness.client_node(), 200ms, 200ms);
    const uint64_t connections = harness.network().stats().connections;
    for (int i = 0; i < batches; ++i) {
      producer.send(tp, {record("k", fmt::format("v{}", i))}, [&](const ProduceResult& result) {
        EXPECT_EQ(result.outcome, Outcome::kOk) << result.error;
        if (run.offsets.empty()) run.appended_at_first_answer = harness.log_end(tp) - 1;
        run.offsets.push_back(result.base_offset);
      });
    }
    EXPECT_EQ(producer.in_flight(), static_cast<size_t>(batches));
    producer.flush();
    EXPECT_EQ(producer.in_flight(), 0u);
    run.connections_during = harness.network().stats().connections - connections;
  }));
  return run;
}

TEST(ClientPipeline, FiveProduceRequestsAreInFlightOnOneConnectionBeforeTheFirstAnswer) {
  const PipelineRun run = run_pipeline(5, 8);
  EXPECT_EQ(run.appended_at_first_answer, 5) << "five requests reached the broker, the sixth waited for a slot";
  EXPECT_EQ(run.connections_during, 0u) << "all on the connection already open";
  EXPECT_EQ(run.offsets, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8})) << "settled in send order";
}

TEST(ClientPipeline, MaxInFlightBoundsTheRequestsWritten) {
  EXPECT_EQ(run_pipeline(1, 4).appended_at_first_answer, 1);
  EXPECT_EQ(run_pipeline(3, 6).appended_at_first_answer, 3);
}

// Found by BUGGIFY (cluster_follower_produce seed 5, its split writes): a produce write that parks let another
// partition's sender take the same connection's last slot, and max_in_flight was exceeded (an assertion). Every
// write of the client now parks between two pieces; two partitions' lanes share one slot.
TEST(ClientPipeline, LanesSharingAConnectionNeverExceedMaxInFlightWhileAWriteParks) {
  ClientHarness harness;
  harness.client_sim_node().buggify().enable(1, Random(5), /*site_share=*/1.0, /*fire_chance=*/1.0);
  harness.broker_config().num_partitions = 2;
  int ok = 0;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    ProducerConfig config;
    config.max_in_flight = 1;
    Producer producer(client, config);
    ASSERT_EQ(producer.send_and_wait({"lanes", 0}, {record("warm", "up")}).outcome, Outcome::kOk);
    for (int i = 0; i < 20; ++i) {
      for (int32_t p = 0; p < 2; ++p) {
        producer.send({"lanes", p}, {record("k", fmt::format("v{}", i))}, [&](const ProduceResult& result) {
          ok += result.outcome == Outcome::kOk ? 1 : 0;
        });
      }
    }
    producer.flush();
  }));
  EXPECT_GE(ok, 30);  // the rest may have met a BUGGIFY timeout and its retries
  EXPECT_GT(harness.client_sim_node().buggify().fired(), 40u);
}

TEST(ClientPipeline, ConcurrentCallsFromSeveralFibersShareTheConnection) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, {});
    for (int p = 0; p < 3; ++p) {
      ASSERT_EQ(producer.send_and_wait({"shared", 0}, {record("k", fmt::format("v{}", p))}).outcome, Outcome::kOk);
    }
    const uint64_t connections = harness.network().stats().connections;
    int finished = 0;
    std::vector<FiberRef> fibers;
    for (int i = 0; i < 4; ++i) {
      fibers.push_back(env.scheduler.spawn(fmt::format("reader-{}", i), [&, i] {
        Result<FetchResult> fetched = client.fetch({"shared", 0}, i % 3);
        ASSERT_TRUE(fetched.ok()) << fetched.status().to_string();
        ASSERT_FALSE(fetched->records.empty());
        EXPECT_EQ(fetched->records.front().offset, i % 3);
        ++finished;
      }));
    }
    for (const FiberRef& fiber : fibers) env.scheduler.join(fiber);
    EXPECT_EQ(finished, 4);
    EXPECT_EQ(harness.network().stats().connections, connections);
  }));
}

}  // namespace
}  // namespace sluice::client
