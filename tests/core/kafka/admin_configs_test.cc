// DescribeConfigs, AlterConfigs and IncrementalAlterConfigs through a simulated broker: sources, synonyms and
// documentation, broker resources, replace and incremental semantics, validate_only, changes in force at once, the
// create-only durability keys, and every refusal.
#include <gtest/gtest.h>

#include "core/protocol/messages/alter_configs.h"
#include "tests/core/kafka/admin_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::AlterConfigsRequest;
using protocol::AlterConfigsResponse;
using protocol::ConfigResourceType;
using protocol::DescribeConfigsResponse;
using protocol::IncrementalAlterConfigsRequest;
using protocol::IncrementalAlterConfigsResponse;

constexpr int8_t kTopic = static_cast<int8_t>(ConfigResourceType::kTopic);
constexpr int8_t kBroker = static_cast<int8_t>(ConfigResourceType::kBroker);

TEST(AdminDescribeConfigs, TopicSourcesSynonymsTypesAndDocumentation) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    create_topic(client, "t", 1, {{"retention.ms", "123456"}});
    const auto all = describe(client, ConfigResourceType::kTopic, "t", std::nullopt, 3, true, true);
    EXPECT_EQ(all.error_code, 0);
    EXPECT_EQ(all.resource_name, "t");
    EXPECT_EQ(all.resource_type, kTopic);
    EXPECT_EQ(all.configs.size(), storage::topic_config_keys().size());
    const auto retention = config_named(all, "retention.ms");
    ASSERT_TRUE(retention.has_value());
    EXPECT_EQ(retention->value, "123456");
    EXPECT_EQ(retention->config_source, 1);
    EXPECT_EQ(retention->config_type, 5) << "LONG";
    ASSERT_EQ(retention->synonyms.size(), 2u);
    EXPECT_EQ(retention->synonyms[0].name, "retention.ms");
    EXPECT_EQ(retention->synonyms[0].source, 1);
    EXPECT_EQ(retention->synonyms[1].name, "log.retention.ms");
    EXPECT_EQ(retention->synonyms[1].value, "604800000");
    EXPECT_EQ(retention->synonyms[1].source, 5);
    EXPECT_TRUE(retention->documentation.has_value() && !retention->documentation->empty());
    const auto policy = config_named(all, "cleanup.policy");
    ASSERT_TRUE(policy.has_value());
    EXPECT_EQ(policy->value, "delete");
    EXPECT_EQ(policy->config_source, 5);
    EXPECT_EQ(policy->config_type, 7) << "LIST";
    const auto durability = config_named(all, "durability");
    ASSERT_TRUE(durability.has_value());
    EXPECT_TRUE(durability->read_only);
    EXPECT_TRUE(durability->synonyms.empty()) << "no broker setting behind it";

    const auto plain = describe(client, ConfigResourceType::kTopic, "t", std::nullopt, 1);
    EXPECT_TRUE(config_named(plain, "retention.ms")->synonyms.empty()) << "synonyms only when asked";
    EXPECT_FALSE(config_named(plain, "retention.ms")->documentation.has_value());
    const auto one = describe(client, ConfigResourceType::kTopic, "t", std::vector<std::string>{"segment.ms", "nope"});
    ASSERT_EQ(one.configs.size(), 1u) << "an unknown key is left out";
    EXPECT_EQ(one.configs[0].name, "segment.ms");
    EXPECT_EQ(describe(client, ConfigResourceType::kTopic, "t", std::vector<std::string>{}).configs.size(),
              all.configs.size())
        << "an empty key list means every key";
  }));
}

