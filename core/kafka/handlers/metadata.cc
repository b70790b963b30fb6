// Metadata (3): this node as the only broker and controller, leader of every partition, with auto-creation of
// the topics named (auto.create.topics.enable, and the request's allow_auto_topic_creation from v4).
#include <fmt/format.h>

#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/kafka/topic_names.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/metadata.h"

namespace sluice::kafka {
namespace {

using protocol::MetadataRequest;
using protocol::MetadataResponse;

MetadataResponse::Topic describe(const TopicInfo& info, int32_t node_id) {
  MetadataResponse::Topic topic;
  topic.name = info.name;
  topic.is_internal = is_internal_topic(info.name);
  for (int32_t p = 0; p < info.partitions; ++p) {
    MetadataResponse::Partition partition;
    partition.partition_index = p;
    partition.leader_id = node_id;
    partition.leader_epoch = 0;
    partition.replica_nodes = {node_id};
    partition.isr_nodes = {node_id};
    topic.partitions.push_back(std::move(partition));
  }
  return topic;
}

MetadataResponse::Topic named_topic(RequestContext& ctx, const std::string& name, bool may_create) {
  TopicTable& topics = ctx.broker.topics();
  Result<const TopicInfo*> found = may_create ? topics.find_or_create(name) : topics.find(name);
  if (found.ok() && *found != nullptr) return describe(**found, ctx.broker.config().node_id);
  MetadataResponse::Topic missing;
  missing.name = name;
  missing.error_code = static_cast<int16_t>(found.ok() ? ErrorCode::kUnknownTopicOrPartition
                                                       : to_error_code(found.status()));
  if (!found.ok()) ctx.env.log.info("metadata for topic '{}': {}", name, found.status().to_string());
  return missing;
}

Result<MetadataResponse> metadata(RequestContext& ctx, const MetadataRequest& request) {
  const BrokerConfig& config = ctx.broker.config();
  MetadataResponse response;
  response.brokers.push_back({config.node_id, config.advertised_host, config.advertised_port, std::nullopt});
  response.cluster_id = config.cluster_id;
  response.controller_id = config.node_id;
  if (request.all_topics(ctx.version())) {
    for (const TopicInfo* info : ctx.broker.topics().all()) {
      response.topics.push_back(describe(*info, config.node_id));
    }
    return response;
  }
  const bool may_create = ctx.version() < 4 || request.allow_auto_topic_creation;
  for (const MetadataRequest::Topic& topic : *request.topics) {
    response.topics.push_back(named_topic(ctx, *topic.name, may_create));  // never null before v10
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_metadata(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, metadata);
}

}  // namespace sluice::kafka
