#include "sim/world/sim_world.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>

#include "core/base/assert.h"
#include "core/env/scheduler.h"

namespace sluice {
namespace {

// Stream numbers for Random::fork; fixed forever, or old seeds stop replaying.
constexpr uint64_t kScheduleStream = 1;
constexpr uint64_t kFaultStream = 2;
constexpr uint64_t kNetworkStream = 3;
constexpr uint64_t kNodeStreamBase = 1000;
// Cancelled heap entries tolerated beyond the live ones. Few: a benchmark run has some 26 live events, and with 512
// its heap held ten dead entries (cancelled far-future timers) for each live one, which every pop sifted through.
constexpr size_t kCompactAbove = 32;

}  // namespace

SimWorld::SimWorld(uint64_t seed)
    : seed_(seed),
      schedule_rng_(Random(seed).fork(kScheduleStream)),
      fault_rng_(Random(seed).fork(kFaultStream)),
      network_rng_(Random(seed).fork(kNetworkStream)),
      trace_hash_(mix64(seed)) {}

SimWorld::~SimWorld() {
  for (auto& [node, scheduler] : schedulers_) {
    scheduler->set_ready_flag(nullptr, 0);
    scheduler->set_resume_observer(nullptr);
  }
}

uint64_t SimWorld::node_seed(NodeId node) const { return Random(seed_).fork(kNodeStreamBase + node).seed(); }

uint32_t SimWorld::add_event(Instant at, NodeId node, EventKind kind) {
  if (at < now_) at = now_;
  const uint64_t sequence = next_sequence_++;
  SLUICE_ASSERT(sequence < (uint64_t{1} << kSlotShift));
  uint32_t slot = 0;
  if (free_slots_.empty()) {
    SLUICE_ASSERT(slots_.size() < UINT32_MAX);
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Slot& event = slots_[slot];
  SLUICE_ASSERT(event.sequence == 0);
  SLUICE_ASSERT(!event.action);
  event.sequence = sequence;
  event.node = node;
  event.kind = kind;
  heap_.push(HeapEntry::make(at, sequence, slot));
  ++live_events_;
  return slot;
}

void SimWorld::free_slot(uint32_t slot, bool keep_action) {
  Slot& event = slots_[slot];
  SLUICE_ASSERT(event.sequence != 0);
  event.sequence = 0;
  if (!keep_action) event.action.reset();
  free_slots_.push_back(slot);
  SLUICE_ASSERT(live_events_ > 0);
  --live_events_;
}

bool SimWorld::cancel(EventId id) {
  const uint64_t slot = id >> kSlotShift;
  const uint64_t sequence = id & ((uint64_t{1} << kSlotShift) - 1);
  if (sequence == 0 || slot >= slots_.size() || slots_[slot].sequence != sequence) return false;
  free_slot(static_cast<uint32_t>(slot));
  // Cancelled timers far in the future (session timeouts) would otherwise pile up in the heap until they surface.
  if (heap_.size() > 2 * live_events_ + kCompactAbove) {
    heap_.erase_if([this](const HeapEntry& e) { return !live(e); });
    SLUICE_ASSERT(heap_.size() + waiting_entries() >= live_events_);
  }
  return true;
}

size_t SimWorld::cancel_node_events(NodeId node) {
  SLUICE_ASSERT(node != kWorldNode);
  size_t cancelled = 0;
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot].sequence != 0 && slots_[slot].node == node) {
      free_slot(slot);
      ++cancelled;
    }
  }
  return cancelled;
}

const SimWorld::HeapEntry* SimWorld::next_event() {
  while (!resumed_.empty()) {
    if (live(resumed_.front())) return &resumed_.front();
    resumed_.pop_front();
  }
  while (!heap_.empty()) {
    const HeapEntry& top = heap_.top();
    if (live(top)) return &top;
    heap_.pop();  // cancelled: its slot is free or reused
  }
  SLUICE_ASSERT(live_events_ == 0 || !paused_.empty());
  return nullptr;
}