TEST(AdminDescribeConfigs, BrokerDefaultsShowAsStaticBrokerConfig) {
  BrokerHarness harness;
  harness.config().num_partitions = 3;
  harness.config().storage.topic_defaults.retention_ms = 1000;
  harness.config().group.max_size = 4;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    create_topic(client, "t");
    const auto topic =
        describe(client, ConfigResourceType::kTopic, "t", std::vector<std::string>{"retention.ms"}, 2, true);
    ASSERT_EQ(topic.configs.size(), 1u);
    EXPECT_EQ(topic.configs[0].value, "1000");
    EXPECT_EQ(topic.configs[0].config_source, 4) << "STATIC_BROKER_CONFIG";
    ASSERT_EQ(topic.configs[0].synonyms.size(), 2u);
    EXPECT_EQ(topic.configs[0].synonyms[0].source, 4);
    EXPECT_EQ(topic.configs[0].synonyms[0].value, "1000");

    const auto broker = describe(client, ConfigResourceType::kBroker, "1", std::nullopt, 3, true, true);
    EXPECT_EQ(broker.error_code, 0);
    const auto partitions = config_named(broker, "num.partitions");
    ASSERT_TRUE(partitions.has_value());
    EXPECT_EQ(partitions->value, "3");
    EXPECT_EQ(partitions->config_source, 4);
    EXPECT_TRUE(partitions->read_only) << "no dynamic broker configs";
    const auto auto_create = config_named(broker, "auto.create.topics.enable");
    ASSERT_TRUE(auto_create.has_value());
    EXPECT_EQ(auto_create->value, "true");
    EXPECT_EQ(auto_create->config_source, 5);
    EXPECT_EQ(auto_create->config_type, 1) << "BOOLEAN";
    EXPECT_EQ(config_named(broker, "log.retention.ms")->value, "1000");
    EXPECT_EQ(config_named(broker, "log.segment.bytes")->config_source, 5);
    EXPECT_TRUE(config_named(broker, "log.cleanup.policy").has_value());
    EXPECT_TRUE(config_named(broker, "min.insync.replicas").has_value());
    const auto group_size = config_named(broker, "group.max.size");
    ASSERT_TRUE(group_size.has_value()) << "the group coordinator's settings are listed too";
    EXPECT_EQ(group_size->value, "4");
    EXPECT_EQ(group_size->config_source, 4);
    EXPECT_EQ(config_named(broker, "offsets.retention.minutes")->value, "10080");
    EXPECT_EQ(config_named(broker, "offsets.retention.minutes")->config_source, 5);
    EXPECT_EQ(config_named(broker, "group.min.session.timeout.ms")->value, "6000");

    EXPECT_TRUE(describe(client, ConfigResourceType::kBroker, "").configs.empty()) << "no dynamic cluster defaults";
  }));
}

// v0 answers is_default in place of the source and has no synonyms (include_synonyms is v1+), v3 adds the type
// and documentation, v4 is v3 made flexible.
TEST(AdminDescribeConfigs, EveryVersionFromV0) {
  BrokerHarness harness;
  harness.config().num_partitions = 3;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    create_topic(client, "t", 1, {{"retention.ms", "123456"}});
    const std::vector<std::string> keys = {"retention.ms", "cleanup.policy"};
    for (int16_t version = 0; version <= 4; ++version) {
      SCOPED_TRACE("v" + std::to_string(version));
      const auto topic = describe(client, ConfigResourceType::kTopic, "t", keys, version, true, true);
      ASSERT_EQ(topic.error_code, 0);
      const auto retention = config_named(topic, "retention.ms");
      const auto policy = config_named(topic, "cleanup.policy");
      ASSERT_TRUE(retention.has_value() && policy.has_value());
      EXPECT_EQ(retention->value, "123456");
      EXPECT_FALSE(retention->is_default) << "an override";
      EXPECT_EQ(policy->is_default, version == 0) << "a default (the field exists in v0 only)";
      EXPECT_EQ(retention->config_source, version >= 1 ? 1 : -1);
      EXPECT_EQ(policy->config_source, version >= 1 ? 5 : -1);
      EXPECT_EQ(retention->synonyms.size(), version >= 1 ? 2u : 0u);
      EXPECT_EQ(retention->config_type, version >= 3 ? 5 : 0);
      EXPECT_EQ(retention->documentation.has_value(), version >= 3);
      const auto broker =
          describe(client, ConfigResourceType::kBroker, "1", std::vector<std::string>{"num.partitions"}, version);
      ASSERT_EQ(broker.configs.size(), 1u);
      EXPECT_EQ(broker.configs[0].value, "3");
      EXPECT_FALSE(broker.configs[0].is_default) << "set in the broker's configuration";
      EXPECT_EQ(broker.configs[0].config_source, version >= 1 ? 4 : -1);
    }
  }));
}

TEST(AdminDescribeConfigs, Refusals) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    const auto unknown = describe(client, ConfigResourceType::kTopic, "nope");
    EXPECT_EQ(unknown.error_code, 3);
    EXPECT_TRUE(unknown.configs.empty());
    EXPECT_EQ(unknown.resource_name, "nope");
    EXPECT_EQ(describe(client, ConfigResourceType::kTopic, "bad/name").error_code, 17);
    const auto other = describe(client, ConfigResourceType::kBroker, "2");
    EXPECT_EQ(other.error_code, 42);
    EXPECT_NE(other.error_message->find("expected 1"), std::string::npos) << *other.error_message;
    EXPECT_EQ(describe(client, ConfigResourceType::kBroker, "one").error_code, 42);
    EXPECT_EQ(describe(client, ConfigResourceType::kBrokerLogger, "1").error_code, 42);
  }));
}

