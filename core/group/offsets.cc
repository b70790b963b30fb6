// GroupCoordinator: committed offsets (OffsetCommit, OffsetFetch, OffsetDelete) and the administrative APIs
// (DeleteGroups, ListGroups, DescribeGroups).
#include <algorithm>
#include <cctype>

#include "core/base/assert.h"
#include "core/group/coordinator.h"

namespace sluice::group {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// commit-wrong-partition: each offset goes under the next partition of its topic (mod its partition count), and
// the commit is still acknowledged as it was asked.
void planted_wrong_partitions(const TopicCatalog& topics, std::vector<OffsetToCommit>& offsets) {
  SLUICE_PROBE("mutation.commit-wrong-partition");
  for (OffsetToCommit& o : offsets) {
    const std::optional<TopicCatalog::Facts> facts = topics.find(o.tp.topic);
    SLUICE_ASSERT(facts.has_value() && facts->partitions > 0);  // checked by commit() just now
    o.tp.partition = (o.tp.partition + 1) % facts->partitions;
  }
}

}  // namespace

// Kafka's validateOffsetCommit, then the state check of doCommitOffsets.
std::optional<ErrorCode> GroupCoordinator::validate_commit(const GroupPtr& group, const CommitRequest& request) {
  if (group->is(GroupState::kDead)) return ErrorCode::kCoordinatorNotAvailable;
  if (request.generation_id < 0 && group->is(GroupState::kEmpty)) return std::nullopt;  // a standalone commit
  if (request.generation_id >= 0 || !request.member_id.empty() || request.group_instance_id.has_value()) {
    if (std::optional<ErrorCode> error = validate_member(*group, request.member_id, request.group_instance_id)) {
      return error;
    }
    if (request.generation_id != group->generation) return ErrorCode::kIllegalGeneration;
  } else if (!group->is(GroupState::kEmpty)) {
    return ErrorCode::kUnknownMemberId;  // only members commit for a group that has some
  }
  if (group->is(GroupState::kCompletingRebalance)) return ErrorCode::kRebalanceInProgress;
  if (auto it = group->members.find(request.member_id); it != group->members.end()) {
    schedule_session(group, it->second, it->second.session_timeout_ms);  // a commit counts as a heartbeat
  }
  return std::nullopt;
}

std::vector<ErrorCode> GroupCoordinator::commit(const CommitRequest& request) {
  std::vector<ErrorCode> errors(request.offsets.size(), ErrorCode::kNone);
  // The per-partition checks Kafka makes before the coordinator sees the request.
  bool persisted = false;
  for (size_t i = 0; i < request.offsets.size(); ++i) {
    const OffsetToCommit& o = request.offsets[i];
    std::optional<TopicCatalog::Facts> facts = topics_.find(o.tp.topic);
    if (!facts.has_value() || o.tp.partition < 0 || o.tp.partition >= facts->partitions) {
      errors[i] = ErrorCode::kUnknownTopicOrPartition;
    } else if (o.metadata.has_value() && o.metadata->size() > static_cast<size_t>(config_.offset_metadata_max_bytes)) {
      errors[i] = ErrorCode::kOffsetMetadataTooLarge;
    } else {
      persisted = persisted || facts->persisted_offsets;
    }
  }
  auto fill = [&errors](ErrorCode error) {
    for (ErrorCode& e : errors) {
      if (e == ErrorCode::kNone) e = error;
    }
    return errors;
  };
  if (std::optional<ErrorCode> error = check_status(request.group_id, true)) return fill(*error);
  GroupPtr group = lookup(request.group_id);
  if (group == nullptr) {
    // Without a group, only a commit outside group management (generation -1) may create one.
    if (request.generation_id >= 0) return fill(ErrorCode::kIllegalGeneration);
    group = get_or_create(request.group_id);
  }
  if (std::optional<ErrorCode> error = validate_commit(group, request)) return fill(*error);
  std::vector<OffsetToCommit> valid;
  for (size_t i = 0; i < request.offsets.size(); ++i) {
    if (errors[i] == ErrorCode::kNone) valid.push_back(request.offsets[i]);
  }
  if (config_.mutations.has(Mutation::kCommitWrongPartition)) [[unlikely]] planted_wrong_partitions(topics_, valid);
  return fill(store_offsets(group, valid, persisted));
}

FetchResult GroupCoordinator::fetch(const std::string& group_id,
                                    const std::optional<std::vector<storage::TopicPartition>>& partitions) {
  FetchResult result;
  if (std::optional<ErrorCode> error = check_status(group_id, true)) {
    result.error = *error;
    return result;
  }
  const GroupPtr group = lookup(group_id);
  const bool known = group != nullptr && !group->is(GroupState::kDead);
  if (!partitions.has_value()) {
    if (!known) return result;
    for (const auto& [tp, offset] : group->offsets) {
      result.partitions.push_back(
          FetchedOffset{tp, offset.offset, offset.leader_epoch, offset.metadata, ErrorCode::kNone});
    }
    return result;
  }
  for (const storage::TopicPartition& tp : *partitions) {
    FetchedOffset fetched;
    fetched.tp = tp;
    if (known) {
      if (auto it = group->offsets.find(tp); it != group->offsets.end()) {
        fetched.offset = it->second.offset;
        fetched.leader_epoch = it->second.leader_epoch;
        fetched.metadata = it->second.metadata;
      }
    }
    result.partitions.push_back(std::move(fetched));
  }
  return result;
}

