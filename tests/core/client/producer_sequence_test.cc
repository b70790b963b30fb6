// The idempotent producer's answers to sequence errors, against a scripted broker that answers the codes on cue
// (the real one rarely can): OUT_OF_ORDER_SEQUENCE_NUMBER at the head of the window fails the batch and starts the
// partition afresh under a new producer id; behind a batch that failed, it is the expected echo and the batches are
// sent again with their sequences; DUPLICATE_SEQUENCE_NUMBER is a success.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/client/client.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"
#include "tests/core/client/scripted_broker.h"

namespace sluice::client {
namespace {

using namespace testing;
using protocol::ApiKey;

const TopicPartitionId kPartition{"t", 0};

ProducerRecord record_of(const std::string& value) {
  ProducerRecord record;
  record.key = to_bytes("k");
  record.value = to_bytes(value);
  return record;
}

struct Produced {
  Request request;
  storage::BatchHeader batch;
};

// Serves ApiVersions, Metadata (topic "t", one partition led by node 1), InitProducerId (ids from 1000, one per
// request) and hands Produce requests to `on_produce`.
struct ProduceScript {
  std::function<void(Stream&, const Produced&)> on_produce;
  std::vector<std::pair<int64_t, int16_t>> init_requests;  // the (id, epoch) each InitProducerId named
  int64_t next_producer_id = 1000;
  bool silent = false;  // read requests and answer none (until the client gives up on the connection)
  std::optional<Env> env;  // the broker node's, for a script that takes its time

  void serve(Stream& stream) {
    while (std::optional<Request> request = next_request(stream)) {
      if (silent) continue;
      switch (request->header.api_key) {
        case ApiKey::kApiVersions:
          answer(stream, *request, protocol::api_versions_response());
          break;
        case ApiKey::kMetadata:
          answer(stream, *request, metadata());
          break;
        case ApiKey::kInitProducerId:
          answer(stream, *request, init_producer_id(*request));
          break;
        case ApiKey::kProduce:
          on_produce(stream, produced(*request));
          break;
        default:
          ADD_FAILURE() << "unexpected " << protocol::api_name(request->header.api_key);
      }
    }
  }

  static protocol::MetadataResponse metadata() {
    protocol::MetadataResponse response = cluster_named("scripted");
    protocol::MetadataResponse::Topic& topic = response.topics.emplace_back();
    topic.name = kPartition.topic;
    topic.partitions.push_back({0, 0, 1, 0, {1}, {1}, {}});
    return response;
  }

  protocol::InitProducerIdResponse init_producer_id(const Request& request) {
    auto decoded = protocol::decode_message<protocol::InitProducerIdRequest>(request.body, request.header.api_version);
    EXPECT_TRUE(decoded.ok());
    if (decoded.ok()) init_requests.emplace_back(decoded->producer_id, decoded->producer_epoch);
    protocol::InitProducerIdResponse response;
    response.producer_id = next_producer_id++;
    response.producer_epoch = 0;
    return response;
  }