AlterConfigsResponse::Resource alter(KafkaClient& client, int8_t type, const std::string& name,
                                     std::vector<AlterConfigsRequest::Config> configs, bool validate_only = false,
                                     int16_t version = 1) {
  AlterConfigsRequest request;
  request.resources.push_back({type, name, std::move(configs)});
  request.validate_only = validate_only;
  auto response = client.call<AlterConfigsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1) return {};
  return response->responses[0];
}

std::string value_of(KafkaClient& client, const std::string& topic, const std::string& key) {
  const auto result = describe(client, ConfigResourceType::kTopic, topic, std::vector<std::string>{key});
  return result.configs.size() == 1 ? result.configs[0].value.value_or("<null>") : "<absent>";
}

TEST(AdminAlterConfigs, ReplacesTheOverridesAndTakesEffectAtOnce) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 2, {{"retention.ms", "3600000"}, {"segment.bytes", "1048576"}});
    for (int16_t version : {0, 1, 2}) {
      const auto answer =
          alter(client, kTopic, "t", {{"retention.ms", std::to_string(7200000 + version)}}, false, version);
      EXPECT_EQ(answer.error_code, 0) << answer.error_message.value_or("");
      EXPECT_EQ(answer.resource_name, "t");
      EXPECT_EQ(answer.resource_type, kTopic);
      EXPECT_EQ(value_of(client, "t", "retention.ms"), std::to_string(7200000 + version));
    }
    EXPECT_EQ(value_of(client, "t", "segment.bytes"), "1073741824") << "left out, so back to the default";
    for (int32_t p : {0, 1}) {
      EXPECT_EQ(broker.logs().topic_config({"t", p})->retention_ms, 7200002);
      EXPECT_EQ(broker.logs().topic_config({"t", p})->segment_bytes, 1073741824);
    }
    EXPECT_EQ(broker.topics().find("t")->config.retention_ms, 7200002);

    EXPECT_EQ(alter(client, kTopic, "t", {{"retention.ms", "5"}}, /*validate_only=*/true).error_code, 0);
    EXPECT_EQ(alter(client, kTopic, "t", {{"retention.ms", "-7"}}, /*validate_only=*/true).error_code, 40);
    EXPECT_EQ(value_of(client, "t", "retention.ms"), "7200002") << "validate_only changes nothing";
    EXPECT_EQ(broker.logs().topic_config({"t", 0})->retention_ms, 7200002);
  }));
}

TEST(AdminAlterConfigs, Refusals) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    create_topic(client, "t", 1, {{"cleanup.policy", "delete"}});
    const auto bogus = alter(client, kTopic, "t", {{"cleanup.policy", "bogus"}});
    EXPECT_EQ(bogus.error_code, 40);
    EXPECT_NE(bogus.error_message->find("cleanup.policy"), std::string::npos) << *bogus.error_message;
    EXPECT_EQ(value_of(client, "t", "cleanup.policy"), "delete");
    EXPECT_EQ(alter(client, kTopic, "t", {{"no.such.key", "1"}}).error_code, 40);
    EXPECT_EQ(alter(client, kTopic, "t", {{"retention.ms", std::nullopt}}).error_code, 42);
    EXPECT_EQ(alter(client, kTopic, "t", {{"retention.ms", "1"}, {"retention.ms", "2"}}).error_code, 42);
    EXPECT_EQ(alter(client, kTopic, "nope", {{"retention.ms", "1"}}).error_code, 3);
    EXPECT_EQ(alter(client, kTopic, "nope", {{"retention.ms", "1"}}, true).error_code, 3);
    EXPECT_EQ(alter(client, kTopic, "bad/name", {}).error_code, 17);
    EXPECT_EQ(alter(client, kTopic, "", {}).error_code, 42);
    EXPECT_EQ(alter(client, 8, "1", {}).error_code, 42) << "unknown resource type";

    AlterConfigsRequest twice;
    twice.resources.push_back({kTopic, "t", {{"retention.ms", "1"}}});
    twice.resources.push_back({kTopic, "t", {{"retention.ms", "2"}}});
    auto response = client.call<AlterConfigsResponse>(twice, 2);
    ASSERT_TRUE(response.ok());
    ASSERT_EQ(response->responses.size(), 2u);
    EXPECT_EQ(response->responses[0].error_code, 42);
    EXPECT_EQ(response->responses[1].error_code, 42);
    EXPECT_EQ(value_of(client, "t", "retention.ms"), "604800000");
  }));
}

