#include "core/raft/host.h"

#include <algorithm>
#include <tuple>

#include "core/base/assert.h"
#include "core/raft/host_group.h"

namespace sluice::raft {
namespace {

// Rounds in one wake-up before the driver yields to the node's other fibers (a round that keeps producing work,
// say a follower catching up 64 entries at a time, must not starve the transport that feeds it).
constexpr int kMaxRoundsPerWake = 64;

}  // namespace

std::string_view propose_outcome_name(ProposeOutcome outcome) {
  switch (outcome) {
    case ProposeOutcome::kCommitted: return "committed";
    case ProposeOutcome::kNotLeader: return "not-leader";
    case ProposeOutcome::kLost: return "lost";
    case ProposeOutcome::kUnknown: return "unknown";
    case ProposeOutcome::kAppended: return "appended";
  }
  return "?";
}

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
                         std::optional<CommitMode> commit_mode, GroupHooks hooks) {
  SLUICE_ASSERT_MSG(!groups_.contains(id), "a group is added once (remove it first)");
  SLUICE_ASSERT(membership.contains(self_));
  Options options = options_.raft;
  if (commit_mode) options.commit_mode = *commit_mode;
  options.unclean_start = !storage.clean_start();
  auto group = std::make_unique<Group>();
  group->id = id;
  group->storage = &storage;
  group->mode = options.commit_mode;
  group->hooks = std::move(hooks);
  group->raft = std::make_unique<Raft>(options, std::move(membership), storage.log(), storage.hard_state(),
                                       env_.random);
  SLUICE_ASSERT(group->raft->id() == self_);
  Group& added = *group;
  // Safe while the driver is parked anywhere, even inside a round: a round works on the groups it took from
  // dirty_ and on pointers to them, and inserting into the map moves no element.
  groups_.emplace(id, std::move(group));
  if (!started_) return;  // start() marks every group dirty
  mark_dirty(added);  // its first Ready persists the raised incarnation before anything leaves
  wake();
}

void RaftHost::remove_group(GroupId id) {
  if (!groups_.contains(id)) return;
  if (!started_ || driver_.done()) return erase_group(id);
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "remove_group waits for the driver: call it from a fiber");
  // Only the driver, between rounds, may erase a group: a round holds pointers to the groups it works on.
  if (!stopping_) {
    auto removed = std::make_shared<Waiter>(env_.scheduler);
    commands_.push_back(Command{id, Command::Kind::kRemove, removed});
    wake();
    removed->done.wait();
  }
  if (!groups_.contains(id)) return;
  // The host stopped before the driver got to it (its last step settled the command): wait for the driver to end,
  // and then nothing else touches the group.
  stopped_.wait();
  erase_group(id);
}

void RaftHost::erase_group(GroupId id) {
  auto it = groups_.find(id);
  if (it == groups_.end()) return;
  Group& group = *it->second;
  for (auto& [last, waiter] : group.pending) {
    if (waiter->finished) continue;
    Proposed unknown = waiter->result;  // the entry may still commit on the other members
    unknown.outcome = ProposeOutcome::kUnknown;
    unknown.leader = kNoNode;
    waiter->finish(unknown);
  }
  group.pending.clear();
  if (group.dirty) dirty_.erase(std::remove(dirty_.begin(), dirty_.end(), &group), dirty_.end());
  SLUICE_ASSERT(std::find(dirty_.begin(), dirty_.end(), &group) == dirty_.end());
  groups_.erase(it);
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

Proposed RaftHost::propose(GroupId group, std::string payload, Index count, Instant deadline, ProposeWait wait) {
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "propose waits: call it from a fiber");
  SLUICE_ASSERT(count >= 1);
  SLUICE_ASSERT(count <= kEntryCountMax);
  if (stopping_ || !groups_.contains(group)) return Proposed{ProposeOutcome::kNotLeader};
  auto proposal = std::make_shared<Waiter>(env_.scheduler);
  proposal->payload = std::move(payload);
  proposal->count = count;
  proposal->wait = wait;
  commands_.push_back(Command{group, Command::Kind::kPropose, proposal});
  wake();
  if (!proposal->done.wait_until(deadline) && !proposal->finished) {
    Proposed unknown = proposal->result;  // index and term, when it was appended
    unknown.outcome = ProposeOutcome::kUnknown;
    return unknown;
  }
  SLUICE_ASSERT(wait == ProposeWait::kAppended || proposal->result.outcome != ProposeOutcome::kAppended);
  return proposal->result;
}

Proposed RaftHost::wait_committed(GroupId group, Index last_index, Term term, Instant deadline) {
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "wait_committed waits: call it from a fiber");
  SLUICE_ASSERT(last_index >= 1);
  SLUICE_ASSERT(term >= 1);
  auto it = groups_.find(group);
  if (it == groups_.end()) return Proposed{ProposeOutcome::kNotLeader};
  Group& g = *it->second;
  auto waiter = std::make_shared<Waiter>(env_.scheduler);
  waiter->stop_on_leader_loss = true;
  waiter->result = Proposed{.outcome = ProposeOutcome::kUnknown, .term = term, .last_index = last_index};
  const RaftLog& log = g.storage->log();
  if (last_index <= log.last_index() && log.term_at(last_index) == term) {
    waiter->result.index = log.entry_start(last_index);
  }
  if (const std::optional<ProposeOutcome> known = fate(g, *waiter)) {
    Proposed now = waiter->result;
    now.outcome = *known;
    now.leader = g.online ? g.raft->leader() : kNoNode;
    return now;
  }
  if (stopping_) return waiter->result;  // kUnknown: nobody will settle it
  g.pending.emplace(last_index, waiter);
  // At the deadline the result is still kUnknown; the waiter stays in the pending map until the driver settles it
  // (its fate becomes known, or the host stops), which no one then reads.
  waiter->done.wait_until(deadline);
  SLUICE_ASSERT(waiter->finished || waiter->result.outcome == ProposeOutcome::kUnknown);
  return waiter->result;
}