OffsetDeleteResult GroupCoordinator::delete_offsets(const std::string& group_id,
                                                    const std::vector<storage::TopicPartition>& partitions) {
  OffsetDeleteResult result;
  if (std::optional<ErrorCode> error = check_status(group_id, false)) {
    result.error = *error;
    return result;
  }
  const GroupPtr group = lookup(group_id);
  if (group == nullptr || group->is(GroupState::kDead)) {
    result.error = ErrorCode::kGroupIdNotFound;
    return result;
  }
  const bool empty = group->is(GroupState::kEmpty);
  if (!empty && group->protocol_type != "consumer") {
    result.error = ErrorCode::kNonEmptyGroup;
    return result;
  }
  std::vector<storage::TopicPartition> eligible;
  for (const storage::TopicPartition& tp : partitions) {
    std::optional<TopicCatalog::Facts> facts = topics_.find(tp.topic);
    if (!facts.has_value() || tp.partition < 0 || tp.partition >= facts->partitions) {
      result.partitions.push_back(ErrorCode::kUnknownTopicOrPartition);
    } else if (!empty && group->subscribed_to(tp.topic)) {
      result.partitions.push_back(ErrorCode::kGroupSubscribedToTopic);
    } else {
      result.partitions.push_back(ErrorCode::kNone);
      eligible.push_back(tp);
    }
  }
  if (!eligible.empty()) cleanup_group(group, eligible);
  return result;
}

std::vector<ErrorCode> GroupCoordinator::delete_groups(const std::vector<std::string>& group_ids) {
  std::vector<ErrorCode> errors;
  for (const std::string& id : group_ids) {
    if (std::optional<ErrorCode> error = check_status(id, true)) {
      errors.push_back(*error);
      continue;
    }
    const GroupPtr group = lookup(id);
    if (group == nullptr || group->is(GroupState::kDead)) {
      errors.push_back(ErrorCode::kGroupIdNotFound);
    } else if (!group->is(GroupState::kEmpty)) {
      errors.push_back(ErrorCode::kNonEmptyGroup);
    } else {
      transition(*group, GroupState::kDead);
      std::vector<storage::TopicPartition> all;
      for (const auto& [tp, offset] : group->offsets) all.push_back(tp);
      cleanup_group(group, all);
      env_.log.info("group {} deleted with {} offsets", id, all.size());
      errors.push_back(ErrorCode::kNone);
    }
  }
  return errors;
}

ListResult GroupCoordinator::list(const std::vector<std::string>& states, const std::vector<std::string>& types) {
  ListResult result;
  if (stopping_) {
    result.error = ErrorCode::kCoordinatorNotAvailable;
    return result;
  }
  if (loading_) result.error = ErrorCode::kCoordinatorLoadInProgress;
  for (const auto& [partition, owned] : owned_) {
    if (owned.loading) result.error = ErrorCode::kCoordinatorLoadInProgress;  // Kafka's ListGroups while loading
  }
  auto classic = [](const std::string& type) { return lower(type) == kClassicGroupType; };
  if (!types.empty() && std::none_of(types.begin(), types.end(), classic)) return result;
  std::set<std::string> wanted;
  for (const std::string& state : states) wanted.insert(lower(state));
  for (const auto& [id, group] : groups_) {
    const std::string state(state_name(group->state));
    if (!wanted.empty() && wanted.count(lower(state)) == 0) continue;
    result.groups.push_back(GroupListing{id, group->protocol_type.value_or(""), state, std::string(kClassicGroupType)});
  }
  return result;
}

GroupDescription GroupCoordinator::describe(const std::string& group_id) {
  GroupDescription description;
  description.group_id = group_id;
  if (std::optional<ErrorCode> error = check_status(group_id, true)) {
    description.error = *error;
    return description;
  }
  const GroupPtr group = lookup(group_id);
  if (group == nullptr) {
    description.state = std::string(state_name(GroupState::kDead));
    return description;
  }
  description.state = std::string(state_name(group->state));
  description.protocol_type = group->protocol_type.value_or("");
  const bool stable = group->is(GroupState::kStable);
  if (stable) description.protocol = group->protocol.value_or("");
  for (const auto& [id, member] : group->members) {
    MemberDescription m{id, member.instance_id, member.client_id, member.client_host, Bytes(), Bytes()};
    if (stable && group->protocol.has_value()) {
      if (const Bytes* metadata = member.metadata_for(*group->protocol)) m.metadata = *metadata;
      m.assignment = member.assignment;
    }
    description.members.push_back(std::move(m));
  }
  return description;
}

}  // namespace sluice::group
