// GroupCoordinator: the records in __consumer_offsets — appends, the replay at start, and offset expiry.
#include <fmt/format.h>

#include <algorithm>

#include "core/base/assert.h"
#include "core/group/coordinator.h"
#include "core/storage/record_batch.h"

namespace sluice::group {
namespace {

// Kafka's GroupMetadataManager.maybeConvertOffsetCommitError.
ErrorCode commit_error(const Status& status) {
  const ErrorCode code = to_error_code(status);
  switch (code) {
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kNotEnoughReplicas:
    case ErrorCode::kRequestTimedOut:
      return ErrorCode::kCoordinatorNotAvailable;
    case ErrorCode::kNotLeaderOrFollower:
    case ErrorCode::kKafkaStorageError:
      return ErrorCode::kNotCoordinator;
    case ErrorCode::kMessageTooLarge:
    case ErrorCode::kRecordListTooLarge:
    case ErrorCode::kInvalidFetchSize:
      return ErrorCode::kInvalidCommitOffsetSize;
    case ErrorCode::kNone:
    case ErrorCode::kUnknownServerError:
      return ErrorCode::kCoordinatorNotAvailable;
    default:
      return code;
  }
}

constexpr size_t kLoadReadBytes = 1 << 20;

}  // namespace

int32_t GroupCoordinator::offsets_partitions() const {
  std::optional<TopicCatalog::Facts> facts = topics_.find(std::string(kOffsetsTopic));
  return facts.has_value() ? facts->partitions : config_.offsets_topic_partitions;
}

Status GroupCoordinator::ensure_offsets_topic() {
  if (topics_.find(std::string(kOffsetsTopic)).has_value()) return Status();
  LockGuard lock(topic_creation_);
  if (topics_.find(std::string(kOffsetsTopic)).has_value()) return Status();
  const std::map<std::string, std::string> overrides = {
      {"cleanup.policy", "compact"},
      {"segment.bytes", std::to_string(config_.offsets_topic_segment_bytes)},
  };
  Status created = topics_.create(std::string(kOffsetsTopic), config_.offsets_topic_partitions, overrides);
  if (!created.ok() && to_error_code(created) != ErrorCode::kTopicAlreadyExists) return created;
  return Status();
}

Result<storage::AppendResult> GroupCoordinator::append(const std::string& group_id,
                                                       const std::vector<EncodedRecord>& records, bool sync) {
  SLUICE_ASSERT(!records.empty());
  SLUICE_TRY(ensure_offsets_topic());
  const storage::TopicPartition tp{std::string(kOffsetsTopic), partition_for_group(group_id, offsets_partitions())};
  std::vector<storage::Record> batch_records;
  const int64_t now = wall_ms();
  for (size_t i = 0; i < records.size(); ++i) {
    storage::Record record;
    record.offset = static_cast<int64_t>(i);
    record.timestamp = now;
    record.key = records[i].key;
    record.value = records[i].value;
    batch_records.push_back(std::move(record));
  }
  SLUICE_ASSIGN_OR_RETURN(Bytes batch, storage::build_batch(batch_records));
  if (replicated_ != nullptr) {
    // Cluster mode: only as the leader of the group's partition, in the epoch its groups were loaded in; answered
    // once a quorum holds the records (Kafka appends with required acks -1). A `persisted` sync is the partition's.
    auto owned = owned_.find(tp.partition);
    if (owned == owned_.end() || owned->second.loading) {
      return kafka_error(ErrorCode::kNotLeaderOrFollower, tp.to_string() + " is not coordinated here");
    }
    return replicated_->append(tp.partition, owned->second.epoch, batch);
  }
  std::shared_ptr<storage::PartitionLog> log = logs_.find_shared(tp);
  if (log == nullptr) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string() + " is missing");
  SLUICE_ASSIGN_OR_RETURN(storage::AppendResult appended, logs_.append(tp, batch));
  // A `persisted` committed topic: the commit is acknowledged only once the offsets partition is synced too.
  if (sync && !log->settings().persisted) SLUICE_TRY(log->flush());
  return appended;
}

