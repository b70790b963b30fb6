// AlterConfigs (33) and IncrementalAlterConfigs (44) on topic resources, through storage::TopicConfig::alter:
// AlterConfigs replaces the topic's overrides (keys it leaves out go back to their defaults), IncrementalAlterConfigs
// applies SET / DELETE / APPEND / SUBTRACT in order. A change is persisted and in force before the answer; with
// validate_only it is only checked. Kafka's per-resource refusals (ConfigAdminManager.preprocess,
// ControllerConfigurationValidator): a resource named twice, a null value (but for DELETE), an unknown operation
// and a key named twice are INVALID_REQUEST; a bad value INVALID_CONFIG naming the key (also for a change of the
// create-only durability keys). Broker resources accept an empty change list and refuse any change with
// INVALID_REQUEST, as Kafka does for a setting that cannot change while running: every Sluice broker setting is
// read at startup only. __consumer_offsets stays compacted alone: a change whose result has any other
// cleanup.policy (delete, compact,delete, none; also an AlterConfigs that leaves cleanup.policy out, which resets it
// to the broker default) is INVALID_CONFIG, a departure (Kafka 3.9 accepts it and lets retention drop offsets).
// Cluster mode: a topic change is proposed to the cluster metadata as AlterTopicConfig, carrying only the keys whose
// override it sets or deletes (computed from this node's view, so two concurrent changes of different keys both
// hold; of the same key, the later applied wins). The answer waits until this node follows it.
#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "core/kafka/admin_limits.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/configs.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/alter_configs.h"
#include "core/protocol/messages/describe_configs.h"
#include "core/protocol/messages/incremental_alter_configs.h"

namespace sluice::kafka {
namespace {

using protocol::AlterConfigsRequest;
using protocol::AlterConfigsResponse;
using protocol::ConfigResourceType;
using protocol::IncrementalAlterConfigsRequest;
using protocol::IncrementalAlterConfigsResponse;
using storage::AlterMode;
using storage::AlterOp;
using storage::ConfigChange;

// One resource of either request, in one form.
struct AlterResource {
  int8_t type = 0;
  std::string name;
  std::vector<ConfigChange> changes;
  std::vector<std::string> null_values;  // keys whose value is null (and whose operation needs one)
  std::optional<int8_t> bad_operation;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

Status alter_in_cluster(RequestContext& ctx, const std::string& name, const TopicTable::ConfigChange& change) {
  const TopicInfo* info = ctx.broker.topics().find(name);
  if (info == nullptr) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", name));
  }
  const std::string topic = info->name;  // `info` may go while the proposal waits
  const protocol::Uuid id = info->id;
  const std::map<std::string, std::string> current = info->config.overrides();
  SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig next, change(info->config));
  return ctx.broker.cluster()->alter_topic_config(topic, id, current, next.overrides(), admin_deadline(ctx, 0));
}

Status alter_topic(RequestContext& ctx, const AlterResource& resource, AlterMode mode, bool validate_only) {
  if (resource.name.empty()) return kafka_error(ErrorCode::kInvalidRequest, "Default topic resources are not allowed.");
  SLUICE_TRY(validate_topic_name(resource.name));
  TopicTable& topics = ctx.broker.topics();
  auto change = [&](const storage::TopicConfig& current) -> Result<storage::TopicConfig> {
    SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig next, storage::TopicConfig::alter(current, resource.changes, mode));
    SLUICE_TRY(check_internal_topic_config(resource.name, next));
    return next;
  };
  if (ctx.broker.cluster() != nullptr && !validate_only) return alter_in_cluster(ctx, resource.name, change);
  if (!validate_only) return topics.update_config(resource.name, change);
  const TopicInfo* info = topics.find(resource.name);
  if (info == nullptr) {
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, fmt::format("topic '{}' does not exist", resource.name));
  }
  return change(info->config).status();
}

Status alter_broker(RequestContext& ctx, const AlterResource& resource) {
  SLUICE_TRY(check_broker_resource_name(resource.name, ctx.broker.config().node_id));
  if (resource.changes.empty()) return Status();
  std::vector<std::string> names;
  for (const ConfigChange& change : resource.changes) names.push_back(change.name);
  return kafka_error(ErrorCode::kInvalidRequest,
                     fmt::format("Cannot update these configs dynamically: {} (Sluice reads broker settings only at "
                                 "startup: change them in the broker's configuration and restart it)",
                                 joined(names)));
}