size_t SimWorld::waiting_entries() const {
  size_t n = resumed_.size();
  for (const auto& [node, waiting] : paused_) n += waiting.size();
  return n;
}

void SimWorld::pause_node(NodeId node) {
  SLUICE_ASSERT_MSG(std::ranges::binary_search(schedulers_, node, {}, &std::pair<NodeId, Scheduler*>::first),
                    "a paused node is attached");
  SLUICE_ASSERT(!paused(node));
  paused_.emplace_back(node, std::vector<HeapEntry>{});
  renumber_schedulers();
  trace(0x9a05'0000'0000ULL ^ node);
}

void SimWorld::resume_node(NodeId node) {
  const auto found = std::ranges::find(paused_, node, &std::pair<NodeId, std::vector<HeapEntry>>::first);
  if (found == paused_.end()) return;
  std::vector<HeapEntry> waiting = std::move(found->second);
  paused_.erase(found);
  renumber_schedulers();
  trace(0x4e5a'0000'0000ULL ^ node);
  // In the order they came due; they run now, before any event still in the heap (all of which are due later).
  std::stable_sort(waiting.begin(), waiting.end());
  for (HeapEntry& entry : waiting) {
    if (!live(entry)) continue;
    entry.at = now_;
    resumed_.push_back(entry);
  }
  if (!resumed_.empty()) SLUICE_PROBE("sim_world.paused_node_events_held");
}

bool SimWorld::paused(NodeId node) const {
  return std::ranges::find(paused_, node, &std::pair<NodeId, std::vector<HeapEntry>>::first) != paused_.end();
}

void SimWorld::attach(NodeId node, Scheduler& scheduler) {
  const auto at = std::ranges::lower_bound(schedulers_, node, {}, &std::pair<NodeId, Scheduler*>::first);
  SLUICE_ASSERT_MSG(at == schedulers_.end() || at->first != node, "node attached twice");
  schedulers_.insert(at, {node, &scheduler});
  renumber_schedulers();
  scheduler.set_resume_observer([this, node](uint64_t fiber_id) {
    ++fiber_steps_;
    trace((static_cast<uint64_t>(node) << 48) ^ fiber_id);
  });
}

void SimWorld::detach(NodeId node) {
  const auto found = std::ranges::lower_bound(schedulers_, node, {}, &std::pair<NodeId, Scheduler*>::first);
  SLUICE_ASSERT(found != schedulers_.end() && found->first == node);
  found->second->set_resume_observer(nullptr);
  found->second->set_ready_flag(nullptr, 0);
  schedulers_.erase(found);
  // A node going down ends its pause; its waiting events were cancelled with the node's (cancel_node_events).
  std::erase_if(paused_, [node](const auto& p) { return p.first == node; });
  renumber_schedulers();
}

void SimWorld::renumber_schedulers() {
  ready_mask_ = 0;
  paused_mask_ = 0;
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const auto& [node, scheduler] = schedulers_[i];
    if (i >= kFlaggedSchedulers) {
      scheduler->set_ready_flag(nullptr, 0);
      continue;
    }
    const uint64_t bit = uint64_t{1} << i;
    scheduler->set_ready_flag(&ready_mask_, bit);
    if (paused(node)) paused_mask_ |= bit;
    SLUICE_ASSERT(((ready_mask_ & bit) != 0) == scheduler->has_ready());
  }
}

void SimWorld::trace(uint64_t value) { trace_hash_ = mix64(trace_hash_ ^ value); }

