#include "core/raft/host.h"

#include <algorithm>

#include "core/base/assert.h"

namespace sluice::raft {
namespace {

// Rounds in one wake-up before the driver yields to the node's other fibers (a round that keeps producing work,
// say a follower catching up 64 entries at a time, must not starve the transport that feeds it).
constexpr int kMaxRoundsPerWake = 64;
// Payload bytes read back per step of applying committed entries (at least one entry is read).
constexpr uint64_t kApplyBytesMax = uint64_t{1} << 20;

}  // namespace

std::string_view propose_outcome_name(ProposeOutcome outcome) {
  switch (outcome) {
    case ProposeOutcome::kCommitted:
      return "committed";
    case ProposeOutcome::kNotLeader:
      return "not-leader";
    case ProposeOutcome::kLost:
      return "lost";
    case ProposeOutcome::kUnknown:
      return "unknown";
  }
  return "?";
}

struct RaftHost::Proposal {
  explicit Proposal(Scheduler& scheduler, std::string payload) : payload(std::move(payload)), done(scheduler) {}
  void finish(Proposed outcome) {
    SLUICE_ASSERT(!finished);
    result = outcome;
    finished = true;
    done.set();
  }
  std::string payload;
  Event done;
  Proposed result;
  bool finished = false;
};

struct RaftHost::Group {
  GroupId id = 0;
  GroupStorage* storage = nullptr;
  CommitMode mode = CommitMode::kPersisted;
  std::unique_ptr<Raft> raft;
  Index applied = 0;
  Term reported_leader_term = 0;  // the last term on_leader was told of
  bool dirty = false;
  bool online = true;
  bool unsynced = false;  // `replicated`: appended entries wait for the periodic sync
  std::multimap<Index, std::shared_ptr<Proposal>> pending;  // by the index each was appended at
};

RaftHost::RaftHost(Env& env, NodeId self, HostOptions options, Send send, Apply apply, LeaderChange on_leader)
    : env_(env),
      self_(self),
      options_(std::move(options)),
      send_(std::move(send)),
      apply_(std::move(apply)),
      on_leader_(std::move(on_leader)),
      wake_(env.scheduler),
      stopped_(env.scheduler) {
  SLUICE_ASSERT(self_ != kNoNode);
  SLUICE_ASSERT(send_ != nullptr);
  SLUICE_ASSERT(options_.tick > Duration(0));
  SLUICE_ASSERT(options_.replicated_sync_interval > Duration(0));
  options_.raft.id = self_;
}

RaftHost::~RaftHost() {
  stop();
  if (!started_ || !env_.scheduler.in_fiber() || driver_.done()) return;
  // A node killed during this join (a crash in a graceful stop) unwinds the driver first (fibers die newest
  // first); FiberKilled must not leave a destructor.
  try {
    env_.scheduler.join(driver_);
  } catch (const FiberKilled&) {
    SLUICE_ASSERT(driver_.done());
  }
}

void RaftHost::add_group(GroupId id, Membership membership, GroupStorage& storage,
                         std::optional<CommitMode> commit_mode) {
  SLUICE_ASSERT_MSG(!started_, "groups are added before the host starts");
  SLUICE_ASSERT_MSG(!groups_.contains(id), "a group is added once");
  SLUICE_ASSERT(membership.contains(self_));
  Options options = options_.raft;
  if (commit_mode) options.commit_mode = *commit_mode;
  auto group = std::make_unique<Group>();
  group->id = id;
  group->storage = &storage;
  group->mode = options.commit_mode;
  group->raft = std::make_unique<Raft>(options, std::move(membership), storage.log(), storage.hard_state(),
                                       env_.random);
  SLUICE_ASSERT(group->raft->id() == self_);
  groups_.emplace(id, std::move(group));
}

void RaftHost::start() {
  SLUICE_ASSERT_MSG(!started_, "a host starts once");
  started_ = true;
  // Every group's first Ready persists its raised incarnation before anything leaves.
  for (auto& [id, group] : groups_) mark_dirty(*group);
  driver_ = env_.scheduler.spawn("raft-host", [this] { drive(); });
}

void RaftHost::stop() {
  if (stopping_) return;
  stopping_ = true;
  wake();
}

void RaftHost::wake() { wake_.set(); }

void RaftHost::mark_dirty(Group& group) {
  if (group.dirty || !group.online) return;
  group.dirty = true;
  dirty_.push_back(&group);
}

void RaftHost::receive(NodeId from, std::vector<Envelope>& batch) {
  if (stopping_ || batch.empty()) return;
  inbox_.push_back(Inbound{from, std::move(batch)});
  wake();
}

Proposed RaftHost::propose(GroupId group, std::string payload, Instant deadline) {
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "propose waits: call it from a fiber");
  if (stopping_ || !groups_.contains(group)) return Proposed{ProposeOutcome::kNotLeader};
  auto proposal = std::make_shared<Proposal>(env_.scheduler, std::move(payload));
  commands_.push_back(Command{group, Command::Kind::kPropose, proposal});
  wake();
  if (!proposal->done.wait_until(deadline) && !proposal->finished) {
    Proposed unknown = proposal->result;  // index and term, when it was appended
    unknown.outcome = ProposeOutcome::kUnknown;
    return unknown;
  }
  return proposal->result;
}

