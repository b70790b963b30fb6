// GroupCoordinator in cluster mode: the offsets partitions this node leads are the ones whose groups it coordinates
// (Kafka's GroupCoordinator.onElection / onResignation). One fiber follows the partitions' leadership: a partition
// this node came to lead is loaded once its log is committed up to where it stood; one it no longer leads (or leads
// in a new epoch) has its groups unloaded.
#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/group/coordinator.h"
#include "core/group/coordinator_internal.h"

namespace sluice::group {
namespace {

// How often the fiber looks at the partitions' leadership (Kafka reacts to LeaderAndIsr at once).
constexpr Duration kLeadershipPoll = std::chrono::milliseconds(50);

}  // namespace

int32_t GroupCoordinator::partition_of(const std::string& group_id) const {
  return partition_for_group(group_id, offsets_partitions());
}

std::optional<ErrorCode> GroupCoordinator::check_owned(const std::string& group_id) const {
  const int32_t partition = partition_of(group_id);
  // The partition's leadership as it is now, not as the fiber last saw it: a node that no longer leads answers
  // NOT_COORDINATOR at once, and one that just became leader (or leads in a new epoch) is loading (Kafka marks the
  // partition loading as it is elected).
  const std::optional<int32_t> epoch = replicated_->leader_epoch(partition);
  if (!epoch.has_value()) return ErrorCode::kNotCoordinator;
  auto it = owned_.find(partition);
  if (it == owned_.end() || it->second.epoch != *epoch || it->second.loading) {
    return ErrorCode::kCoordinatorLoadInProgress;
  }
  return std::nullopt;
}

bool GroupCoordinator::coordinates(const std::string& group_id) const {
  if (replicated_ == nullptr) return !stopping_;
  return !stopping_ && !check_owned(group_id).has_value();
}

void GroupCoordinator::ownership_loop() {
  while (!stopping_) {
    follow_leadership();
    if (stop_event_.wait_for(kLeadershipPoll)) break;
  }
}

void GroupCoordinator::follow_leadership() {
  std::optional<TopicCatalog::Facts> facts = topics_.find(std::string(kOffsetsTopic));
  const int32_t partitions = facts.has_value() ? facts->partitions : 0;
  for (int32_t p = 0; p < partitions && !stopping_; ++p) {
    const std::optional<int32_t> epoch = replicated_->leader_epoch(p);
    auto it = owned_.find(p);
    if (it != owned_.end() && it->second.epoch != epoch.value_or(-1)) {
      env_.log.info("{}-{}: no longer led here in epoch {}: unloading its groups", kOffsetsTopic, p,
                    it->second.epoch);
      unload_partition(p);
      it = owned_.end();
    }
    if (!epoch.has_value()) continue;
    if (it == owned_.end()) {
      std::shared_ptr<storage::PartitionLog> log = logs_.find_shared({std::string(kOffsetsTopic), p});
      if (log == nullptr) continue;
      env_.log.info("{}-{}: led here in epoch {}: loading its groups", kOffsetsTopic, p, *epoch);
      it = owned_.emplace(p, Owned{*epoch, true, log->log_end_offset()}).first;
    }
    if (it->second.loading) load_owned(p, it->second);
  }
  // Partitions gone from the topic (it was deleted): nothing of them is coordinated here any more.
  for (auto it = owned_.lower_bound(partitions); it != owned_.end();) {
    const int32_t p = (it++)->first;
    unload_partition(p);
  }
}

void GroupCoordinator::load_owned(int32_t partition, Owned& owned) {
  std::shared_ptr<storage::PartitionLog> log = logs_.find_shared({std::string(kOffsetsTopic), partition});
  // Everything the new leader held is committed once its own first entry is: only then is the log final below
  // the point it stood at.
  if (log == nullptr || log->high_watermark() < owned.load_up_to) return;
  const int32_t epoch = owned.epoch;
  std::map<std::string, Loaded> loaded;
  const Status status = load_partition(partition, loaded);
  // The replay suspends: the partition may have changed hands (or the topic gone) meanwhile.
  auto it = owned_.find(partition);
  if (stopping_ || it == owned_.end() || it->second.epoch != epoch || replicated_->leader_epoch(partition) != epoch) {
    return;
  }
  if (!status.ok()) {
    env_.log.warn("{}-{}: loading its groups failed ({}); trying again", kOffsetsTopic, partition,
                  status.to_string());
    return;
  }
  apply_loaded(loaded);
  it->second.loading = false;
  env_.log.info("{}-{}: coordinating its {} groups (epoch {})", kOffsetsTopic, partition, loaded.size(), epoch);
}

void GroupCoordinator::unload_partition(int32_t partition) {
  owned_.erase(partition);
  std::vector<GroupPtr> gone;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (partition_of(it->first) == partition) {
      gone.push_back(it->second);
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
  // Kafka's onGroupUnloaded: the group is Dead here, its parked requests answer NOT_COORDINATOR.
  for (const GroupPtr& group : gone) {
    for (auto& [member_id, member] : group->members) {
      answer_join(member, internal::join_error(ErrorCode::kNotCoordinator, member_id));
      answer_sync(member, internal::sync_error(ErrorCode::kNotCoordinator));
    }
    cancel_group_timers(*group);
    transition(*group, GroupState::kDead);
  }
  if (!gone.empty()) env_.log.info("{}-{}: unloaded {} groups", kOffsetsTopic, partition, gone.size());
}

}  // namespace sluice::group