  static Produced produced(const Request& request) {
    auto decoded = protocol::decode_message<protocol::ProduceRequest>(request.body, request.header.api_version);
    EXPECT_TRUE(decoded.ok()) << decoded.status().to_string();
    Produced out{request, {}};
    if (!decoded.ok()) return out;
    auto header = storage::parse_batch_header(decoded->topic_data.at(0).partition_data.at(0).records.bytes());
    EXPECT_TRUE(header.ok());
    if (header.ok()) out.batch = *header;
    return out;
  }
};

void answer_produce(Stream& stream, const Request& request, int16_t error, int64_t base_offset) {
  protocol::ProduceResponse response;
  response.responses.push_back({kPartition.topic, {}});
  protocol::ProduceResponse::PartitionResponse& partition = response.responses[0].partition_responses.emplace_back();
  partition.index = kPartition.partition;
  partition.error_code = error;
  partition.base_offset = error == 0 ? base_offset : -1;
  answer(stream, request, response);
}

// A script that holds the first produces, as many as `answers`, until all have come, then answers them (error,
// offset) in order, and answers every later one at once, at its sequence as offset; `sequences` records each
// produce's base sequence.
std::function<void(Stream&, const Produced&)> hold_window_then(std::vector<int32_t>& sequences,
                                                               std::vector<std::pair<int16_t, int64_t>> answers) {
  auto held = std::make_shared<std::vector<Produced>>();
  return [&sequences, held, answers](Stream& stream, const Produced& p) {
    sequences.push_back(p.batch.base_sequence);
    if (sequences.size() > answers.size()) {
      answer_produce(stream, p.request, 0, p.batch.base_sequence);
      return;
    }
    held->push_back(p);
    if (held->size() < answers.size()) return;
    for (size_t i = 0; i < answers.size(); ++i) {
      answer_produce(stream, (*held)[i].request, answers[i].first, answers[i].second);
    }
  };
}

ProducerConfig idempotent() {
  ProducerConfig config;
  config.idempotent = true;
  config.delivery_timeout = 10s;
  return config;
}

TEST(ClientProducerSequence, OutOfOrderAtTheHeadFailsTheBatchAndStartsAfreshUnderANewProducerId) {
  ProduceScript script;
  std::vector<std::pair<int64_t, int32_t>> seen;  // (producer id, base sequence) of every produce
  script.on_produce = [&](Stream& stream, const Produced& p) {
    seen.emplace_back(p.batch.producer_id, p.batch.base_sequence);
    const bool refuse = seen.size() == 2;  // the broker lost what the first batch told it
    answer_produce(stream, p.request, refuse ? 45 : 0, static_cast<int64_t>(seen.size()) - 1);
  };
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env, Client& client) {
                           Producer producer(client, idempotent());
                           const ProduceResult a = producer.send_and_wait(kPartition, {record_of("a")});
                           const ProduceResult b = producer.send_and_wait(kPartition, {record_of("b")});
                           const ProduceResult c = producer.send_and_wait(kPartition, {record_of("c")});
                           EXPECT_EQ(a.outcome, Outcome::kOk);
                           EXPECT_EQ(b.outcome, Outcome::kFailed) << "refused, so not appended";
                           EXPECT_EQ(b.error_code, 45);
                           EXPECT_EQ(c.outcome, Outcome::kOk) << c.error;
                           EXPECT_EQ(c.producer_id, 1001);
                           EXPECT_EQ(c.base_sequence, 0);
                           EXPECT_EQ(producer.producer_id(), 1001);
                         }));
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int32_t>>{{1000, 0}, {1000, 1}, {1001, 0}}));
  ASSERT_EQ(script.init_requests.size(), 2u);
  EXPECT_EQ(script.init_requests[1], (std::pair<int64_t, int16_t>{1000, 0})) << "the second names the first (KIP-360)";
}

