// DescribeConfigs (32): topic resources (every key of the topic config table, with Kafka's sources: an override is
// DYNAMIC_TOPIC_CONFIG, a broker-set default STATIC_BROKER_CONFIG, otherwise DEFAULT_CONFIG; synonyms list the
// override, then the broker setting it falls back to and that setting's default) and broker resources (this node's
// settings, read-only: Sluice has no dynamic broker configs). Unknown keys in the request are left out, as Kafka does.
// v0 has no include_synonyms and answers is_default (true for DEFAULT_CONFIG) in place of config_source. Kafka 3.9
// leaves is_default false on every entry (its move to generated messages in 2.7 lost the assignment, and its v0
// clients then read every value as an override); this answers what the field means, as Kafka 2.6 did.
#include "core/kafka/handlers/configs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/describe_configs.h"

namespace sluice::kafka {
namespace {

using protocol::ConfigResourceType;
using protocol::ConfigSourceId;
using protocol::DescribeConfigsRequest;
using protocol::DescribeConfigsResponse;
using storage::ConfigType;

// One described key before the request's options shape it.
struct Row {
  std::string name;
  std::string value;
  ConfigSourceId source = ConfigSourceId::kDefaultConfig;
  bool read_only = false;
  ConfigType type = ConfigType::kString;
  std::string_view documentation;
  std::vector<DescribeConfigsResponse::Synonym> synonyms;
};

std::string show_bool(bool value) { return value ? "true" : "false"; }

// The broker's own settings. Topic defaults (log.retention.ms, ...) come from the topic config table.
struct BrokerSetting {
  std::string_view name;
  ConfigType type;
  std::string_view documentation;
  std::string (*show)(const BrokerConfig&);
};

const std::array kBrokerSettings = {
    BrokerSetting{"node.id", ConfigType::kInt, "This node's id.",
                  [](const BrokerConfig& c) { return std::to_string(c.node_id); }},
    BrokerSetting{"broker.id", ConfigType::kInt, "This node's id (node.id's older name).",
                  [](const BrokerConfig& c) { return std::to_string(c.node_id); }},
    BrokerSetting{"auto.create.topics.enable", ConfigType::kBoolean,
                  "Whether a Metadata request for an unknown topic creates it with the broker defaults.",
                  [](const BrokerConfig& c) { return show_bool(c.auto_create_topics_enable); }},
    BrokerSetting{"num.partitions", ConfigType::kInt,
                  "Partitions of an auto-created topic and of CreateTopics with num_partitions -1.",
                  [](const BrokerConfig& c) { return std::to_string(c.num_partitions); }},
    BrokerSetting{"default.replication.factor", ConfigType::kInt, "Replicas of a new topic; one node holds one.",
                  [](const BrokerConfig& c) { return std::to_string(c.default_replication_factor); }},
    BrokerSetting{"socket.request.max.bytes", ConfigType::kInt, "The largest request frame accepted, in bytes.",
                  [](const BrokerConfig& c) { return std::to_string(c.socket_request_max_bytes); }},
    BrokerSetting{"max.connections", ConfigType::kInt,
                  "At this many open connections, accepting waits until one closes.",
                  [](const BrokerConfig& c) { return std::to_string(c.max_connections); }},
    BrokerSetting{"max.connections.per.ip", ConfigType::kInt,
                  "Connections from one address beyond this are accepted and closed at once.",
                  [](const BrokerConfig& c) { return std::to_string(c.max_connections_per_ip); }},
    BrokerSetting{"connections.max.idle.ms", ConfigType::kLong,
                  "A connection through which no byte moved for this long is closed, in ms (-1: never).",
                  [](const BrokerConfig& c) {
                    if (!c.connections_max_idle) return std::string("-1");
                    return std::to_string(
                        std::chrono::duration_cast<std::chrono::milliseconds>(*c.connections_max_idle).count());
                  }},
    BrokerSetting{"request.timeout.ms", ConfigType::kInt,
                  "A request frame that stops arriving part way is dropped after this long, in ms.",
                  [](const BrokerConfig& c) {
                    return std::to_string(
                        std::chrono::duration_cast<std::chrono::milliseconds>(c.request_timeout).count());
                  }},
    BrokerSetting{"fetch.max.bytes", ConfigType::kInt,
                  "The most record bytes one Fetch returns (a larger first batch excepted).",
                  [](const BrokerConfig& c) { return std::to_string(c.fetch_max_bytes); }},
    BrokerSetting{"sluice.max.broker.partitions", ConfigType::kInt,
                  "The most partition replicas this broker holds; creations past it are refused.",
                  [](const BrokerConfig& c) { return std::to_string(c.max_broker_partitions); }},
    BrokerSetting{"auto.leader.rebalance.enable", ConfigType::kBoolean,
                  "Whether leadership moves back to a partition's preferred replica once it is in sync (clusters).",
                  [](const BrokerConfig& c) { return show_bool(c.auto_leader_rebalance_enable); }},
    BrokerSetting{"leader.imbalance.check.interval.seconds", ConfigType::kLong,
                  "How often a leader checks whether its partitions' preferred replicas can lead again, in s.",
                  [](const BrokerConfig& c) {
                    return std::to_string(
                        std::chrono::duration_cast<std::chrono::seconds>(c.leader_imbalance_check_interval).count());
                  }},
    BrokerSetting{"log.retention.check.interval.ms", ConfigType::kLong, "How often retention runs, in ms.",
                  [](const BrokerConfig& c) { return std::to_string(c.storage.log_retention_check_interval_ms); }},
    BrokerSetting{"log.cleaner.enable", ConfigType::kBoolean, "Whether compacted topics are cleaned.",
                  [](const BrokerConfig& c) { return show_bool(c.storage.log_cleaner_enable); }},
    BrokerSetting{"log.cleaner.backoff.ms", ConfigType::kLong, "The cleaner's sleep when nothing needs cleaning.",
                  [](const BrokerConfig& c) { return std::to_string(c.storage.log_cleaner_backoff_ms); }},
    BrokerSetting{"log.cleaner.dedupe.buffer.size", ConfigType::kLong, "Memory of the cleaner's key map, in bytes.",
                  [](const BrokerConfig& c) { return std::to_string(c.storage.log_cleaner_dedupe_buffer_size); }},
    BrokerSetting{
        "log.cleaner.io.buffer.load.factor", ConfigType::kDouble, "How full the cleaner fills its key map.",
        [](const BrokerConfig& c) { return storage::format_double(c.storage.log_cleaner_io_buffer_load_factor); }},
    BrokerSetting{"log.cleaner.io.buffer.size", ConfigType::kInt, "Memory of the cleaner's read and write buffers.",
                  [](const BrokerConfig& c) { return std::to_string(c.storage.log_cleaner_io_buffer_size); }},
    BrokerSetting{"log.flush.scheduler.interval.ms", ConfigType::kLong, "How often logs are checked against flush.ms.",
                  [](const BrokerConfig& c) { return std::to_string(c.storage.log_flush_scheduler_interval_ms); }},
    BrokerSetting{
        "log.flush.offset.checkpoint.interval.ms", ConfigType::kInt,
        "How often the recovery-point checkpoint is written, in ms.",
        [](const BrokerConfig& c) { return std::to_string(c.storage.log_flush_offset_checkpoint_interval_ms); }},
    BrokerSetting{
        "log.flush.start.offset.checkpoint.interval.ms", ConfigType::kInt,
        "How often the log-start-offset checkpoint is written, in ms.",
        [](const BrokerConfig& c) { return std::to_string(c.storage.log_flush_start_offset_checkpoint_interval_ms); }},
    BrokerSetting{"log.disk.usage.max.percent", ConfigType::kInt,
                  "Disk usage, in percent, above which log.disk.pressure.policy applies.",
                  [](const BrokerConfig& c) { return std::to_string(c.storage.log_disk_usage_max_percent); }},
    BrokerSetting{"log.disk.pressure.policy", ConfigType::kString,
                  "Above the usage threshold: reject refuses appends, delete-oldest drops the oldest data first.",
                  [](const BrokerConfig& c) -> std::string {
                    return c.storage.log_disk_pressure_policy == storage::DiskPressurePolicy::kDeleteOldest
                               ? "delete-oldest"
                               : "reject";
                  }},
    // The group coordinator's (core/group).
    BrokerSetting{"group.initial.rebalance.delay.ms", ConfigType::kInt,
                  "How long the first rebalance of an empty group waits for more members, in ms.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.initial_rebalance_delay_ms); }},
    BrokerSetting{"group.min.session.timeout.ms", ConfigType::kInt, "The shortest session timeout a member may ask.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.min_session_timeout_ms); }},
    BrokerSetting{"group.max.session.timeout.ms", ConfigType::kInt, "The longest session timeout a member may ask.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.max_session_timeout_ms); }},
    BrokerSetting{"group.max.size", ConfigType::kInt, "The most members a consumer group may have.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.max_size); }},
    BrokerSetting{"offsets.topic.num.partitions", ConfigType::kInt, "Partitions of __consumer_offsets.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.offsets_topic_partitions); }},
    BrokerSetting{"offsets.topic.replication.factor", ConfigType::kInt,
                  "Replicas of each __consumer_offsets partition (cluster mode; capped at the registered brokers).",
                  [](const BrokerConfig& c) { return std::to_string(c.group.offsets_topic_replication_factor); }},
    BrokerSetting{"offsets.topic.segment.bytes", ConfigType::kInt, "segment.bytes of __consumer_offsets.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.offsets_topic_segment_bytes); }},
    BrokerSetting{"offsets.retention.minutes", ConfigType::kInt,
                  "How long an empty group's committed offsets are kept, in minutes.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.offsets_retention_ms / (60 * 1000)); }},
    BrokerSetting{"offsets.retention.check.interval.ms", ConfigType::kLong,
                  "How often expired committed offsets are removed, in ms.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.offsets_retention_check_interval_ms); }},
    BrokerSetting{"offset.metadata.max.bytes", ConfigType::kInt, "The longest metadata an offset commit may carry.",
                  [](const BrokerConfig& c) { return std::to_string(c.group.offset_metadata_max_bytes); }},
};

// A broker setting is STATIC_BROKER_CONFIG when the configuration moved it off its default.
Row broker_row(std::string_view name, std::string value, std::string_view default_value, ConfigType type,
               std::string_view documentation) {
  Row row{std::string(name), std::move(value), ConfigSourceId::kDefaultConfig, true, type, documentation, {}};
  if (row.value != default_value) {
    row.source = ConfigSourceId::kStaticBrokerConfig;
    row.synonyms.push_back({row.name, row.value, static_cast<int8_t>(ConfigSourceId::kStaticBrokerConfig)});
  }
  row.synonyms.push_back({row.name, std::string(default_value), static_cast<int8_t>(ConfigSourceId::kDefaultConfig)});
  return row;
}

std::vector<Row> broker_rows(const BrokerConfig& config) {
  static const BrokerConfig kDefaults;
  std::vector<Row> rows;
  for (const BrokerSetting& s : kBrokerSettings) {
    rows.push_back(broker_row(s.name, s.show(config), s.show(kDefaults), s.type, s.documentation));
  }
  for (const storage::TopicConfigKey& key : storage::topic_config_keys()) {
    if (key.broker_synonym.empty()) continue;
    rows.push_back(broker_row(key.broker_synonym, key.show(config.storage.topic_defaults), key.default_value,
                              key.rule.type, key.documentation));
  }
  return rows;
}

std::vector<Row> topic_rows(const storage::TopicConfig& config) {
  std::vector<Row> rows;
  for (const storage::ConfigEntry& entry : config.describe()) {
    Row row{entry.name,          entry.value, static_cast<ConfigSourceId>(entry.source), entry.read_only, entry.type,
            entry.documentation, {}};
    if (entry.source == storage::ConfigSource::kDynamicTopicConfig) {
      row.synonyms.push_back({entry.name, entry.value, static_cast<int8_t>(ConfigSourceId::kDynamicTopicConfig)});
    }
    const storage::TopicConfigKey* key = storage::find_topic_config_key(entry.name);
    if (key != nullptr && !key->broker_synonym.empty()) {
      const std::string broker_value = key->show(config.defaults());
      if (broker_value != key->default_value) {
        row.synonyms.push_back(
            {std::string(key->broker_synonym), broker_value, static_cast<int8_t>(ConfigSourceId::kStaticBrokerConfig)});
      }
      row.synonyms.push_back({std::string(key->broker_synonym), std::string(key->default_value),
                              static_cast<int8_t>(ConfigSourceId::kDefaultConfig)});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

bool wanted(const DescribeConfigsRequest::Resource& resource, const std::string& name) {
  if (!resource.configuration_keys || resource.configuration_keys->empty()) return true;
  const std::vector<std::string>& keys = *resource.configuration_keys;
  return std::find(keys.begin(), keys.end(), name) != keys.end();
}

DescribeConfigsResponse::Config to_config(Row row, const DescribeConfigsRequest& request) {
  DescribeConfigsResponse::Config config;
  config.name = std::move(row.name);
  config.value = std::move(row.value);
  config.read_only = row.read_only;
  config.is_default = row.source == ConfigSourceId::kDefaultConfig;
  config.config_source = static_cast<int8_t>(row.source);
  if (request.include_synonyms) config.synonyms = std::move(row.synonyms);
  config.config_type = static_cast<int8_t>(row.type);
  if (request.include_documentation && !row.documentation.empty())
    config.documentation = std::string(row.documentation);
  return config;
}

Result<std::vector<Row>> resource_rows(RequestContext& ctx, const DescribeConfigsRequest::Resource& resource) {
  switch (static_cast<ConfigResourceType>(resource.resource_type)) {
    case ConfigResourceType::kTopic: {
      SLUICE_TRY(validate_topic_name(resource.resource_name));
      const TopicInfo* info = ctx.broker.topics().find(resource.resource_name);
      if (info == nullptr) {
        return kafka_error(ErrorCode::kUnknownTopicOrPartition,
                           fmt::format("topic '{}' does not exist", resource.resource_name));
      }
      return topic_rows(info->config);
    }
    case ConfigResourceType::kBroker:
      SLUICE_TRY(check_broker_resource_name(resource.resource_name, ctx.broker.config().node_id));
      if (resource.resource_name.empty()) return std::vector<Row>{};  // cluster-wide dynamic defaults: none
      return broker_rows(ctx.broker.config());
    default:
      return kafka_error(ErrorCode::kInvalidRequest,
                         fmt::format("Unsupported resource type: {}", resource.resource_type));
  }
}

Result<DescribeConfigsResponse> describe_configs(RequestContext& ctx, const DescribeConfigsRequest& request) {
  DescribeConfigsResponse response;
  for (const DescribeConfigsRequest::Resource& resource : request.resources) {
    DescribeConfigsResponse::ResourceResult& result = response.results.emplace_back();
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name;
    Result<std::vector<Row>> rows = resource_rows(ctx, resource);
    if (!rows.ok()) {
      result.error_code = static_cast<int16_t>(to_error_code(rows.status()));
      result.error_message = rows.status().message();
      continue;
    }
    for (Row& row : *rows) {
      if (wanted(resource, row.name)) result.configs.push_back(to_config(std::move(row), request));
    }
  }
  return response;
}

}  // namespace

Status check_broker_resource_name(const std::string& name, int32_t node_id) {
  if (name.empty()) return Status();
  int32_t id = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (error != std::errc() || end != name.data() + name.size()) {
    return kafka_error(ErrorCode::kInvalidRequest, fmt::format("Broker id must be an integer, but it is: {}", name));
  }
  if (id != node_id) {
    return kafka_error(
        ErrorCode::kInvalidRequest,
        fmt::format("Unexpected broker id, expected {} or empty string, but received {}", node_id, name));
  }
  return Status();
}

Result<HandlerOutcome> handle_describe_configs(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, describe_configs);
}

}  // namespace sluice::kafka