GroupRecord GroupCoordinator::group_record(const Group& group, const std::map<std::string, Bytes>* assignment) const {
  GroupRecord::Value value;
  value.protocol_type = group.protocol_type.value_or("");
  value.generation = group.generation;
  value.protocol = group.protocol;
  value.leader = group.leader;
  value.current_state_timestamp_ms = group.state_timestamp_ms;
  for (const auto& [id, member] : group.members) {
    GroupMemberRecord m{id, member.instance_id, member.client_id, member.client_host, member.rebalance_timeout_ms,
                        member.session_timeout_ms, Bytes(), member.assignment};
    if (group.protocol.has_value()) {
      if (const Bytes* metadata = member.metadata_for(*group.protocol)) m.subscription = *metadata;
    }
    if (assignment != nullptr) {
      auto it = assignment->find(id);
      m.assignment = it == assignment->end() ? Bytes() : it->second;
    }
    value.members.push_back(std::move(m));
  }
  return GroupRecord{group.id, std::move(value)};
}

Status GroupCoordinator::store_group(const GroupPtr& group, const std::map<std::string, Bytes>* assignment) {
  LockGuard turn(group->writes);
  // Built inside the turn: the last write of the group carries its latest state.
  SLUICE_ASSIGN_OR_RETURN(EncodedRecord record, encode_record(group_record(*group, assignment)));
  return append(group->id, {record}, false).status();
}

void GroupCoordinator::in_background(std::string name, std::function<void()> write) {
  ++background_writes_;
  env_.scheduler.spawn(std::move(name), [this, write = std::move(write)] {
    struct Done {
      GroupCoordinator& self;
      ~Done() {
        --self.background_writes_;
        self.background_done_.notify_all();
      }
    } done{*this};
    write();
  });
}

void GroupCoordinator::store_group_in_background(const GroupPtr& group) {
  in_background("group.store", [this, group] {
    const Status stored = store_group(group, nullptr);
    if (!stored.ok()) env_.log.warn("group {}: storing its metadata failed: {}", group->id, stored.to_string());
  });
}

ErrorCode GroupCoordinator::store_offsets(const GroupPtr& group, const std::vector<OffsetToCommit>& offsets,
                                          bool sync) {
  if (offsets.empty()) return ErrorCode::kNone;
  LockGuard turn(group->writes);
  const int64_t now = wall_ms();
  std::vector<EncodedRecord> records;
  std::vector<CommittedOffset> values;
  for (const OffsetToCommit& o : offsets) {
    CommittedOffset value{o.offset, o.leader_epoch, o.metadata.value_or(""),
                          o.commit_timestamp_ms >= 0 ? o.commit_timestamp_ms : now, o.expire_timestamp_ms};
    Result<EncodedRecord> record = encode_record(OffsetRecord{group->id, o.tp.topic, o.tp.partition,
        OffsetRecord::Value{value.offset, value.leader_epoch, value.metadata, value.commit_timestamp_ms,
                            value.expire_timestamp_ms}});
    if (!record.ok()) return ErrorCode::kInvalidCommitOffsetSize;
    records.push_back(std::move(record).value());
    values.push_back(std::move(value));
  }
  Result<storage::AppendResult> appended = append(group->id, records, sync);
  if (!appended.ok()) {
    env_.log.warn("group {}: committing {} offsets failed: {}", group->id, offsets.size(),
                  appended.status().to_string());
    return commit_error(appended.status());
  }
  if (group->is(GroupState::kDead)) return ErrorCode::kNone;  // deleted meanwhile: its tombstones came first
  for (size_t i = 0; i < offsets.size(); ++i) group->offsets[offsets[i].tp] = values[i];
  return ErrorCode::kNone;
}

size_t GroupCoordinator::cleanup_group(const GroupPtr& group, const std::vector<storage::TopicPartition>& remove) {
  LockGuard turn(group->writes);
  std::vector<EncodedRecord> tombstones;
  size_t removed = 0;
  for (const storage::TopicPartition& tp : remove) {
    if (group->offsets.erase(tp) == 0) continue;
    ++removed;
    Result<EncodedRecord> record = encode_record(OffsetRecord{group->id, tp.topic, tp.partition, std::nullopt});
    if (record.ok()) tombstones.push_back(std::move(record).value());
  }
  if (group->is(GroupState::kEmpty) && group->offsets.empty() && group->pending_members.empty()) {
    transition(*group, GroupState::kDead);
  }
  if (group->is(GroupState::kDead)) {
    cancel_group_timers(*group);
    auto it = groups_.find(group->id);
    if (it != groups_.end() && it->second == group) groups_.erase(it);
    Result<EncodedRecord> record = encode_record(GroupRecord{group->id, std::nullopt});
    if (record.ok()) tombstones.push_back(std::move(record).value());
  }
  if (!tombstones.empty()) {
    Result<storage::AppendResult> appended = append(group->id, tombstones, false);
    if (!appended.ok()) {
      env_.log.warn("group {}: writing {} tombstones failed: {}", group->id, tombstones.size(),
                    appended.status().to_string());
    }
  }
  return removed;
}