TEST(ClientProducerSequence, OutOfOrderBehindAFailedBatchIsSentAgainWithTheSameSequences) {
  ProduceScript script;
  std::vector<int32_t> sequences;
  // NOT_LEADER_OR_FOLLOWER: retriable, not appended; so the next ones cannot follow (OUT_OF_ORDER_SEQUENCE_NUMBER).
  script.on_produce = hold_window_then(sequences, {{6, -1}, {45, -1}, {45, -1}});
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env, Client& client) {
                           Producer producer(client, idempotent());
                           std::vector<ProduceResult> results;
                           for (const char* value : {"a", "b", "c"}) {
                             producer.send(kPartition, {record_of(value)},
                                           [&](const ProduceResult& r) { results.push_back(r); });
                           }
                           producer.flush();
                           ASSERT_EQ(results.size(), 3u);
                           for (int i = 0; i < 3; ++i) {
                             EXPECT_EQ(results[i].outcome, Outcome::kOk) << results[i].error;
                             EXPECT_EQ(results[i].base_offset, i);
                             EXPECT_EQ(results[i].base_sequence, i);
                             EXPECT_EQ(results[i].attempts, 2);
                           }
                         }));
  EXPECT_EQ(sequences, (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(script.init_requests.size(), 1u) << "no new producer id";
}

// On a cluster a leader may answer NOT_LEADER_OR_FOLLOWER after appending (it lost leadership during the acks=all
// wait) while the batches behind it succeed: the retry of the first then goes with the first batch after those, a
// gap in the window's sequences that is no gap at the broker (seed 116 of cluster_crashes_partitions asserted here).
TEST(ClientProducerSequence, ARetryWhoseLaterBatchesSucceededIsFollowedByTheNextNewBatch) {
  ProduceScript script;
  std::vector<int32_t> sequences;
  // "a" appended, then leadership moved during its acks=all wait; "b" and "c" acknowledged. Later: the retry of
  // "a" (a duplicate: its original offset), then "d".
  script.on_produce = hold_window_then(sequences, {{6, -1}, {0, 1}, {0, 2}});
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env env, Client& client) {
                           Producer producer(client, idempotent());
                           std::vector<ProduceResult> results;
                           for (const char* value : {"a", "b", "c"}) {
                             producer.send(kPartition, {record_of(value)},
                                           [&](const ProduceResult& r) { results.push_back(r); });
                           }
                           while (results.size() < 2) env.scheduler.sleep_for(1ms);  // "b" and "c"; "a" waits
                           producer.send(kPartition, {record_of("d")},
                                         [&](const ProduceResult& r) { results.push_back(r); });
                           producer.flush();
                           ASSERT_EQ(results.size(), 4u);
                           for (const ProduceResult& r : results) EXPECT_EQ(r.outcome, Outcome::kOk) << r.error;
                           EXPECT_EQ(results[2].base_sequence, 0);
                           EXPECT_EQ(results[2].attempts, 2);
                           EXPECT_EQ(results[3].base_sequence, 3);
                         }));
  EXPECT_EQ(sequences, (std::vector<int32_t>{0, 1, 2, 0, 3}));
}

// Found by cluster_crashes_partitions seed 1829 (BUGGIFY): of a window of four, the answers for the first and third
// were lost after their appends, and the second and fourth were acknowledged. Both retries are duplicates and go
// again together; the second does not follow the first, and the producer asserted it must.
TEST(ClientProducerSequence, TwoRetriesWhoseLaterBatchesSucceededGoAgainTogether) {
  ProduceScript script;
  std::vector<int32_t> sequences;
  script.on_produce = hold_window_then(sequences, {{6, -1}, {0, 1}, {6, -1}, {0, 3}});
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env, Client& client) {
                           Producer producer(client, idempotent());
                           std::vector<ProduceResult> results;
                           for (const char* value : {"a", "b", "c", "d"}) {
                             producer.send(kPartition, {record_of(value)},
                                           [&](const ProduceResult& r) { results.push_back(r); });
                           }
                           producer.flush();
                           ASSERT_EQ(results.size(), 4u);
                           for (const ProduceResult& r : results) EXPECT_EQ(r.outcome, Outcome::kOk) << r.error;
                         }));
  EXPECT_EQ(sequences, (std::vector<int32_t>{0, 1, 2, 3, 0, 2}));
}

