// The producer under network faults and broker restarts: a retry after a lost answer is appended once with
// idempotence (and twice without), a request timeout settles kUnknown, a batch never sent settles kFailed, and the
// client reconnects to a restarted broker. Same seed, same run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/client/client.h"
#include "tests/core/client/client_test_util.h"

namespace sluice::client {
namespace {

using namespace testing;

const TopicPartitionId kTopic{"faulty", 0};

ClientConfig fast_timeouts(const ClientHarness& harness) {
  ClientConfig config = harness.client_config();
  config.request_timeout = 1s;
  return config;
}

ProducerConfig producer_config(bool idempotent) {
  ProducerConfig config;
  config.idempotent = idempotent;
  config.delivery_timeout = 20s;
  return config;
}

// Sends one batch whose answer the network loses: broker→client is cut until `heal_after`, so the request arrives
// and is appended, its answer is held, the request times out, and reconnecting fails until the heal.
ProduceResult send_with_lost_answer(ClientHarness& harness, Env env, Producer& producer, Duration heal_after) {
  SimNetwork& network = harness.network();
  network.partition_one_way(harness.broker_node(), harness.client_node());
  env.scheduler.spawn("heal", [&network, env, heal_after] {
    env.scheduler.sleep_for(heal_after);
    network.heal();
  });
  return producer.send_and_wait(kTopic, {record("k", "once")});
}

TEST(ClientFaults, IdempotentRetryAfterALostAnswerIsAppendedOnce) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, fast_timeouts(harness));
    Producer producer(client, producer_config(true));
    const ProduceResult warm = producer.send_and_wait(kTopic, {record("warm", "up")});
    ASSERT_EQ(warm.outcome, Outcome::kOk) << warm.error;
    EXPECT_GE(producer.producer_id(), 0);
    EXPECT_EQ(warm.base_sequence, 0);
    const ProduceResult result = send_with_lost_answer(harness, env, producer, 2500ms);
    EXPECT_EQ(result.outcome, Outcome::kOk) << result.error;
    EXPECT_GE(result.attempts, 2) << "the first attempt's answer was lost";
    EXPECT_EQ(result.base_offset, 1) << "the retry is answered with the original's offset";
    EXPECT_EQ(result.base_sequence, 1) << "and carried the original's sequence";
    EXPECT_EQ(result.producer_id, producer.producer_id());
    EXPECT_EQ(harness.log_end(kTopic), 2);
    EXPECT_EQ(values(fetch_all(client, kTopic)), (std::vector<std::string>{"up", "once"}));
  }));
}

TEST(ClientFaults, NonIdempotentRetryAfterALostAnswerIsAppendedTwice) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, fast_timeouts(harness));
    Producer producer(client, producer_config(false));
    ASSERT_EQ(producer.send_and_wait(kTopic, {record("warm", "up")}).outcome, Outcome::kOk);
    const ProduceResult result = send_with_lost_answer(harness, env, producer, 2500ms);
    EXPECT_EQ(result.outcome, Outcome::kOk) << result.error;
    EXPECT_GE(result.attempts, 2);
    EXPECT_EQ(result.base_offset, 2) << "the retry was appended again";
    EXPECT_EQ(result.producer_id, -1);
    EXPECT_EQ(values(fetch_all(client, kTopic)), (std::vector<std::string>{"up", "once", "once"}));
  }));
}

// Five batches in flight when the connection breaks under their answers: each is sent again, in order, and
// appended once with idempotence, twice without.
void reset_under_a_full_window(bool idempotent) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, fast_timeouts(harness));
    Producer producer(client, producer_config(idempotent));
    ASSERT_EQ(producer.send_and_wait(kTopic, {record("warm", "up")}).outcome, Outcome::kOk);
    harness.network().set_link_latency(harness.broker_node(), harness.client_node(), 200ms, 200ms);
    std::vector<ProduceResult> results;
    for (int i = 0; i < 5; ++i) {
      producer.send(kTopic, {record("k", fmt::format("v{}", i))},
                    [&](const ProduceResult& result) { results.push_back(result); });
    }
    while (harness.log_end(kTopic) < 6) env.scheduler.sleep_for(1ms);  // all five appended, answers on the way
    harness.network().reset_connections(harness.broker_node(), harness.client_node());
    harness.network().clear_link_latency(harness.broker_node(), harness.client_node());
    producer.flush();
    ASSERT_EQ(results.size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(results[i].outcome, Outcome::kOk) << results[i].error;
      EXPECT_GE(results[i].attempts, 2);
      if (idempotent) {
        EXPECT_EQ(results[i].base_offset, 1 + i) << "answered with the original offsets";
      }
    }
    std::vector<std::string> expected{"up"};
    for (int copy = 0; copy < (idempotent ? 1 : 2); ++copy) {
      for (int i = 0; i < 5; ++i) expected.push_back(fmt::format("v{}", i));
    }
    EXPECT_EQ(values(fetch_all(client, kTopic)), expected);
  }));
}

TEST(ClientFaults, AWindowSentAgainAfterAResetKeepsItsOrderAndIsAppendedOnceWithIdempotence) {
  reset_under_a_full_window(true);
}

TEST(ClientFaults, AWindowSentAgainAfterAResetIsDuplicatedWithoutIdempotence) { reset_under_a_full_window(false); }