// ---- Replay ----

void GroupCoordinator::load_all() {
  std::map<std::string, Loaded> loaded;
  std::optional<TopicCatalog::Facts> facts = topics_.find(std::string(kOffsetsTopic));
  for (int32_t p = 0; facts.has_value() && p < facts->partitions && !stopping_; ++p) {
    const Status status = load_partition(p, loaded);
    if (!status.ok()) env_.log.warn("{}-{}: replay stopped early: {}", kOffsetsTopic, p, status.to_string());
  }
  apply_loaded(loaded);
  loading_ = false;
  loaded_.set();
  env_.log.info("group coordinator loaded {} groups", groups_.size());
}

Status GroupCoordinator::load_partition(int32_t partition, std::map<std::string, Loaded>& loaded) {
  std::shared_ptr<storage::PartitionLog> log = logs_.find_shared({std::string(kOffsetsTopic), partition});
  if (log == nullptr) return Status();
  int64_t offset = log->log_start_offset();
  while (offset < log->high_watermark() && !stopping_) {
    SLUICE_ASSIGN_OR_RETURN(storage::ReadResult read, log->read(offset, kLoadReadBytes, log->high_watermark()));
    if (read.records.empty()) break;
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(std::vector<storage::BatchSpan> spans, storage::split_batches(read.records, &consumed));
    if (spans.empty()) break;
    for (const storage::BatchSpan& span : spans) {
      offset = span.header.last_offset() + 1;
      if (span.header.control()) continue;
      SLUICE_ASSIGN_OR_RETURN(std::vector<storage::Record> records, storage::decode_records(ByteView(
          read.records.data() + span.position, span.header.size_bytes())));
      for (storage::Record& record : records) {
        if (!record.key.has_value()) continue;
        std::optional<ByteView> value;
        if (record.value.has_value()) value = ByteView(*record.value);
        Result<std::optional<CoordinatorRecord>> decoded = decode_record(*record.key, value);
        if (!decoded.ok()) {
          env_.log.warn("{}-{} offset {}: skipping a record: {}", kOffsetsTopic, partition, record.offset,
                        decoded.status().to_string());
          continue;
        }
        if (decoded->has_value()) apply_record(std::move(**decoded), loaded);
      }
    }
  }
  return Status();
}

void GroupCoordinator::apply_record(CoordinatorRecord record, std::map<std::string, Loaded>& loaded) {
  if (auto* offset = std::get_if<OffsetRecord>(&record)) {
    Loaded& group = loaded[offset->group];
    const storage::TopicPartition tp{offset->topic, offset->partition};
    if (!offset->value.has_value()) {
      group.offsets.erase(tp);
      return;
    }
    const OffsetRecord::Value& v = *offset->value;
    group.offsets[tp] = CommittedOffset{v.offset, v.leader_epoch, v.metadata, v.commit_timestamp_ms,
                                        v.expire_timestamp_ms};
    return;
  }
  auto& metadata = std::get<GroupRecord>(record);
  loaded[metadata.group].metadata = std::move(metadata.value);
}

void GroupCoordinator::apply_loaded(std::map<std::string, Loaded>& loaded) {
  for (auto& [id, entry] : loaded) {
    if (!entry.metadata.has_value() && entry.offsets.empty()) continue;
    auto group = std::make_shared<Group>(id, env_.scheduler);
    group->offsets = std::move(entry.offsets);
    if (entry.metadata.has_value()) {
      GroupRecord::Value& v = *entry.metadata;
      if (!v.protocol_type.empty()) group->protocol_type = v.protocol_type;
      group->generation = v.generation;
      group->protocol = v.protocol;
      group->leader = v.leader;
      group->state_timestamp_ms = v.current_state_timestamp_ms;
      for (GroupMemberRecord& m : v.members) {
        Member member;
        member.id = m.member_id;
        member.instance_id = m.group_instance_id;
        member.client_id = m.client_id;
        member.client_host = m.client_host;
        member.session_timeout_ms = m.session_timeout_ms;
        member.rebalance_timeout_ms = m.rebalance_timeout_ms;
        member.protocol_type = v.protocol_type;
        if (v.protocol.has_value()) member.protocols.push_back(Protocol{*v.protocol, std::move(m.subscription)});
        member.assignment = std::move(m.assignment);
        group->members.emplace(m.member_id, std::move(member));
      }
    }
    group->state = group->members.empty() ? GroupState::kEmpty : GroupState::kStable;
    if (group->leader.has_value() && !group->has(*group->leader)) group->leader.reset();
    groups_[id] = group;
    // Loaded members must heartbeat within their session, or they leave and the group rebalances.
    for (auto& [member_id, member] : group->members) schedule_session(group, member, member.session_timeout_ms);
    if (group->members.size() > static_cast<size_t>(config_.max_size)) {
      // group.max.size was lowered: in the rebalance the members to rejoin last are turned away (Kafka's rule).
      env_.log.info("group {}: {} members over group.max.size {}: rebalancing", id, group->members.size(),
                    config_.max_size);
      prepare_rebalance(group);
    }
  }
}