TEST(AdminAlterConfigs, BrokerResourcesRefuseChanges) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    const auto change = alter(client, kBroker, "1", {{"num.partitions", "5"}});
    EXPECT_EQ(change.error_code, 42);
    EXPECT_NE(change.error_message->find("num.partitions"), std::string::npos) << *change.error_message;
    EXPECT_EQ(broker.config().num_partitions, 1);
    EXPECT_EQ(alter(client, kBroker, "", {{"log.retention.ms", "5"}}).error_code, 42);
    EXPECT_EQ(alter(client, kBroker, "1", {}).error_code, 0) << "nothing to change";
    EXPECT_EQ(alter(client, kBroker, "3", {}).error_code, 42) << "another node";
    IncrementalAlterConfigsRequest request;
    request.resources.push_back({kBroker, "1", {{"num.partitions", 0, "5"}}});
    auto incremental = client.call<IncrementalAlterConfigsResponse>(request, 1);
    ASSERT_TRUE(incremental.ok());
    EXPECT_EQ(incremental->responses[0].error_code, 42);
  }));
}

TEST(AdminAlterConfigs, DurabilityIsFixedAtCreation) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 1, {{"durability", "persisted"}});
    const auto changed = alter(client, kTopic, "t", {{"durability", "replicated"}});
    EXPECT_EQ(changed.error_code, 40);
    EXPECT_NE(changed.error_message->find("durability"), std::string::npos) << *changed.error_message;
    const auto incremental = alter_incrementally(client, "t", {{"consumer.offset.durability", 0, "persisted"}});
    EXPECT_EQ(incremental.error_code, 40);
    EXPECT_EQ(alter(client, kTopic, "t", {{"durability", "persisted"}, {"retention.ms", "1000"}}).error_code, 0)
        << "restating the value it has is fine";
    EXPECT_EQ(alter(client, kTopic, "t", {{"retention.ms", "2000"}}).error_code, 0)
        << "replace semantics leave the create-only keys alone";
    EXPECT_EQ(broker.logs().topic_config({"t", 0})->durability, storage::Durability::kPersisted);
    EXPECT_EQ(value_of(client, "t", "durability"), "persisted");
  }));
}

TEST(AdminIncrementalAlterConfigs, SetDeleteAppendSubtract) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 1, {{"segment.bytes", "1048576"}});
    for (int16_t version : {0, 1}) {
      const auto set =
          alter_incrementally(client, "t", {{"retention.ms", 0, "1000"}, {"cleanup.policy", 2, "compact"}}, version);
      EXPECT_EQ(set.error_code, 0) << set.error_message.value_or("");
    }
    EXPECT_EQ(value_of(client, "t", "retention.ms"), "1000");
    EXPECT_EQ(value_of(client, "t", "segment.bytes"), "1048576") << "incremental keeps the other overrides";
    EXPECT_EQ(value_of(client, "t", "cleanup.policy"), "compact,delete");
    EXPECT_TRUE(broker.logs().topic_config({"t", 0})->compacted());
    EXPECT_EQ(alter_incrementally(client, "t", {{"cleanup.policy", 3, "delete"}, {"retention.ms", 1, std::nullopt}})
                  .error_code,
              0);
    EXPECT_EQ(value_of(client, "t", "cleanup.policy"), "compact");
    EXPECT_EQ(value_of(client, "t", "retention.ms"), "604800000") << "DELETE goes back to the default";
    EXPECT_FALSE(broker.logs().topic_config({"t", 0})->retention_enabled());

    EXPECT_EQ(alter_incrementally(client, "t", {{"retention.ms", 2, "5"}}).error_code, 40) << "APPEND on a LONG";
    EXPECT_EQ(alter_incrementally(client, "t", {{"retention.ms", 9, "5"}}).error_code, 42) << "unknown operation";
    EXPECT_EQ(alter_incrementally(client, "t", {{"retention.ms", 0, std::nullopt}}).error_code, 42);
    EXPECT_EQ(alter_incrementally(client, "t", {{"segment.ms", 0, "0"}}).error_code, 40);
    EXPECT_EQ(alter_incrementally(client, "nope", {{"segment.ms", 0, "10"}}).error_code, 3);

    IncrementalAlterConfigsRequest dry;
    dry.resources.push_back({kTopic, "t", {{"retention.ms", 0, "77"}}});
    dry.validate_only = true;
    auto response = client.call<IncrementalAlterConfigsResponse>(dry, 1);
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->responses[0].error_code, 0);
    EXPECT_EQ(value_of(client, "t", "retention.ms"), "604800000");
  }));
}

}  // namespace
}  // namespace sluice::kafka