TEST(ClientFaults, ARequestTimeoutSettlesUnknownAfterTheDeliveryTimeout) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, fast_timeouts(harness));
    ProducerConfig config = producer_config(true);
    config.delivery_timeout = 3s;
    Producer producer(client, config);
    ASSERT_EQ(producer.send_and_wait(kTopic, {record("warm", "up")}).outcome, Outcome::kOk);
    harness.network().partition_one_way(harness.broker_node(), harness.client_node());
    const Instant start = env.clock.now();
    const ProduceResult result = producer.send_and_wait(kTopic, {record("k", "maybe")});
    EXPECT_EQ(result.outcome, Outcome::kUnknown) << result.error;
    EXPECT_NE(result.error.find("delivery timeout"), std::string::npos) << result.error;
    EXPECT_GE(env.clock.now() - start, 3s);
    EXPECT_LT(env.clock.now() - start, 6s);
    EXPECT_EQ(harness.log_end(kTopic), 2) << "it was appended: kFailed would have been a lie";
    harness.network().heal();
  }));
}

TEST(ClientFaults, ABatchThatCouldNotBeSentSettlesFailed) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, fast_timeouts(harness));
    ProducerConfig config = producer_config(false);
    config.delivery_timeout = 3s;
    Producer producer(client, config);
    ASSERT_EQ(producer.send_and_wait(kTopic, {record("warm", "up")}).outcome, Outcome::kOk);
    harness.network().reset_connections(harness.broker_node(), harness.client_node());
    harness.network().partition(harness.broker_node(), harness.client_node());
    env.scheduler.sleep_for(10ms);  // the client sees its connection break
    const ProduceResult result = producer.send_and_wait(kTopic, {record("k", "never")});
    EXPECT_EQ(result.outcome, Outcome::kFailed) << result.error;
    EXPECT_EQ(result.attempts, 0) << "no request was written";
    EXPECT_EQ(harness.log_end(kTopic), 1);
    harness.network().heal();
    const ProduceResult after = producer.send_and_wait(kTopic, {record("k", "later")});
    EXPECT_EQ(after.outcome, Outcome::kOk) << after.error;
  }));
}

TEST(ClientFaults, TheClientReconnectsAfterTheBrokerRestarts) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    Producer producer(client, producer_config(true));
    ASSERT_EQ(producer.send_and_wait(kTopic, {record("k", "before")}).outcome, Outcome::kOk);
    const uint64_t connections = harness.network().stats().connections;
    harness.restart_broker(env);
    const ProduceResult after = producer.send_and_wait(kTopic, {record("k", "after")});
    EXPECT_EQ(after.outcome, Outcome::kOk) << after.error;
    EXPECT_EQ(after.base_offset, 1);
    EXPECT_EQ(after.base_sequence, 1) << "the restarted broker rebuilt the producer's state from its log";
    EXPECT_GT(harness.network().stats().connections, connections) << "a new connection";
    EXPECT_EQ(values(fetch_all(client, kTopic)), (std::vector<std::string>{"before", "after"}));
    harness.restart_broker(env);
    Result<FetchResult> fetched = client.fetch(kTopic, 0);
    ASSERT_TRUE(fetched.ok()) << fetched.status().to_string();
    EXPECT_EQ(fetched->records.size(), 2u);
  }));
}

// A crash of the client node unwinds every fiber of the client at its wait point: the partitions' sender lanes,
// the connection readers, the heartbeats and the calls waiting for answers, with timers still set for them.
TEST(ClientFaults, ACrashOfTheClientNodeUnwindsEveryFiberCleanly) {
  ClientHarness harness;
  bool crashing = false;
  const bool finished = harness.run(
      [&](Env env) {
        Client client(env, harness.client_config());
        Producer producer(client, producer_config(true));
        GroupConfig group;
        group.group_id = "doomed";
        group.topics = {kTopic.topic};
        GroupMember member(client, group);
        ASSERT_TRUE(member.join(env.clock.now() + 30s).ok());
        harness.network().set_link_latency(harness.broker_node(), harness.client_node(), 100ms, 100ms);
        for (int i = 0; i < 12; ++i) {
          producer.send({kTopic.topic, 0}, {record("k", fmt::format("v{}", i))}, [](const ProduceResult&) {});
        }
        harness.crash_client_after(50ms);
        crashing = true;
        producer.flush();  // the node dies first
        ADD_FAILURE() << "flush returned on a crashed node";
      },
      10s);
  EXPECT_FALSE(finished);
  EXPECT_TRUE(crashing);
  harness.world().run_for(30s);  // the dead node's timers and the broker's answers find nothing to touch
}

// The reset-under-a-window scenario twice with one seed: the same results and the same trace.
TEST(ClientFaults, SameSeedSameRun) {
  auto run = [](uint64_t seed) {
    std::vector<std::string> outcomes;
    ClientHarness harness(seed);
    EXPECT_TRUE(harness.run([&](Env env) {
      Client client(env, fast_timeouts(harness));
      Producer producer(client, producer_config(true));
      for (int i = 0; i < 3; ++i) producer.send(kTopic, {record("k", "v")}, [](const ProduceResult&) {});
      producer.flush();
      const ProduceResult lost = send_with_lost_answer(harness, env, producer, 1700ms);
      outcomes.push_back(fmt::format("{} {} {}", outcome_name(lost.outcome), lost.base_offset, lost.attempts));
      outcomes.push_back(fmt::format("at {} ns", env.clock.now().time_since_epoch().count()));
    }));
    outcomes.push_back(fmt::format("trace {}", harness.world().trace_hash()));
    return outcomes;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7).back(), run(8).back()) << "the seed does change the run";
}

}  // namespace
}  // namespace sluice::client
