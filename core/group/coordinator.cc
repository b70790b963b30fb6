// GroupCoordinator: construction, the timers, JoinGroup and the rebalance (membership.cc has SyncGroup, Heartbeat
// and LeaveGroup).
#include "core/group/coordinator.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/assert.h"
#include "core/env/random.h"
#include "core/group/coordinator_internal.h"

namespace sluice::group {
namespace {

using internal::join_error;
using internal::sync_error;
using internal::Unpark;

// Kafka's NewMemberJoinTimeoutMs: a member that joined during a rebalance but whose JoinGroup is not answered
// within this is dropped (it cannot heartbeat before it has its id).
constexpr int64_t kNewMemberJoinTimeoutMs = 5 * 60 * 1000;

Duration ms(int64_t n) { return std::chrono::milliseconds(n); }

// java.util.UUID.randomUUID().toString(): 8-4-4-4-12 lowercase hex, version 4.
std::string random_uuid(Random& random) {
  uint64_t hi = random.next_u64();
  uint64_t lo = random.next_u64();
  hi = (hi & ~uint64_t{0xf000}) | 0x4000;
  lo = (lo & ~(uint64_t{0xc} << 60)) | (uint64_t{0x8} << 60);
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

}  // namespace

int32_t java_string_hash(std::string_view utf8) {
  // Java hashes UTF-16 code units; decode UTF-8 (invalid bytes count as U+FFFD, as Java's decoder replaces them).
  uint32_t hash = 0;
  auto add = [&hash](uint32_t unit) { hash = hash * 31 + unit; };
  for (size_t i = 0; i < utf8.size();) {
    const auto byte = static_cast<uint8_t>(utf8[i]);
    const size_t length = byte < 0x80            ? 1
                          : (byte >> 5) == 0x6   ? 2
                          : (byte >> 4) == 0xe   ? 3
                          : (byte >> 3) == 0x1e  ? 4
                                                 : 0;
    bool valid = length != 0 && i + length <= utf8.size();
    uint32_t code = length == 1 ? byte : length == 2 ? (byte & 0x1f) : length == 3 ? (byte & 0x0f) : (byte & 0x07);
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<uint8_t>(utf8[i + k]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    if (!valid) {
      add(0xfffd);
      ++i;
      continue;
    }
    if (code >= 0x10000) {
      code -= 0x10000;
      add(0xd800 + (code >> 10));
      add(0xdc00 + (code & 0x3ff));
    } else {
      add(code);
    }
    i += length;
  }
  return static_cast<int32_t>(hash);
}

int32_t partition_for_group(std::string_view group_id, int32_t partitions) {
  SLUICE_ASSERT(partitions > 0);
  const int32_t hash = java_string_hash(group_id);
  const int32_t magnitude = hash == INT32_MIN ? 0 : (hash < 0 ? -hash : hash);  // Kafka's Utils.abs
  return magnitude % partitions;
}

GroupCoordinator::GroupCoordinator(Env env, storage::LogManager& logs, TopicCatalog& topics, CoordinatorConfig config)
    : env_(env),
      logs_(logs),
      topics_(topics),
      config_(config),
      loaded_(env.scheduler),
      topic_creation_(env.scheduler),
      timers_changed_(env.scheduler),
      background_done_(env.scheduler),
      stop_event_(env.scheduler) {}

GroupCoordinator::~GroupCoordinator() = default;

void GroupCoordinator::start() {
  if (replicated_ != nullptr) {
    // Groups load per offsets partition, as this node comes to lead it (ownership.cc).
    loading_ = false;
    loaded_.set();
    ownership_fiber_ = env_.scheduler.spawn("group.ownership", [this] { ownership_loop(); });
  } else {
    loader_fiber_ = env_.scheduler.spawn("group.load", [this] { load_all(); });
  }
  timer_fiber_ = env_.scheduler.spawn("group.timers", [this] { timer_loop(); });
  expiry_fiber_ = env_.scheduler.spawn("group.expiry", [this] { expiry_loop(); });
}

void GroupCoordinator::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& [id, group] : groups_) {
    for (auto& [member_id, member] : group->members) {
      answer_join(member, join_error(ErrorCode::kNotCoordinator, member_id));
      answer_sync(member, sync_error(ErrorCode::kNotCoordinator));
    }
  }
  stop_event_.set();
  timers_changed_.notify_all();
}

void GroupCoordinator::stop() {
  shutdown();
  for (FiberRef* fiber : {&loader_fiber_, &timer_fiber_, &expiry_fiber_, &ownership_fiber_}) {
    if (*fiber) env_.scheduler.join(*fiber);
  }
  while (background_writes_ > 0) background_done_.wait();
}

void GroupCoordinator::wait_loaded() { loaded_.wait(); }

std::optional<ErrorCode> GroupCoordinator::check_status(const std::string& group_id, bool empty_id_allowed) const {
  if (group_id.empty() && !empty_id_allowed) return ErrorCode::kInvalidGroupId;
  if (stopping_) return ErrorCode::kCoordinatorNotAvailable;
  if (replicated_ != nullptr) return check_owned(group_id);
  if (loading_) return ErrorCode::kCoordinatorLoadInProgress;
  return std::nullopt;
}

GroupCoordinator::GroupPtr GroupCoordinator::lookup(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second;
}

GroupCoordinator::GroupPtr GroupCoordinator::get_or_create(const std::string& group_id) {
  GroupPtr& slot = groups_[group_id];
  if (slot == nullptr) {
    slot = std::make_shared<Group>(group_id, env_.scheduler);
    slot->state_timestamp_ms = wall_ms();
  }
  return slot;
}

const Group* GroupCoordinator::find_group(const std::string& group_id) const { return lookup(group_id).get(); }

void GroupCoordinator::transition(Group& group, GroupState to) {
  env_.log.debug("group {}: {} -> {} (generation {})", group.id, state_name(group.state), state_name(to),
                 group.generation);
  group.state = to;
  group.state_timestamp_ms = wall_ms();
}

int64_t GroupCoordinator::wall_ms() const { return to_unix_ms(env_.clock.wall_now()); }

// ---- Timers ----

TimerKey GroupCoordinator::add_timer(Duration delay, std::function<void()> callback) {
  const TimerKey key{env_.clock.now() + delay, next_timer_seq_++};
  timers_.emplace(key, std::move(callback));
  if (timers_.begin()->first == key) timers_changed_.notify_all();
  return key;
}

void GroupCoordinator::cancel_timer(std::optional<TimerKey>& key) {
  if (!key.has_value()) return;
  timers_.erase(*key);
  key.reset();
}

void GroupCoordinator::timer_loop() {
  while (!stopping_) {
    if (timers_.empty()) {
      timers_changed_.wait();
      continue;
    }
    auto first = timers_.begin();
    if (first->first.first > env_.clock.now()) {
      timers_changed_.wait_until(first->first.first);
      continue;
    }
    std::function<void()> callback = std::move(first->second);
    timers_.erase(first);
    callback();
  }
}

void GroupCoordinator::schedule_session(const GroupPtr& group, Member& member, int64_t timeout_ms) {
  cancel_timer(member.session_timer);
  member.heartbeat_satisfied = false;
  const std::string member_id = member.id;
  auto key = std::make_shared<TimerKey>();
  *key = add_timer(ms(timeout_ms), [this, group, member_id, key] {
    auto it = group->members.find(member_id);
    if (it == group->members.end() || it->second.session_timer != *key) return;
    it->second.session_timer.reset();
    on_session_expired(group, member_id);
  });
  member.session_timer = *key;
}

void GroupCoordinator::cancel_group_timers(Group& group) {
  cancel_timer(group.join_timer);
  cancel_timer(group.sync_timer);
  for (auto& [id, member] : group.members) cancel_timer(member.session_timer);
  for (auto& [id, timer] : group.pending_members) cancel_timer(timer);
}

// ---- Answers ----

void GroupCoordinator::answer_join(Member& member, JoinResult result) {
  if (member.join == nullptr) return;
  member.join->result = std::move(result);
  member.join->done.notify_all();
  member.join = nullptr;
}

void GroupCoordinator::answer_sync(Member& member, SyncResult result) {
  if (member.sync == nullptr) return;
  member.sync->result = std::move(result);
  member.sync->done.notify_all();
  member.sync = nullptr;
}

JoinResult GroupCoordinator::current_generation_answer(const Group& group, const std::string& member_id,
                                                       bool with_members) const {
  JoinResult result;
  result.member_id = member_id;
  result.generation_id = group.generation;
  result.protocol_type = group.protocol_type;
  result.protocol_name = group.protocol;
  result.leader_id = group.leader.value_or("");
  if (with_members && group.protocol.has_value()) {
    for (const auto& [id, member] : group.members) {
      const Bytes* metadata = member.metadata_for(*group.protocol);
      result.members.push_back(JoinMember{id, member.instance_id, metadata != nullptr ? *metadata : Bytes()});
    }
  }
  return result;
}

std::optional<ErrorCode> GroupCoordinator::validate_member(const Group& group, const std::string& member_id,
                                                           const std::optional<std::string>& instance_id) const {
  if (instance_id.has_value()) {
    const std::optional<std::string> holder = group.static_member(*instance_id);
    if (!holder.has_value()) return ErrorCode::kUnknownMemberId;
    if (*holder != member_id) return ErrorCode::kFencedInstanceId;
  }
  if (!group.has(member_id)) return ErrorCode::kUnknownMemberId;
  return std::nullopt;
}

// ---- JoinGroup ----

JoinResult GroupCoordinator::join(const JoinRequest& request) {
  if (std::optional<ErrorCode> error = check_status(request.group_id, false)) {
    return join_error(*error, request.member_id);
  }
  if (request.session_timeout_ms < config_.min_session_timeout_ms ||
      request.session_timeout_ms > config_.max_session_timeout_ms) {
    return join_error(ErrorCode::kInvalidSessionTimeout, request.member_id);
  }
  // A new member creates the group; a known member id of a group that does not exist is unknown.
  const GroupPtr group = request.member_id.empty() ? get_or_create(request.group_id) : lookup(request.group_id);
  if (group == nullptr) return join_error(ErrorCode::kUnknownMemberId, request.member_id);
  if (!accepts_joining_member(*group, request)) {
    // Kafka drops a known or pending member it turns away (one that had not rejoined yet while the group refilled).
    if (group->has(request.member_id)) remove_member(group, request.member_id);
    if (group->pending_members.count(request.member_id) != 0) remove_pending_member(group, request.member_id);
    return join_error(ErrorCode::kGroupMaxSizeReached, "");
  }
  Parked<JoinResult> parked(env_.scheduler);
  Unpark<JoinResult> unpark{group, parked, &Member::join};
  if (request.member_id.empty()) {
    join_new_member(group, request, parked);
  } else {
    join_known_member(group, request, parked);
  }
  if (group->is(GroupState::kPreparingRebalance)) maybe_complete_join(group);
  while (!parked.result.has_value()) parked.done.wait();
  return *parked.result;
}

void GroupCoordinator::join_new_member(const GroupPtr& group, const JoinRequest& request, Parked<JoinResult>& parked) {
  if (group->is(GroupState::kDead)) {
    parked.result = join_error(ErrorCode::kCoordinatorNotAvailable, "");
    return;
  }
  if (!group->supports(request.protocol_type, request.protocols)) {
    parked.result = join_error(ErrorCode::kInconsistentGroupProtocol, "");
    return;
  }
  const std::string member_id =
      request.group_instance_id.value_or(request.client_id) + "-" + random_uuid(env_.random);
  if (request.group_instance_id.has_value()) {
    // Static members never get MEMBER_ID_REQUIRED: the instance id already names them.
    join_static_member(group, request, member_id, parked);
    return;
  }
  if (!request.require_known_member_id) {
    add_member_and_rebalance(group, request, member_id, parked);
    return;
  }
  // v4+: the id is handed out and held for one session timeout; the member joins again with it.
  auto key = std::make_shared<TimerKey>();
  *key = add_timer(ms(request.session_timeout_ms), [this, group, member_id, key] {
    auto it = group->pending_members.find(member_id);
    if (it == group->pending_members.end() || it->second != *key) return;
    it->second.reset();
    remove_pending_member(group, member_id);
  });
  group->pending_members[member_id] = *key;
  parked.result = join_error(ErrorCode::kMemberIdRequired, member_id);
}

void GroupCoordinator::join_known_member(const GroupPtr& group, const JoinRequest& request,
                                         Parked<JoinResult>& parked) {
  const std::string& id = request.member_id;
  if (group->is(GroupState::kDead)) {
    parked.result = join_error(ErrorCode::kCoordinatorNotAvailable, id);
    return;
  }
  if (!group->supports(request.protocol_type, request.protocols)) {
    parked.result = join_error(ErrorCode::kInconsistentGroupProtocol, id);
    return;
  }
  if (auto pending = group->pending_members.find(id); pending != group->pending_members.end()) {
    cancel_timer(pending->second);
    group->pending_members.erase(pending);
    add_member_and_rebalance(group, request, id, parked);
    return;
  }
  if (std::optional<ErrorCode> error = validate_member(*group, id, request.group_instance_id)) {
    parked.result = join_error(*error, id);
    return;
  }
  Member& member = group->members.at(id);
  switch (group->state) {
    case GroupState::kPreparingRebalance:
      update_member_and_rebalance(group, member, request, parked);
      return;
    case GroupState::kCompletingRebalance:
      // The same metadata again (a lost JoinGroup response, say): this generation's answer once more.
      if (member.matches(request.protocols)) {
        parked.result = current_generation_answer(*group, id, group->leader == id);
      } else {
        update_member_and_rebalance(group, member, request, parked);
      }
      return;
    case GroupState::kStable:
      // The leader rejoining forces a rebalance (its view of the topics may have changed); so does new metadata.
      if (group->leader == id || !member.matches(request.protocols)) {
        update_member_and_rebalance(group, member, request, parked);
      } else {
        parked.result = current_generation_answer(*group, id, false);
      }
      return;
    case GroupState::kEmpty:
    case GroupState::kDead:
      parked.result = join_error(ErrorCode::kUnknownMemberId, id);
      return;
  }
}

void GroupCoordinator::add_member_and_rebalance(const GroupPtr& group, const JoinRequest& request,
                                                const std::string& member_id, Parked<JoinResult>& parked) {
  Member member;
  member.id = member_id;
  member.instance_id = request.group_instance_id;
  member.client_id = request.client_id;
  member.client_host = request.client_host;
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = request.rebalance_timeout_ms;
  member.protocol_type = request.protocol_type;
  member.protocols = request.protocols;
  member.is_new = true;
  member.join = &parked;
  if (group->is(GroupState::kPreparingRebalance) && group->generation == 0) group->new_member_added = true;
  if (group->members.empty()) group->protocol_type = request.protocol_type;
  if (!group->leader.has_value()) group->leader = member_id;
  Member& added = group->members.emplace(member_id, std::move(member)).first->second;
  schedule_session(group, added, kNewMemberJoinTimeoutMs);
  maybe_prepare_rebalance(group);
}

void GroupCoordinator::update_member_and_rebalance(const GroupPtr& group, Member& member, const JoinRequest& request,
                                                   Parked<JoinResult>& parked) {
  // A second JoinGroup from the same member replaces the first, which must not stay parked forever.
  answer_join(member, join_error(ErrorCode::kRebalanceInProgress, member.id));
  member.protocols = request.protocols;
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = request.rebalance_timeout_ms;
  member.join = &parked;
  maybe_prepare_rebalance(group);
}

// ---- The rebalance ----

void GroupCoordinator::maybe_prepare_rebalance(const GroupPtr& group) {
  if (group->can_rebalance()) prepare_rebalance(group);
}

void GroupCoordinator::prepare_rebalance(const GroupPtr& group) {
  if (group->is(GroupState::kCompletingRebalance)) {
    for (auto& [id, member] : group->members) member.assignment.clear();
    propagate_assignment(*group, ErrorCode::kRebalanceInProgress);
  }
  cancel_timer(group->sync_timer);
  group->pending_sync.clear();
  cancel_timer(group->join_timer);
  const bool initial = group->is(GroupState::kEmpty);
  transition(*group, GroupState::kPreparingRebalance);
  if (initial) {
    // The first rebalance of an empty group waits for more members, extending while new ones keep arriving,
    // within the rebalance timeout.
    const int32_t delay = config_.initial_rebalance_delay_ms;
    const int32_t remaining = std::max(group->rebalance_timeout_ms() - delay, 0);
    group->initial_delay = true;
    auto key = std::make_shared<TimerKey>();
    *key = add_timer(ms(delay), [this, group, key, remaining] {
      if (group->join_timer != *key) return;
      group->join_timer.reset();
      on_join_deadline(group, remaining);
    });
    group->join_timer = *key;
  } else {
    group->initial_delay = false;
    arm_rebalance_deadline(group);
  }
  maybe_complete_join(group);
}

void GroupCoordinator::arm_rebalance_deadline(const GroupPtr& group) {
  auto key = std::make_shared<TimerKey>();
  *key = add_timer(ms(group->rebalance_timeout_ms()), [this, group, key] {
    if (group->join_timer != *key) return;
    group->join_timer.reset();
    complete_join(group);
  });
  group->join_timer = *key;
}

void GroupCoordinator::on_join_deadline(const GroupPtr& group, int32_t remaining_ms) {
  if (!group->new_member_added || remaining_ms == 0) {
    group->initial_delay = false;
    complete_join(group);
    return;
  }
  group->new_member_added = false;
  const int32_t delay = std::min(config_.initial_rebalance_delay_ms, remaining_ms);
  const int32_t remaining = std::max(remaining_ms - delay, 0);
  auto key = std::make_shared<TimerKey>();
  *key = add_timer(ms(delay), [this, group, key, remaining] {
    if (group->join_timer != *key) return;
    group->join_timer.reset();
    on_join_deadline(group, remaining);
  });
  group->join_timer = *key;
}

void GroupCoordinator::maybe_complete_join(const GroupPtr& group) {
  if (!group->is(GroupState::kPreparingRebalance) || group->initial_delay || !group->all_joined()) return;
  cancel_timer(group->join_timer);
  complete_join(group);
}

void GroupCoordinator::complete_join(const GroupPtr& group) {
  if (!group->is(GroupState::kPreparingRebalance)) return;
  cancel_timer(group->join_timer);
  group->initial_delay = false;
  // Dynamic members that did not rejoin within the rebalance timeout leave the group; static members stay until
  // their session expires (KIP-345: a restarting instance keeps its place).
  std::vector<std::string> gone;
  for (const auto& [id, member] : group->members) {
    if (member.join == nullptr && !member.instance_id.has_value()) gone.push_back(id);
  }
  for (const std::string& id : gone) erase_member(*group, id);
  if (!elect_joined_leader(*group)) {
    // Only absent static members are left: wait another rebalance timeout for one to rejoin or expire.
    arm_rebalance_deadline(group);
    return;
  }
  init_next_generation(*group);
  if (group->is(GroupState::kEmpty)) {
    store_group_in_background(group);
    return;
  }
  env_.log.info("group {}: generation {} with {} members, protocol {}", group->id, group->generation,
                group->members.size(), group->protocol.value_or(""));
  for (auto& [id, member] : group->members) {
    answer_join(member, current_generation_answer(*group, id, group->leader == id));
    schedule_session(group, member, member.session_timeout_ms);
    member.is_new = false;
    group->pending_sync.insert(id);
  }
  const int32_t generation = group->generation;
  auto key = std::make_shared<TimerKey>();
  *key = add_timer(ms(group->rebalance_timeout_ms()), [this, group, key, generation] {
    if (group->sync_timer != *key) return;
    group->sync_timer.reset();
    on_sync_expired(group, generation);
  });
  group->sync_timer = *key;
}

bool GroupCoordinator::elect_joined_leader(Group& group) const {
  if (group.members.empty()) return true;
  auto current = group.leader.has_value() ? group.members.find(*group.leader) : group.members.end();
  if (current != group.members.end() && current->second.join != nullptr) return true;
  for (const auto& [id, member] : group.members) {
    if (member.join != nullptr) {
      group.leader = id;
      return true;
    }
  }
  return false;
}

void GroupCoordinator::init_next_generation(Group& group) {
  ++group.generation;
  if (group.members.empty()) {
    group.protocol.reset();
    transition(group, GroupState::kEmpty);
    return;
  }
  group.protocol = group.select_protocol();
  transition(group, GroupState::kCompletingRebalance);
}

void GroupCoordinator::erase_member(Group& group, const std::string& member_id) {
  auto it = group.members.find(member_id);
  if (it == group.members.end()) return;
  answer_join(it->second, join_error(ErrorCode::kUnknownMemberId, ""));
  answer_sync(it->second, sync_error(ErrorCode::kUnknownMemberId));
  cancel_timer(it->second.session_timer);
  group.members.erase(it);
  group.pending_sync.erase(member_id);
  if (group.leader == member_id) {
    group.leader.reset();
    if (!group.members.empty()) group.leader = group.members.begin()->first;
  }
}

void GroupCoordinator::remove_member(const GroupPtr& group, const std::string& member_id) {
  erase_member(*group, member_id);
  switch (group->state) {
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      maybe_prepare_rebalance(group);
      break;
    case GroupState::kPreparingRebalance:
      maybe_complete_join(group);
      break;
    case GroupState::kEmpty:
    case GroupState::kDead:
      break;
  }
}

void GroupCoordinator::remove_pending_member(const GroupPtr& group, const std::string& member_id) {
  auto it = group->pending_members.find(member_id);
  if (it != group->pending_members.end()) {
    cancel_timer(it->second);
    group->pending_members.erase(it);
  }
  maybe_complete_join(group);
}

void GroupCoordinator::on_session_expired(const GroupPtr& group, const std::string& member_id) {
  if (group->is(GroupState::kDead)) return;
  const Member& member = group->members.at(member_id);
  // Members parked in a JoinGroup or SyncGroup are alive: the rebalance and sync deadlines bound them instead.
  if (!member.is_new && (member.join != nullptr || member.sync != nullptr)) return;
  env_.log.info("group {}: member {} expired after its session timeout of {} ms", group->id, member_id,
                member.session_timeout_ms);
  remove_member(group, member_id);
}

void GroupCoordinator::on_sync_expired(const GroupPtr& group, int32_t generation) {
  if (generation != group->generation || group->pending_sync.empty()) return;
  if (!group->is(GroupState::kCompletingRebalance) && !group->is(GroupState::kStable)) return;
  const std::set<std::string> missing = group->pending_sync;
  for (const std::string& id : missing) erase_member(*group, id);
  env_.log.info("group {}: {} members sent no SyncGroup in time", group->id, missing.size());
  prepare_rebalance(group);
}

}  // namespace sluice::group
