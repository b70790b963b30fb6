// Builders and readers for the admin requests: CreateTopics, DeleteTopics, IncrementalAlterConfigs,
// DescribeConfigs, DeleteRecords (requests.h).
#include <fmt/format.h>

#include "core/client/errors.h"
#include "core/client/requests.h"

namespace sluice::client {

namespace {

constexpr int8_t kTopicResource = static_cast<int8_t>(protocol::ConfigResourceType::kTopic);
constexpr int8_t kSetConfig = 0;
constexpr int8_t kDeleteConfig = 1;

}  // namespace

protocol::CreateTopicsRequest create_topics_request(const std::vector<NewTopic>& topics, int32_t timeout_ms) {
  protocol::CreateTopicsRequest request;
  for (const NewTopic& topic : topics) {
    protocol::CreateTopicsRequest::Topic& out = request.topics.emplace_back();
    out.name = topic.name;
    out.num_partitions = topic.partitions;
    out.replication_factor = topic.replication_factor;
    for (const auto& [name, value] : topic.configs) out.configs.push_back({name, value});
  }
  request.timeout_ms = timeout_ms;
  request.validate_only = false;
  return request;
}

Status create_topics_answer(const protocol::CreateTopicsResponse& response, const std::string& name) {
  for (const protocol::CreateTopicsResponse::Topic& topic : response.topics) {
    if (topic.name != name) continue;
    if (topic.error_code == 0) return Status();
    return broker_error(topic.error_code, "create topic " + name, topic.error_message.value_or(""));
  }
  return corruption(fmt::format("the create-topics answer does not mention '{}'", name));
}

protocol::DeleteTopicsRequest delete_topics_request(const std::vector<std::string>& names, int32_t timeout_ms) {
  protocol::DeleteTopicsRequest request;
  for (const std::string& name : names) {
    request.topics.push_back({name, protocol::Uuid::zero()});  // v6+: by name
    request.topic_names.push_back(name);                       // v0-5
  }
  request.timeout_ms = timeout_ms;
  return request;
}

Status delete_topics_answer(const protocol::DeleteTopicsResponse& response, const std::string& name) {
  for (const protocol::DeleteTopicsResponse::Topic& topic : response.responses) {
    if (topic.name != name) continue;
    if (topic.error_code == 0) return Status();
    return broker_error(topic.error_code, "delete topic " + name, topic.error_message.value_or(""));
  }
  return corruption(fmt::format("the delete-topics answer does not mention '{}'", name));
}

protocol::IncrementalAlterConfigsRequest alter_configs_request(const std::string& topic,
                                                               const std::vector<ConfigChange>& changes) {
  protocol::IncrementalAlterConfigsRequest request;
  protocol::IncrementalAlterConfigsRequest::Resource& resource = request.resources.emplace_back();
  resource.resource_type = kTopicResource;
  resource.resource_name = topic;
  for (const ConfigChange& change : changes) {
    resource.configs.push_back({change.name, change.value ? kSetConfig : kDeleteConfig, change.value});
  }
  request.validate_only = false;
  return request;
}

Status alter_configs_answer(const protocol::IncrementalAlterConfigsResponse& response, const std::string& topic) {
  for (const auto& resource : response.responses) {
    if (resource.resource_name != topic) continue;
    if (resource.error_code == 0) return Status();
    return broker_error(resource.error_code, "alter configs of " + topic, resource.error_message.value_or(""));
  }
  return corruption(fmt::format("the alter-configs answer does not mention '{}'", topic));
}

protocol::DescribeConfigsRequest describe_configs_request(const std::string& topic) {
  protocol::DescribeConfigsRequest request;
  request.resources.push_back({kTopicResource, topic, std::nullopt});  // null keys: every config
  request.include_synonyms = false;
  request.include_documentation = false;
  return request;
}

Result<std::map<std::string, std::string>> describe_configs_answer(const protocol::DescribeConfigsResponse& response,
                                                                   const std::string& topic) {
  for (const protocol::DescribeConfigsResponse::ResourceResult& result : response.results) {
    if (result.resource_name != topic) continue;
    if (result.error_code != 0) {
      return broker_error(result.error_code, "describe configs of " + topic, result.error_message.value_or(""));
    }
    std::map<std::string, std::string> configs;
    for (const protocol::DescribeConfigsResponse::Config& config : result.configs) {
      if (config.value.has_value()) configs[config.name] = *config.value;
    }
    return configs;
  }
  return corruption(fmt::format("the describe-configs answer does not mention '{}'", topic));
}

protocol::DeleteRecordsRequest delete_records_request(const TopicPartitionId& tp, int64_t before_offset,
                                                      int32_t timeout_ms) {
  protocol::DeleteRecordsRequest request;
  request.topics.push_back({tp.topic, {{tp.partition, before_offset}}});
  request.timeout_ms = timeout_ms;
  return request;
}

Result<int64_t> delete_records_answer(const protocol::DeleteRecordsResponse& response, const TopicPartitionId& tp) {
  for (const protocol::DeleteRecordsResponse::Topic& topic : response.topics) {
    if (topic.name != tp.topic) continue;
    for (const protocol::DeleteRecordsResponse::Partition& partition : topic.partitions) {
      if (partition.partition_index != tp.partition) continue;
      if (partition.error_code != 0) return broker_error(partition.error_code, "delete records of " + tp.to_string());
      return partition.low_watermark;
    }
  }
  return corruption(fmt::format("the delete-records answer does not mention {}", tp.to_string()));
}

}  // namespace sluice::client