void RaftHost::forward(GroupId group, std::string payload, Index count) {
  SLUICE_ASSERT(count >= 1);
  SLUICE_ASSERT(count <= kEntryCountMax);
  if (stopping_) return;
  Command command{group, Command::Kind::kForward, nullptr};
  command.payload = std::move(payload);
  command.count = count;
  commands_.push_back(std::move(command));
  wake();
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
    for (auto& [index, waiter] : group->pending) {
      if (waiter->finished) continue;
      Proposed unknown = waiter->result;
      unknown.outcome = ProposeOutcome::kUnknown;
      waiter->finish(unknown);
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
      case Command::Kind::kPropose:
        propose_now(usable ? group : nullptr, command.proposal);
        break;
      case Command::Kind::kCampaign:
        if (usable) group->raft->campaign();
        if (usable) mark_dirty(*group);
        break;
      case Command::Kind::kTransfer:
        if (usable) group->raft->transfer_leadership(command.target);
        if (usable) mark_dirty(*group);
        break;
      case Command::Kind::kForward:
        if (!usable) break;  // dropped, as a leader that is gone would drop it: the caller forwards again
        if (group->raft->role() == Role::kLeader) {
          // 0 while a leadership transfer is under way: dropped likewise.
          if (group->raft->propose(std::move(command.payload), command.count) != 0) mark_dirty(*group);
        } else if (group->raft->forward(std::move(command.payload), command.count) != kNoNode) {
          mark_dirty(*group);  // the kPropose leaves with this round's batch to the leader
        }
        break;
      case Command::Kind::kRemove:
        erase_group(command.group);
        SLUICE_ASSERT(!groups_.contains(command.group));
        command.proposal->finish(Proposed{ProposeOutcome::kUnknown});
        break;
    }
  }
}

void RaftHost::propose_now(Group* group, const std::shared_ptr<Waiter>& proposal) {
  SLUICE_ASSERT(!proposal->finished);
  const Index first = group != nullptr ? group->raft->propose(std::move(proposal->payload), proposal->count) : 0;
  proposal->payload.clear();
  if (first == 0) {
    proposal->finish(Proposed{ProposeOutcome::kNotLeader, 0, 0, group != nullptr ? group->raft->leader() : kNoNode});
    return;
  }
  const Index last = first + proposal->count - 1;
  const RaftLog& log = group->storage->log();
  SLUICE_ASSERT(group->raft->role() == Role::kLeader);
  SLUICE_ASSERT(log.last_index() == last);
  SLUICE_ASSERT(log.entry_start(last) == first);
  SLUICE_ASSERT(log.term_at(last) == group->raft->term());
  const Proposed appended{ProposeOutcome::kAppended, first, group->raft->term(), self_, last};
  mark_dirty(*group);
  if (proposal->wait == ProposeWait::kAppended) return proposal->finish(appended);
  proposal->result = appended;
  proposal->result.outcome = ProposeOutcome::kUnknown;
  group->pending.emplace(last, proposal);
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
    report_role(*group);
    if (ready.hard_state || ready.sync_log_through != 0) to_persist.emplace_back(group, std::move(ready));
  }
  for (auto& [peer, batch] : outbound) {
    ++stats_.batches_sent;
    stats_.messages_sent += batch.size();
    send_(peer, std::move(batch));
  }
  for (auto& [group, ready] : to_persist) persist(*group, ready);
  for (Group* group : groups) {
    if (group->online) after_round(*group);
  }
  return !dirty_.empty();
}

void RaftHost::report_role(Group& group) {
  SLUICE_ASSERT(group.online);
  const Raft& raft = *group.raft;
  if (raft.role() == Role::kLeader && group.reported_leader_term != raft.term()) {
    group.reported_leader_term = raft.term();
    if (on_leader_) on_leader_(group.id, raft.term());
  }
  const std::tuple<Role, Term, NodeId> now{raft.role(), raft.term(), raft.leader()};
  if (group.reported_role == now) return;
  group.reported_role = now;
  if (group.hooks.on_role_change) group.hooks.on_role_change(raft.role(), raft.term(), raft.leader());
}

void RaftHost::after_round(Group& group) {
  SLUICE_ASSERT(group.online);
  const Index commit = group.raft->commit_index();
  // A commit index never goes back, except a `replicated` group's that lost committed entries (Raft::
  // lose_committed_entries): a partition's high watermark follows it down; an applied state machine cannot.
  SLUICE_ASSERT(commit >= group.reported_commit ||
                (group.mode == CommitMode::kReplicated && !group.hooks.apply_entries));
  group.reported_commit = std::min(group.reported_commit, commit);
  if (group.hooks.apply_entries) {
    apply_committed(group);
    if (!group.online) return;  // reading the entries back failed
  }
  if (commit > group.reported_commit) {
    group.reported_commit = commit;
    if (group.hooks.on_commit) group.hooks.on_commit(commit);
  }
  resolve_pending(group);
}

}  // namespace sluice::raft