void RaftHost::campaign(GroupId group) {
  commands_.push_back(Command{group, Command::Kind::kCampaign, nullptr});
  wake();
}

void RaftHost::transfer_leadership(GroupId group, NodeId target) {
  commands_.push_back(Command{group, Command::Kind::kTransfer, nullptr, target});
  wake();
}

std::optional<GroupStatus> RaftHost::status(GroupId group) const {
  auto it = groups_.find(group);
  if (it == groups_.end()) return std::nullopt;
  return it->second->raft->status();
}

const Raft* RaftHost::raft(GroupId group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : it->second->raft.get();
}

bool RaftHost::online(GroupId group) const {
  auto it = groups_.find(group);
  return it != groups_.end() && it->second->online;
}

std::vector<GroupId> RaftHost::groups() const {
  std::vector<GroupId> ids;
  ids.reserve(groups_.size());
  for (const auto& [id, group] : groups_) ids.push_back(id);
  return ids;
}

void RaftHost::drive() {
  const Instant start = env_.clock.now();
  next_tick_ = start + options_.tick;
  next_replicated_sync_ = start + options_.replicated_sync_interval;
  while (!stopping_) {
    step_inbound();
    run_commands();
    run_rounds();
    if (stopping_) break;
    wake_.wait_until(std::min(next_tick_, next_replicated_sync_));
    wake_.reset();
    const Instant now = env_.clock.now();
    // A late driver (a long sync) ticks once, not once per missed tick: raft's timeouts count ticks it lived.
    if (now >= next_tick_) {
      tick_all();
      next_tick_ = now + options_.tick;
    }
    if (now >= next_replicated_sync_) {
      sync_replicated();
      next_replicated_sync_ = now + options_.replicated_sync_interval;
    }
  }
  for (auto& [id, group] : groups_) {
    for (auto& [index, proposal] : group->pending) {
      if (!proposal->finished) proposal->finish(Proposed{ProposeOutcome::kUnknown, index, proposal->result.term});
    }
    group->pending.clear();
  }
  for (Command& command : commands_) {
    if (command.proposal && !command.proposal->finished) command.proposal->finish(Proposed{ProposeOutcome::kUnknown});
  }
  commands_.clear();
  stopped_.set();
}

void RaftHost::tick_all() {
  ++stats_.ticks;
  for (auto& [id, group] : groups_) {
    if (!group->online) continue;
    group->raft->tick();
    mark_dirty(*group);
  }
}

void RaftHost::sync_replicated() {
  for (auto& [id, group] : groups_) {
    if (!group->online || !group->unsynced) continue;
    group->unsynced = false;
    sync_log(*group);
  }
}

void RaftHost::step_inbound() {
  std::vector<Inbound> inbox;
  inbox.swap(inbox_);
  for (Inbound& inbound : inbox) {
    for (Envelope& envelope : inbound.batch) {
      ++stats_.messages_received;
      auto it = groups_.find(envelope.group);
      if (it == groups_.end()) {
        ++stats_.messages_unknown_group;
        continue;
      }
      Group& group = *it->second;
      // The transport names the connection's peer; a message claiming another sender is not raft's to judge.
      if (envelope.message.to != self_ || envelope.message.from != inbound.from || !group.online) continue;
      group.raft->step(envelope.message);
      mark_dirty(group);
    }
  }
}

void RaftHost::run_commands() {
  std::vector<Command> commands;
  commands.swap(commands_);
  for (Command& command : commands) {
    auto it = groups_.find(command.group);
    Group* group = it == groups_.end() ? nullptr : it->second.get();
    const bool usable = group != nullptr && group->online;
    switch (command.kind) {
      case Command::Kind::kPropose: {
        Proposal& proposal = *command.proposal;
        const Index index = usable ? group->raft->propose(proposal.payload) : 0;
        if (index == 0) {
          proposal.finish(Proposed{ProposeOutcome::kNotLeader, 0, 0, usable ? group->raft->leader() : kNoNode});
          break;
        }
        SLUICE_ASSERT(group->raft->role() == Role::kLeader);
        SLUICE_ASSERT(group->storage->log().term_at(index) == group->raft->term());
        proposal.result = Proposed{ProposeOutcome::kUnknown, index, group->raft->term()};
        proposal.payload.clear();
        group->pending.emplace(index, command.proposal);
        mark_dirty(*group);
        break;
      }
      case Command::Kind::kCampaign:
        if (usable) group->raft->campaign();
        if (usable) mark_dirty(*group);
        break;
      case Command::Kind::kTransfer:
        if (usable) group->raft->transfer_leadership(command.target);
        if (usable) mark_dirty(*group);
        break;
    }
  }
}

