// Caps on what one request may cost (issue 20 item 3), single node: fetch.max.bytes, responses kept within their
// frame, Kafka's 10000-record bound on one CreateTopics or CreatePartitions, sluice.max.broker.partitions, and
// Metadata answering a topic named many times once. Cluster mode: cluster_limits_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/group/coordinator.h"
#include "core/group/records.h"
#include "core/protocol/messages/create_partitions.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/metadata.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/fetch_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;
using protocol::CreateTopicsResponse;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

constexpr int16_t kPolicyViolation = 44;

FetchRequest fetch_everything(const std::string& topic, int32_t partitions) {
  FetchRequest request;
  request.max_wait_ms = 0;
  request.min_bytes = 1;
  request.max_bytes = INT32_MAX;
  FetchRequest::Topic& t = request.topics.emplace_back();
  t.topic = topic;
  for (int32_t p = 0; p < partitions; ++p) {
    FetchRequest::Partition& partition = t.partitions.emplace_back();
    partition.partition = p;
    partition.fetch_offset = 0;
    partition.partition_max_bytes = 1 << 20;
  }
  return request;
}

size_t record_bytes(const FetchResponse& response) {
  size_t total = 0;
  for (const auto& topic : response.responses) {
    for (const auto& partition : topic.partitions) {
      EXPECT_EQ(partition.error_code, 0);
      total += partition.records.bytes().size();
    }
  }
  return total;
}

TEST(AdminLimits, FetchMaxBytesCapsWhatAClientAsksFor) {
  BrokerConfig config;
  config.fetch_max_bytes = 1024;  // Kafka's minimum
  BrokerHarness harness(1, config);
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 4);
    const Bytes batch = make_records(1, 300);  // ~370 bytes
    for (int32_t p = 0; p < 4; ++p) {
      for (int i = 0; i < 3; ++i) append(env, broker, {"t", p}, batch);
    }
    auto response = fetch_owned(client, fetch_everything("t", 4), 12);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    const size_t total = record_bytes(*response);
    EXPECT_GT(total, 0u);
    EXPECT_LE(total, 1024u) << "the client asked for INT32_MAX";
    // The first batch still comes whole when it alone is larger (KIP-74).
    append(env, broker, {"t", 0}, make_records(4, 1000));
    FetchRequest past = fetch_everything("t", 1);
    past.topics[0].partitions[0].fetch_offset = 3;
    auto big = fetch_owned(client, past, 12);
    ASSERT_TRUE(big.ok());
    EXPECT_GT(record_bytes(*big), 4000u);
    // min_bytes is capped too (KafkaApis: at most the effective max_bytes): the long poll does not wait for more
    // than the broker would ever return. One batch of exactly 1024 bytes, all there is: enough.
    create_topic(env, broker, "exact", 1);
    size_t value_bytes = 900;
    value_bytes += 1024 - make_records(1, value_bytes).size();
    ASSERT_EQ(make_records(1, value_bytes).size(), 1024u);
    append(env, broker, {"exact", 0}, make_records(1, value_bytes));
    FetchRequest waiting = fetch_everything("exact", 1);
    waiting.min_bytes = 10 << 20;
    waiting.max_wait_ms = 5000;
    const Instant start = env.clock.now();
    auto answered = fetch_owned(client, waiting, 12);
    ASSERT_TRUE(answered.ok());
    EXPECT_LT(env.clock.now() - start, 100ms);
  }));
}

