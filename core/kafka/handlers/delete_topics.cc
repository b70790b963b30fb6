// DeleteTopics (20): by name (v0-5 TopicNames, v6 Topics[].Name) or by id (v6 Topics[].TopicId), with Kafka's KRaft
// rules (ControllerApis.deleteTopics): neither or both of name and id, a name or id given twice, and a name whose
// topic is also named by id are INVALID_REQUEST; an unknown name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id
// UNKNOWN_TOPIC_ID. __consumer_offsets is never deleted (INVALID_REQUEST, by name or id): a departure, as Kafka 3.9's
// KRaft controller deletes it (only kafka-topics.sh refuses, on the client's side). A deleted topic's partition
// directories go at once (TopicTable::remove), and its committed offsets leave every consumer group
// (GroupCoordinator::remove_offsets_of_topic), as Kafka's onPartitionsDeleted.
// Cluster mode: DeleteTopic is proposed to the cluster metadata (by name and id, so that a topic made again under the
// name meanwhile is not the one deleted); the answer waits until this node removed its partitions, and every node
// removes its own as it follows the metadata.
#include "core/protocol/messages/delete_topics.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "core/kafka/admin_limits.h"
#include "core/kafka/broker.h"
#include "core/kafka/handlers/handlers.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::Uuid;

struct Target {
  std::optional<std::string> name;
  Uuid id;
  bool by_name() const { return name.has_value() && id.is_zero(); }
  bool by_id() const { return !name.has_value() && !id.is_zero(); }
};

DeleteTopicsResponse::Topic result(std::optional<std::string> name, const Uuid& id, int16_t error_code,
                                   std::optional<std::string> message) {
  return DeleteTopicsResponse::Topic{std::move(name), id, error_code, std::move(message)};
}

DeleteTopicsResponse::Topic invalid(std::optional<std::string> name, const Uuid& id, std::string message) {
  return result(std::move(name), id, static_cast<int16_t>(ErrorCode::kInvalidRequest), std::move(message));
}

// Where a deletion happens and how long it may wait for the cluster.
struct Deletion {
  TopicTable& topics;
  ClusterTopics* cluster;  // null on one node
  Instant deadline;
};

DeleteTopicsResponse::Topic remove(const Deletion& deletion, const TopicInfo& info, bool named) {
  const std::string name = info.name;  // `info` goes with the topic
  const Uuid id = info.id;
  const Status removed = is_coordinator_topic(name)    ? internal_topic_deletion(name)
                         : deletion.cluster != nullptr ? deletion.cluster->delete_topic(name, id, deletion.deadline)
                                                       : deletion.topics.remove(name);
  if (removed.ok()) return result(name, id, 0, std::nullopt);
  return result(name, named ? Uuid::zero() : id, static_cast<int16_t>(to_error_code(removed)), removed.message());
}

DeleteTopicsResponse::Topic delete_by_name(const Deletion& deletion, const std::string& name) {
  const TopicInfo* info = deletion.topics.find(name);
  if (info == nullptr) {
    return result(name, Uuid::zero(), static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition),
                  fmt::format("topic '{}' does not exist", name));
  }
  return remove(deletion, *info, true);
}

DeleteTopicsResponse::Topic delete_by_id(const Deletion& deletion, const Uuid& id) {
  const TopicInfo* info = deletion.topics.find_by_id(id);
  if (info == nullptr) {
    return result(std::nullopt, id, static_cast<int16_t>(ErrorCode::kUnknownTopicId),
                  fmt::format("no topic has id {}", id.to_string()));
  }
  return remove(deletion, *info, false);
}

std::vector<Target> targets(const DeleteTopicsRequest& request, int16_t version) {
  std::vector<Target> out;
  if (version >= 6) {
    for (const DeleteTopicsRequest::Topic& topic : request.topics) out.push_back({topic.name, topic.topic_id});
  } else {
    for (const std::string& name : request.topic_names) out.push_back({name, Uuid::zero()});
  }
  return out;
}

// Which names and ids the request gives more than once, and the names whose topic it also names by id (Kafka
// deletes neither then: it answers the name with INVALID_REQUEST and the id not at all).
struct Tally {
  std::map<std::string, int> names;
  std::map<Uuid, int> ids;
  std::map<std::string, Uuid> named_twice;  // name -> the id also given
  std::set<Uuid> ids_named_twice;

  Tally(const std::vector<Target>& all, const TopicTable& topics) {
    for (const Target& t : all) {
      if (t.by_name()) ++names[*t.name];
      if (t.by_id()) ++ids[t.id];
    }
    for (const auto& [name, count] : names) {
      const TopicInfo* info = topics.find(name);
      if (count != 1 || info == nullptr || !ids.contains(info->id)) continue;
      named_twice.emplace(name, info->id);
      ids_named_twice.insert(info->id);
    }
  }
};

// The answer for one target; nullopt when it gets none (a repeated duplicate, an id whose name was given too).
std::optional<DeleteTopicsResponse::Topic> delete_one(const Deletion& deletion, const Tally& tally, const Target& t,
                                                      std::set<std::string>& duplicate_names,
                                                      std::set<Uuid>& duplicate_ids) {
  if (t.by_name()) {
    if (tally.names.at(*t.name) > 1) {
      if (!duplicate_names.insert(*t.name).second) return std::nullopt;
      return invalid(t.name, t.id, "Duplicate topic name.");
    }
    auto twice = tally.named_twice.find(*t.name);
    if (twice != tally.named_twice.end()) {
      return invalid(t.name, twice->second, "The provided topic name maps to an ID that was already supplied.");
    }
    return delete_by_name(deletion, *t.name);
  }
  if (t.by_id()) {
    if (tally.ids.at(t.id) > 1) {
      if (!duplicate_ids.insert(t.id).second) return std::nullopt;
      return invalid(std::nullopt, t.id, "Duplicate topic id.");
    }
    if (tally.ids_named_twice.contains(t.id)) return std::nullopt;
    return delete_by_id(deletion, t.id);
  }
  if (t.name) return invalid(t.name, t.id, "You may not specify both topic name and topic id.");
  return invalid(std::nullopt, t.id, "Neither topic name nor id were specified.");
}

Result<DeleteTopicsResponse> delete_topics(RequestContext& ctx, const DeleteTopicsRequest& request) {
  TopicTable& topics = ctx.broker.topics();
  const std::vector<Target> all = targets(request, ctx.version());
  const Tally tally(all, topics);
  std::set<std::string> duplicate_names;
  std::set<Uuid> duplicate_ids;
  const Deletion deletion{topics, ctx.broker.cluster(), admin_deadline(ctx, request.timeout_ms)};
  DeleteTopicsResponse response;
  for (const Target& t : all) {
    std::optional<DeleteTopicsResponse::Topic> answer = delete_one(deletion, tally, t, duplicate_names, duplicate_ids);
    if (!answer) continue;
    if (answer->error_code == 0 && answer->name) ctx.broker.groups().remove_offsets_of_topic(*answer->name);
    response.responses.push_back(std::move(*answer));
  }
  return response;
}

}  // namespace

Result<HandlerOutcome> handle_delete_topics(RequestContext& ctx, ByteView body) {
  return typed(ctx, body, delete_topics);
}

}  // namespace sluice::kafka