// The window's answers can arrive while the sender is suspended on its way to writing the next batch (here, in the
// metadata refresh that finds the leader): a connection that breaks fails its calls while the refresh retries on a
// new connection. The next batch must not be the first written on that new connection, ahead of the retries of the
// batches that failed: their sequences would leave out of order.
TEST(ClientProducerSequence, ABatchWrittenAfterAConnectionBrokeFollowsTheRetriesOfTheBatchesItHeld) {
  ProduceScript script;
  int connection = 0;
  std::vector<std::pair<int, int32_t>> writes;  // (connection, base sequence) of every produce
  script.on_produce = [&](Stream& stream, const Produced& p) {
    writes.emplace_back(connection, p.batch.base_sequence);
    if (connection == 0) {
      script.silent = true;  // "a" is held, and so is the metadata refresh behind it, until the request timeout
      return;
    }
    answer_produce(stream, p.request, 0, p.batch.base_sequence);
  };
  ScriptedBroker broker;
  broker.client_config().read_attempts = 3;  // the refresh goes on over a new connection
  auto serve = [&](Env, Stream& stream, int index) {
    connection = index;
    script.silent = false;
    script.serve(stream);
  };
  ASSERT_TRUE(broker.run(serve, [&](Env env, Client& client) {
    Producer producer(client, idempotent());
    std::vector<ProduceResult> results;
    auto keep = [&](const ProduceResult& r) { results.push_back(r); };
    producer.send(kPartition, {record_of("a")}, keep);
    env.scheduler.sleep_for(100ms);  // "a" is written
    client.invalidate_metadata();    // so that "b" looks its leader up on the connection that is about to break
    producer.send(kPartition, {record_of("b")}, keep);
    producer.flush();
    ASSERT_EQ(results.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(results[i].outcome, Outcome::kOk) << results[i].error;
      EXPECT_EQ(results[i].base_sequence, i);
      EXPECT_EQ(results[i].base_offset, i);
    }
  }));
  EXPECT_EQ(writes, (std::vector<std::pair<int, int32_t>>{{0, 0}, {1, 0}, {1, 1}}));
}

// A batch queued again can reach its delivery timeout while the rest of its window is still out. The batches of
// that window that fail after it must still go ahead of the batches sent meanwhile: the reset that the expired
// sequence calls for then gives them their new sequences in send() order.
TEST(ClientProducerSequence, ARetryThatExpiresLeavesTheRestOfItsWindowAheadOfNewBatches) {
  ProduceScript script;
  std::vector<Produced> held;
  std::vector<std::pair<int64_t, int32_t>> appended;  // (producer id, base sequence) of the batches appended
  script.on_produce = [&](Stream& stream, const Produced& p) {
    if (p.batch.producer_id > 1000) {  // after the reset: appended in the order they come
      appended.emplace_back(p.batch.producer_id, p.batch.base_sequence);
      answer_produce(stream, p.request, 0, static_cast<int64_t>(appended.size()) - 1);
      return;
    }
    held.push_back(p);
    if (held.size() < 2) return;
    script.env->scheduler.sleep_for(200ms);
    answer_produce(stream, held[0].request, 19, -1);  // NOT_ENOUGH_REPLICAS: "a" goes again, but not before 1 s
    script.env->scheduler.sleep_for(600ms);          // "a" expires meanwhile; "c" was sent
    answer_produce(stream, held[1].request, 19, -1);
  };
  ScriptedBroker broker;
  broker.client_config().request_timeout = 5s;
  auto serve = [&](Env env, Stream& stream, int) {
    script.env.emplace(env);
    script.serve(stream);
  };
  ASSERT_TRUE(broker.run(serve, [&](Env env, Client& client) {
    ProducerConfig config = idempotent();
    config.delivery_timeout = 1s;
    Producer producer(client, config);
    std::map<std::string, ProduceResult> results;
    auto send = [&](const std::string& value) {
      producer.send(kPartition, {record_of(value)}, [&results, value](const ProduceResult& r) { results[value] = r; });
    };
    send("a");
    env.scheduler.sleep_for(300ms);
    send("b");                       // in the window behind "a"
    env.scheduler.sleep_for(300ms);  // "a" failed and waits for "b"
    send("c");
    producer.flush();
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results["a"].outcome, Outcome::kFailed) << "expired after a refusal that appended nothing";
    EXPECT_EQ(results["b"].outcome, Outcome::kOk) << results["b"].error;
    EXPECT_EQ(results["c"].outcome, Outcome::kOk) << results["c"].error;
    EXPECT_EQ(results["b"].base_offset, 0) << "b was sent before c";
    EXPECT_EQ(results["c"].base_offset, 1);
    EXPECT_EQ(results["b"].base_sequence, 0);
    EXPECT_EQ(results["c"].base_sequence, 1);
  }));
  EXPECT_EQ(appended, (std::vector<std::pair<int64_t, int32_t>>{{1001, 0}, {1001, 1}}));
}