Status alter_resource(RequestContext& ctx, const AlterResource& resource, AlterMode mode, bool validate_only) {
  if (resource.bad_operation) {
    return kafka_error(ErrorCode::kInvalidRequest, fmt::format("Unknown operations type {}", *resource.bad_operation));
  }
  if (!resource.null_values.empty()) {
    return kafka_error(ErrorCode::kInvalidRequest, "Null value not supported for : " + joined(resource.null_values));
  }
  switch (static_cast<ConfigResourceType>(resource.type)) {
    case ConfigResourceType::kTopic:
      return alter_topic(ctx, resource, mode, validate_only);
    case ConfigResourceType::kBroker:
      return alter_broker(ctx, resource);
    default:
      return kafka_error(ErrorCode::kInvalidRequest, fmt::format("Unknown resource type {}", resource.type));
  }
}

// Each resource's outcome, in request order; a resource named twice fails both times.
template <class Response>
Response alter_all(RequestContext& ctx, const std::vector<AlterResource>& resources, AlterMode mode,
                   bool validate_only) {
  std::map<std::pair<int8_t, std::string>, int> mentions;
  for (const AlterResource& r : resources) ++mentions[{r.type, r.name}];
  Response response;
  for (const AlterResource& resource : resources) {
    Status status = mentions[{resource.type, resource.name}] > 1
                        ? kafka_error(ErrorCode::kInvalidRequest, "Each resource must appear at most once.")
                        : alter_resource(ctx, resource, mode, validate_only);
    typename Response::Resource& answer = response.responses.emplace_back();
    answer.resource_type = resource.type;
    answer.resource_name = resource.name;
    if (status.ok()) continue;
    answer.error_code = static_cast<int16_t>(to_error_code(status));
    answer.error_message = status.message();
    ctx.env.log.info("alter configs of resource {} '{}': {}", resource.type, resource.name, status.to_string());
  }
  return response;
}

Result<AlterConfigsResponse> alter_configs(RequestContext& ctx, const AlterConfigsRequest& request) {
  std::vector<AlterResource> resources;
  for (const AlterConfigsRequest::Resource& r : request.resources) {
    AlterResource& resource = resources.emplace_back(AlterResource{r.resource_type, r.resource_name, {}, {}, {}});
    for (const AlterConfigsRequest::Config& config : r.configs) {
      if (!config.value) resource.null_values.push_back(config.name);
      resource.changes.push_back({config.name, AlterOp::kSet, config.value.value_or("")});
    }
  }
  return alter_all<AlterConfigsResponse>(ctx, resources, AlterMode::kReplace, request.validate_only);
}

Result<IncrementalAlterConfigsResponse> incremental_alter_configs(RequestContext& ctx,
                                                                  const IncrementalAlterConfigsRequest& request) {
  std::vector<AlterResource> resources;
  for (const IncrementalAlterConfigsRequest::Resource& r : request.resources) {
    AlterResource& resource = resources.emplace_back(AlterResource{r.resource_type, r.resource_name, {}, {}, {}});
    for (const IncrementalAlterConfigsRequest::Config& config : r.configs) {
      const int8_t op = config.config_operation;
      if (op < static_cast<int8_t>(AlterOp::kSet) || op > static_cast<int8_t>(AlterOp::kSubtract)) {
        resource.bad_operation = op;
      } else if (!config.value && op != static_cast<int8_t>(AlterOp::kDelete)) {
        resource.null_values.push_back(config.name);
      }
      resource.changes.push_back({config.name, static_cast<AlterOp>(op), config.value.value_or("")});
    }
  }
  return alter_all<IncrementalAlterConfigsResponse>(ctx, resources, AlterMode::kIncremental, request.validate_only);
}

}  // namespace

Result<HandlerOutcome> handle_alter_configs(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, alter_configs);
}

Result<HandlerOutcome> handle_incremental_alter_configs(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, incremental_alter_configs);
}

}  // namespace sluice::kafka