// ---- Expiry ----

void GroupCoordinator::expiry_loop() {
  const Duration interval = std::chrono::milliseconds(config_.offsets_retention_check_interval_ms);
  while (!stopping_) {
    if (stop_event_.wait_for(interval)) break;
    if (!loading_) expire_offsets();
  }
}

std::vector<storage::TopicPartition> GroupCoordinator::expired_offsets(const Group& group, int64_t now_ms) const {
  // Kafka 3.9's rules: an Empty group expires offsets retention after it became Empty; a Stable consumer group
  // expires those of topics it no longer subscribes to, retention after their commit; a group that never used
  // group management (no protocol type) expires each offset retention after its commit.
  std::optional<std::set<std::string>> subscribed;
  bool from_state_change = false;
  if (group.protocol_type.has_value() && group.is(GroupState::kEmpty)) {
    from_state_change = true;
  } else if (group.protocol_type == "consumer" && group.is(GroupState::kStable)) {
    subscribed = group.subscribed_topics();
    if (!subscribed.has_value()) return {};
  } else if (group.protocol_type.has_value()) {
    return {};
  }
  std::vector<storage::TopicPartition> expired;
  for (const auto& [tp, offset] : group.offsets) {
    if (subscribed.has_value() && subscribed->count(tp.topic) != 0) continue;
    int64_t base = offset.commit_timestamp_ms;
    if (from_state_change && group.state_timestamp_ms >= 0) base = group.state_timestamp_ms;
    const bool due = offset.expire_timestamp_ms.has_value() ? now_ms >= *offset.expire_timestamp_ms
                                                             : now_ms - base >= config_.offsets_retention_ms;
    if (due) expired.push_back(tp);
  }
  return expired;
}

size_t GroupCoordinator::expire_offsets() {
  const int64_t now = wall_ms();
  std::vector<GroupPtr> groups;
  for (const auto& [id, group] : groups_) groups.push_back(group);
  size_t expired = 0;
  for (const GroupPtr& group : groups) {
    std::vector<storage::TopicPartition> due = expired_offsets(*group, now);
    const bool empty_and_bare = group->is(GroupState::kEmpty) && group->offsets.size() == due.size() &&
                                group->pending_members.empty();
    if (due.empty() && !empty_and_bare) continue;
    expired += cleanup_group(group, due);
  }
  if (expired > 0) env_.log.info("expired {} committed offsets", expired);
  return expired;
}

void GroupCoordinator::remove_offsets_of_topic_in_background(const std::string& topic) {
  if (stopping_) return;
  in_background("group.topic-deleted", [this, topic] { remove_offsets_of_topic(topic); });
}

size_t GroupCoordinator::remove_offsets_of_topic(const std::string& topic) {
  if (stopping_) return 0;
  std::vector<GroupPtr> groups;
  for (const auto& [id, group] : groups_) groups.push_back(group);
  size_t removed = 0;
  for (const GroupPtr& group : groups) {  // cleanup_group suspends: the map may change meanwhile
    std::vector<storage::TopicPartition> gone;
    for (const auto& [tp, offset] : group->offsets) {
      if (tp.topic == topic) gone.push_back(tp);
    }
    if (!gone.empty()) removed += cleanup_group(group, gone);
  }
  if (removed > 0) env_.log.info("topic {} was deleted: removed its {} committed offsets", topic, removed);
  return removed;
}

}  // namespace sluice::group