// Draws among the nodes with ready fibers, in node order; the chosen node's scheduler then draws among its own.
bool SimWorld::run_ready_fiber() {
  if (schedulers_.size() > kFlaggedSchedulers) return run_ready_fiber_asking_each();
  uint64_t candidates = ready_mask_ & ~paused_mask_;
  if (candidates == 0) return false;
  // Mostly one node is ready: no draw then, and no popcount (a libgcc call without -mpopcnt, 0.3 % of a run).
  if ((candidates & (candidates - 1)) != 0) {
    const int count = std::popcount(candidates);
    for (uint64_t skip = schedule_rng_.uniform(static_cast<uint64_t>(count)); skip > 0; --skip) {
      candidates &= candidates - 1;  // drops the lowest
    }
  }
  const size_t index = static_cast<size_t>(std::countr_zero(candidates));
  SLUICE_ASSERT(index < schedulers_.size());
  const bool ran = schedulers_[index].second->run_one();
  SLUICE_ASSERT_MSG(ran, "a node's ready bit was set without a ready fiber");
  return true;
}

bool SimWorld::run_ready_fiber_asking_each() {
  ready_scratch_.clear();
  for (auto& [node, scheduler] : schedulers_) {
    if (scheduler->has_ready() && (paused_.empty() || !paused(node))) ready_scratch_.push_back(scheduler);
  }
  if (ready_scratch_.empty()) return false;
  const size_t pick = ready_scratch_.size() == 1 ? 0 : schedule_rng_.uniform(ready_scratch_.size());
  const bool ran = ready_scratch_[pick]->run_one();
  SLUICE_ASSERT(ran);
  return true;
}

void SimWorld::run_next_event(const HeapEntry entry) {
  if (!resumed_.empty()) {
    resumed_.pop_front();
  } else {
    heap_.pop();
  }
  Slot& slot = slots_[entry.slot()];
  const NodeId node = slot.node;
  if (!paused_.empty() && node != kWorldNode) {
    const auto found = std::ranges::find(paused_, node, &std::pair<NodeId, std::vector<HeapEntry>>::first);
    if (found != paused_.end()) {  // its process is stopped: the event waits for the resume, still cancellable
      SLUICE_ASSERT(entry.at >= now_);
      now_ = entry.at;
      found->second.push_back(entry);
      return;
    }
  }
  const EventKind kind = slot.kind;
  // Freed before the action runs, so that the events it schedules reuse the slot as they always did.
  free_slot(entry.slot(), /*keep_action=*/true);
  SLUICE_ASSERT(entry.at >= now_);
  now_ = entry.at;
  ++events_run_;
  trace(static_cast<uint64_t>(now_.time_since_epoch().count()));
  trace((entry.sequence() << 8) ^ (static_cast<uint64_t>(node) << 40) ^ static_cast<uint64_t>(kind));
  slot.action.run_once();  // the last use of `slot`: the action may reallocate slots_
  if (event_observer_) event_observer_(entry.at, entry.sequence(), node, kind, trace_hash_);
}

bool SimWorld::step() {
  if (run_ready_fiber()) return true;
  const HeapEntry* next = next_event();
  if (next == nullptr) return false;
  run_next_event(*next);
  return true;
}

void SimWorld::run_until(Instant deadline) {
  for (;;) {
    if (run_ready_fiber()) continue;
    const HeapEntry* next = next_event();
    if (next == nullptr || next->at > deadline) break;
    run_next_event(*next);
  }
  if (now_ < deadline) now_ = deadline;
}

bool SimWorld::run_until(const std::function<bool()>& done, Instant deadline) {
  for (;;) {
    if (done()) return true;
    if (run_ready_fiber()) continue;
    const HeapEntry* next = next_event();
    if (next == nullptr || next->at > deadline) break;
    run_next_event(*next);
  }
  if (now_ < deadline) now_ = deadline;
  return done();
}

AssertFailureHook simulation_failure_hook(const SimWorld& world, std::string replay_command) {
  return [&world, replay = std::move(replay_command)] {
    std::fprintf(stderr,
                 "simulation failed: seed %" PRIu64 ", virtual time %.6f s, %" PRIu64 " events, %" PRIu64
                 " fiber steps\nreplay with:\n  %s\n",
                 world.seed(), to_seconds(world.now().time_since_epoch()), world.events_run(), world.fiber_steps(),
                 replay.c_str());
  };
}

}  // namespace sluice