TEST(AdminLimits, FetchMaxBytesIsASettingWithKafkasDefaultAndMinimum) {
  Result<BrokerConfig> defaults = BrokerConfig::from_map({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->fetch_max_bytes, 57671680);
  EXPECT_EQ(defaults->max_broker_partitions, 10000);
  Result<BrokerConfig> set = BrokerConfig::from_map({{"fetch.max.bytes", "1024"},
                                                     {"sluice.max.broker.partitions", "20"}});
  ASSERT_TRUE(set.ok()) << set.status().to_string();
  EXPECT_EQ(set->fetch_max_bytes, 1024);
  EXPECT_EQ(set->max_broker_partitions, 20);
  EXPECT_FALSE(BrokerConfig::from_map({{"fetch.max.bytes", "1023"}}).ok());
  EXPECT_FALSE(BrokerConfig::from_map({{"sluice.max.broker.partitions", "0"}}).ok());
}

// Whatever the settings, a Fetch answer fits in its frame: records that would not are left out, as max_bytes leaves
// them out, and the client gets an answer (here the frame is lowered to 4 KiB; in production it is the int32 size).
TEST(AdminLimits, AFetchAnswerCountsItsFramingAndStaysWithinTheFrame) {
  BrokerConfig config;
  config.max_response_bytes = 4096;
  BrokerHarness harness(1, config);
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "t", 8);
    for (int32_t p = 0; p < 8; ++p) append(env, broker, {"t", p}, make_records(1, 1000));
    ASSERT_TRUE(client.send(fetch_everything("t", 8), 12).ok());
    auto frame = client.receive_frame();
    ASSERT_TRUE(frame.ok() && frame->has_value()) << "answered, not closed";
    EXPECT_LE((*frame)->size(), 4096u + protocol::kMaxResponseHeaderBytes);
    ByteView body;
    ASSERT_TRUE(protocol::decode_response_header(**frame, protocol::ApiKey::kFetch, 12, &body).ok());
    auto response = protocol::decode_message<FetchResponse>(body, 12);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    const size_t total = record_bytes(*response);
    EXPECT_GT(total, 2000u) << "what fits is returned";
    EXPECT_LT(total, 4096u);
  }));
}

// A response no frame could carry closes the connection (logged), as a request the broker cannot serve does: never
// an assertion, never a wrapped size. The broker goes on serving.
TEST(AdminLimits, AResponseTooLargeForItsFrameClosesTheConnection) {
  BrokerConfig config;
  config.max_response_bytes = 512;
  BrokerHarness harness(1, config);
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(env, broker, "wide", 40);
    MetadataRequest request;
    request.topics->push_back({.name = "wide"});
    auto response = client.call<MetadataResponse>(request, 9);
    ASSERT_FALSE(response.ok());
    EXPECT_EQ(response.status().code(), Code::kClosed) << response.status().to_string();
    KafkaClient again = BrokerHarness::connect(env);
    MetadataRequest small;
    small.topics->clear();
    auto answered = again.call<MetadataResponse>(small, 9);
    EXPECT_TRUE(answered.ok()) << answered.status().to_string();
  }));
}

TEST(AdminLimits, OneCreateTopicsWritesAtMostKafkasTenThousandRecords) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    // A TopicRecord and 9999 PartitionRecords: exactly the bound (validate_only: Kafka counts those too).
    EXPECT_EQ(create_topics(client, {new_topic("full", 9999)}, 7, true).topics.at(0).error_code, 0);
    // One more record, from a config, and the whole request is refused.
    for (bool validate_only : {true, false}) {
      const CreateTopicsResponse response = create_topics(
          client, {new_topic("small", 1), new_topic("full", 9999, {{"retention.ms", "1000"}})}, 7, validate_only);
      ASSERT_EQ(response.topics.size(), 2u);
      for (const auto& topic : response.topics) {
        EXPECT_EQ(topic.error_code, kPolicyViolation) << topic.name;
        EXPECT_EQ(topic.error_message.value_or(""), "Unable to perform excessively large batch operation.");
      }
    }
    EXPECT_TRUE(broker.topics().all().empty()) << "nothing was made, not even the small topic";
    // A count no broker could place is refused at once, before any placement.
    const CreateTopicsResponse huge = create_topics(client, {new_topic("huge", INT32_MAX)});
    EXPECT_EQ(huge.topics.at(0).error_code, kPolicyViolation);
    // Topics refused for their own reasons do not count.
    EXPECT_EQ(create_topics(client, {new_topic("ok", 2), new_topic("bad/name", 9999)}).topics.at(0).error_code, 0);
  }));
}