void RaftHost::run_rounds() {
  for (int i = 0; i < kMaxRoundsPerWake && !stopping_; ++i) {
    if (!round()) return;
    step_inbound();
    run_commands();
  }
  if (!dirty_.empty()) wake();  // more next time, after the node's other fibers ran
}

bool RaftHost::round() {
  if (dirty_.empty()) return false;
  ++stats_.rounds;
  std::vector<Group*> groups;
  groups.swap(dirty_);
  std::map<NodeId, std::vector<Envelope>> outbound;
  std::vector<std::pair<Group*, Ready>> to_persist;
  for (Group* group : groups) {
    SLUICE_ASSERT(group->dirty);
    group->dirty = false;
    if (!group->online) continue;
    Ready ready = group->raft->take_ready();
    if (Status failed = group->storage->status(); !failed.ok()) {
      take_offline(*group, failed);  // nothing of this Ready leaves: it may rest on writes that never happened
      continue;
    }
    for (Message& message : ready.messages) {
      SLUICE_ASSERT(message.from == self_);
      SLUICE_ASSERT(message.to != self_ && message.to != kNoNode);
      outbound[message.to].push_back(Envelope{group->id, std::move(message)});
    }
    ready.messages.clear();
    if (group->raft->role() == Role::kLeader && group->reported_leader_term != group->raft->term()) {
      group->reported_leader_term = group->raft->term();
      if (on_leader_) on_leader_(group->id, group->raft->term());
    }
    apply_committed(*group);
    if (ready.hard_state || ready.sync_log_through != 0) to_persist.emplace_back(group, std::move(ready));
  }
  for (auto& [peer, batch] : outbound) {
    ++stats_.batches_sent;
    stats_.messages_sent += batch.size();
    send_(peer, std::move(batch));
  }
  for (auto& [group, ready] : to_persist) persist(*group, ready);
  return !dirty_.empty();
}

void RaftHost::persist(Group& group, const Ready& ready) {
  if (!group.online) return;
  if (ready.hard_state) {
    SLUICE_ASSERT(ready.hard_state->term >= group.storage->hard_state().term);
    ++stats_.hard_state_stores;
    const Status stored = group.storage->store_hard_state(*ready.hard_state);
    if (!stored.ok()) return take_offline(group, stored);
    SLUICE_ASSERT(group.storage->hard_state() == *ready.hard_state);
    group.raft->on_hard_state_persisted(ready.hard_state_version);
    mark_dirty(group);
  }
  if (ready.sync_log_through == 0) return;
  if (group.mode == CommitMode::kReplicated) {
    group.unsynced = true;  // counted once appended; synced by the periodic flush
    return;
  }
  sync_log(group);
}

void RaftHost::sync_log(Group& group) {
  ++stats_.log_syncs;
  const Status synced = group.storage->sync_log();
  if (!synced.ok()) return take_offline(group, synced);
  SLUICE_ASSERT(group.storage->log().durable_index() == group.storage->log().last_index());
  group.raft->on_log_synced();
  mark_dirty(group);
}

void RaftHost::apply_committed(Group& group) {
  const Index commit = group.raft->commit_index();
  RaftLog& log = group.storage->log();
  SLUICE_ASSERT(commit <= log.last_index());
  while (group.applied < commit) {
    const size_t want = static_cast<size_t>(std::min<Index>(commit - group.applied, 256));
    std::vector<Entry> entries = log.read(group.applied + 1, want, kApplyBytesMax);
    SLUICE_ASSERT(!entries.empty() && entries.size() <= want);
    for (const Entry& entry : entries) {
      const Index index = ++group.applied;
      ++stats_.entries_applied;
      if (apply_) apply_(group.id, index, entry);
      resolve(group, index, entry);
    }
  }
}

void RaftHost::resolve(Group& group, Index index, const Entry& entry) {
  auto [first, last] = group.pending.equal_range(index);
  for (auto it = first; it != last; ++it) {
    Proposal& proposal = *it->second;
    if (proposal.finished) continue;
    const bool ours = entry.term == proposal.result.term;
    proposal.finish(Proposed{ours ? ProposeOutcome::kCommitted : ProposeOutcome::kLost, index, proposal.result.term,
                             group.raft->leader()});
  }
  group.pending.erase(first, last);
  // Anything proposed below the applied index resolved at its own index; nothing is left behind.
  SLUICE_ASSERT(group.pending.empty() || group.pending.begin()->first > index);
}

void RaftHost::take_offline(Group& group, const Status& why) {
  SLUICE_ASSERT(group.online);
  group.online = false;
  ++stats_.groups_offline;
  env_.log.error("raft group {}: storage failed, offline until the node restarts: {}", group.id, why.message());
}

}  // namespace sluice::raft
