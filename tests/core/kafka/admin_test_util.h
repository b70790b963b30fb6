// Helpers for the admin API tests (admin_test.cc, admin_configs_test.cc): create a topic through CreateTopics,
// look at a resource's described configs, change a topic's with IncrementalAlterConfigs, and write records straight
// into a partition.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/messages/create_topics.h"
#include "core/protocol/messages/describe_configs.h"
#include "core/protocol/messages/incremental_alter_configs.h"
#include "core/storage/record_batch.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka::testing {

inline protocol::CreateTopicsRequest::Topic new_topic(const std::string& name, int32_t partitions = 1,
                                                      std::map<std::string, std::string> configs = {}) {
  protocol::CreateTopicsRequest::Topic topic;
  topic.name = name;
  topic.num_partitions = partitions;
  topic.replication_factor = 1;
  for (auto& [key, value] : configs) topic.configs.push_back({key, value});
  return topic;
}

// One CreateTopics call at `version` for the topics given; the test fails on a transport error.
inline protocol::CreateTopicsResponse create_topics(KafkaClient& client,
                                                    std::vector<protocol::CreateTopicsRequest::Topic> topics,
                                                    int16_t version = 7, bool validate_only = false) {
  protocol::CreateTopicsRequest request;
  request.topics = std::move(topics);
  request.validate_only = validate_only;
  auto response = client.call<protocol::CreateTopicsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  return response.ok() ? *response : protocol::CreateTopicsResponse{};
}

// Creates one topic and expects success.
inline void create_topic(KafkaClient& client, const std::string& name, int32_t partitions = 1,
                         std::map<std::string, std::string> configs = {}) {
  protocol::CreateTopicsResponse response = create_topics(client, {new_topic(name, partitions, std::move(configs))});
  ASSERT_EQ(response.topics.size(), 1u);
  ASSERT_EQ(response.topics[0].error_code, 0) << response.topics[0].error_message.value_or("");
}

inline protocol::DescribeConfigsResponse::ResourceResult describe(
    KafkaClient& client, protocol::ConfigResourceType type, const std::string& name,
    std::optional<std::vector<std::string>> keys = std::nullopt, int16_t version = 3, bool synonyms = false,
    bool documentation = false) {
  protocol::DescribeConfigsRequest request;
  request.resources.push_back({static_cast<int8_t>(type), name, std::move(keys)});
  request.include_synonyms = synonyms;
  request.include_documentation = documentation;
  auto response = client.call<protocol::DescribeConfigsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->results.size() != 1) return {};
  return response->results[0];
}

// The described config called `name`; nullopt when absent.
inline std::optional<protocol::DescribeConfigsResponse::Config> config_named(
    const protocol::DescribeConfigsResponse::ResourceResult& result, const std::string& name) {
  for (const auto& config : result.configs) {
    if (config.name == name) return config;
  }
  return std::nullopt;
}

// One IncrementalAlterConfigs call for a topic's configs ({name, operation, value}; operation 0 is SET).
inline protocol::IncrementalAlterConfigsResponse::Resource alter_incrementally(
    KafkaClient& client, const std::string& topic,
    std::vector<protocol::IncrementalAlterConfigsRequest::Config> configs, int16_t version = 1) {
  protocol::IncrementalAlterConfigsRequest request;
  request.resources.push_back({static_cast<int8_t>(protocol::ConfigResourceType::kTopic), topic, std::move(configs)});
  auto response = client.call<protocol::IncrementalAlterConfigsResponse>(request, version);
  EXPECT_TRUE(response.ok()) << response.status().to_string();
  if (!response.ok() || response->responses.size() != 1) return {};
  return response->responses[0];
}

// Appends `count` small records to the partition, bypassing Produce.
inline void append_records(Broker& broker, const storage::TopicPartition& tp, int count) {
  std::vector<storage::Record> records;
  for (int i = 0; i < count; ++i) {
    storage::Record record;
    record.offset = i;
    record.timestamp = to_unix_ms(broker.env().clock.wall_now());  // young enough for retention
    record.key = Bytes{'k', static_cast<uint8_t>('0' + i % 10)};
    record.value = Bytes{'v'};
    records.push_back(std::move(record));
  }
  Result<Bytes> batch = storage::build_batch(records);
  ASSERT_TRUE(batch.ok()) << batch.status().to_string();
  auto appended = broker.logs().append(tp, *batch);
  ASSERT_TRUE(appended.ok()) << appended.status().to_string();
}

}  // namespace sluice::kafka::testing