TEST(AdminLimits, OneCreatePartitionsAddsAtMostKafkasTenThousandPartitions) {
  BrokerConfig config;
  config.max_broker_partitions = 1'000'000;  // the request's bound alone
  BrokerHarness harness(1, config);
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "a");
    create_topic(client, "b");
    CreatePartitionsRequest checked;
    checked.topics.push_back({"a", 10'001, std::nullopt});  // 10000 new: the bound
    checked.topics.push_back({"b", 2, std::nullopt});       // one more
    checked.validate_only = true;
    auto bound = client.call<CreatePartitionsResponse>(checked, 3);
    ASSERT_TRUE(bound.ok());
    EXPECT_EQ(bound->results.at(0).error_code, 0);
    EXPECT_EQ(bound->results.at(1).error_code, kPolicyViolation);
    EXPECT_EQ(bound->results.at(1).error_message.value_or(""), "Unable to perform excessively large batch operation.");
    CreatePartitionsRequest request;
    request.topics.push_back({"a", INT32_MAX, std::nullopt});
    request.topics.push_back({"b", 3, std::nullopt});
    request.validate_only = false;
    auto response = client.call<CreatePartitionsResponse>(request, 3);
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    ASSERT_EQ(response->results.size(), 2u);
    EXPECT_EQ(response->results[0].error_code, kPolicyViolation);
    EXPECT_EQ(response->results[1].error_code, 0) << "a topic within the bound is still grown";
    EXPECT_EQ(broker.topics().find("a")->partitions, 1);
    EXPECT_EQ(broker.topics().find("b")->partitions, 3);
  }));
}

TEST(AdminLimits, ABrokerHoldsAtMostMaxBrokerPartitions) {
  BrokerConfig config;
  config.max_broker_partitions = 10;
  config.group.offsets_topic_partitions = 5;
  BrokerHarness harness(1, config);
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& client, Broker& broker) {
    create_topic(client, "six", 6);
    for (bool validate_only : {true, false}) {
      const CreateTopicsResponse refused = create_topics(client, {new_topic("five", 5)}, 7, validate_only);
      EXPECT_EQ(refused.topics.at(0).error_code, kPolicyViolation);
      EXPECT_NE(refused.topics.at(0).error_message.value_or("").find("sluice.max.broker.partitions"),
                std::string::npos);
    }
    create_topic(client, "three", 3);  // 9
    CreatePartitionsRequest grow;
    grow.topics.push_back({"three", 5, std::nullopt});
    for (bool validate_only : {true, false}) {
      grow.validate_only = validate_only;
      auto grown = client.call<CreatePartitionsResponse>(grow, 3);
      ASSERT_TRUE(grown.ok());
      EXPECT_EQ(grown->results.at(0).error_code, kPolicyViolation);
    }
    create_topic(client, "one", 1);  // 10: full
    MetadataRequest request;
    request.topics->push_back({.name = "auto"});
    request.allow_auto_topic_creation = true;
    auto metadata = client.call<MetadataResponse>(request, 9);
    ASSERT_TRUE(metadata.ok());
    EXPECT_EQ(metadata->topics.at(0).error_code, kPolicyViolation) << "auto-creation is held to it too";
    EXPECT_EQ(broker.topics().find("auto"), nullptr);
    // The coordinator's topic is made regardless: consumer groups keep working on a full broker.
    on_broker(env, broker, [&] { EXPECT_TRUE(broker.groups().ensure_offsets_topic().ok()); });
    EXPECT_NE(broker.topics().find(std::string(group::kOffsetsTopic)), nullptr);
  }));
}

// Kafka's handler takes the names as a set: one answer per topic, however often the request names it.
TEST(AdminLimits, MetadataAnswersATopicNamedManyTimesOnce) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "wide", 20);
    create_topic(client, "other", 1);
    MetadataRequest request;
    for (int i = 0; i < 1000; ++i) request.topics->push_back({.name = "wide"});
    request.topics->push_back({.name = "other"});
    request.topics->push_back({.name = "wide"});
    auto response = client.call<MetadataResponse>(request, 9);
    ASSERT_TRUE(response.ok());
    ASSERT_EQ(response->topics.size(), 2u);
    EXPECT_EQ(response->topics[0].name, "wide");
    EXPECT_EQ(response->topics[1].name, "other");
    MetadataRequest by_id;
    for (int i = 0; i < 3; ++i) by_id.topics->push_back({.topic_id = id_of(broker, "wide"), .name = std::nullopt});
    auto ids = client.call<MetadataResponse>(by_id, 12);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(ids->topics.size(), 1u);
  }));
}

}  // namespace
}  // namespace sluice::kafka