TEST(ClientProducerSequence, DuplicateSequenceNumberIsASuccess) {
  ProduceScript script;
  script.on_produce = [&](Stream& stream, const Produced& p) { answer_produce(stream, p.request, 46, -1); };
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env, Client& client) {
                           Producer producer(client, idempotent());
                           const ProduceResult result = producer.send_and_wait(kPartition, {record_of("a")});
                           EXPECT_EQ(result.outcome, Outcome::kOk) << "an older broker's answer to a batch it has";
                           EXPECT_EQ(result.base_offset, -1);
                         }));
}

// Seed 19 of cluster_crashes_partitions: a leader that appended an acks=all batch and stopped leading before the
// replicas confirmed it answers NOT_LEADER_OR_FOLLOWER (as Kafka's does), and the next leader may commit the records.
// Such a batch may have been appended: whatever its later attempts answer, it never settles kFailed.
ProducerConfig retrying(int16_t acks) {
  ProducerConfig config;
  config.acks = acks;
  config.delivery_timeout = 2s;
  return config;
}

TEST(ClientProducerOutcome, AcksAllAnsweredNotLeaderOrFollowerMayHaveBeenAppended) {
  ProduceScript script;
  int produces = 0;
  script.on_produce = [&](Stream& stream, const Produced& p) {
    ++produces;
    answer_produce(stream, p.request, 6, -1);  // NOT_LEADER_OR_FOLLOWER, until the delivery timeout
  };
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env, Client& client) {
                           Producer producer(client, retrying(-1));
                           const ProduceResult result = producer.send_and_wait(kPartition, {record_of("a")});
                           EXPECT_EQ(result.outcome, Outcome::kUnknown) << result.error;
                         }));
  EXPECT_GE(produces, 2) << "retried until the delivery timeout";
}

TEST(ClientProducerOutcome, AcksOneAnsweredNotLeaderOrFollowerWasNotAppended) {
  ProduceScript script;
  script.on_produce = [&](Stream& stream, const Produced& p) { answer_produce(stream, p.request, 6, -1); };
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                         [&](Env, Client& client) {
                           Producer producer(client, retrying(1));
                           const ProduceResult result = producer.send_and_wait(kPartition, {record_of("a")});
                           EXPECT_EQ(result.outcome, Outcome::kFailed) << "acks=1 is answered after the append";
                           EXPECT_EQ(result.error_code, 6);
                         }));
}

// disk_full_roll seed 5127 --buggify: the broker wrote the batch to its .log, the index write after it failed and
// so did the rollback; the log went offline answering KAFKA_STORAGE_ERROR, and the next start recovered the batch.
// Kafka answers an I/O error during an append the same way, so a written attempt answered KAFKA_STORAGE_ERROR may
// have been appended, with any acks: it settles kUnknown, never kFailed (the history would call the record a
// phantom).
TEST(ClientProducerOutcome, AnAttemptAnsweredKafkaStorageErrorMayHaveBeenAppended) {
  for (const int16_t acks : {int16_t{1}, int16_t{-1}}) {
    ProduceScript script;
    int produces = 0;
    script.on_produce = [&](Stream& stream, const Produced& p) {
      ++produces;
      answer_produce(stream, p.request, 56, -1);
    };
    ScriptedBroker broker;
    ASSERT_TRUE(broker.run([&](Env, Stream& stream, int) { script.serve(stream); },
                           [&](Env, Client& client) {
                             Producer producer(client, retrying(acks));
                             const ProduceResult result = producer.send_and_wait(kPartition, {record_of("a")});
                             EXPECT_EQ(result.outcome, Outcome::kUnknown) << "acks " << acks << ": " << result.error;
                           }));
    EXPECT_GE(produces, 2) << "retried until the delivery timeout";
  }
}

}  // namespace
}  // namespace sluice::client
