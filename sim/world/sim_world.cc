#include "sim/world/sim_world.h"

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

}  // namespace

SimWorld::SimWorld(uint64_t seed)
    : seed_(seed),
      schedule_rng_(Random(seed).fork(kScheduleStream)),
      fault_rng_(Random(seed).fork(kFaultStream)),
      network_rng_(Random(seed).fork(kNetworkStream)),
      trace_hash_(mix64(seed)) {}

uint64_t SimWorld::node_seed(NodeId node) const { return Random(seed_).fork(kNodeStreamBase + node).seed(); }

EventId SimWorld::schedule_at(Instant at, NodeId node, EventKind kind, std::function<void()> action) {
  SLUICE_ASSERT(action != nullptr);
  if (at < now_) at = now_;
  const uint64_t sequence = next_sequence_++;
  const Key key{at, sequence};
  auto [it, inserted] = queue_.emplace(key, Event{node, kind, std::move(action)});
  SLUICE_ASSERT(inserted);
  by_id_.emplace(sequence, key);
  return sequence;
}

EventId SimWorld::schedule_after(Duration delay, NodeId node, EventKind kind, std::function<void()> action) {
  SLUICE_ASSERT(delay.count() >= 0);
  return schedule_at(now_ + delay, node, kind, std::move(action));
}

bool SimWorld::cancel(EventId id) {
  auto found = by_id_.find(id);
  if (found == by_id_.end()) return false;
  const size_t erased = queue_.erase(found->second);
  SLUICE_ASSERT(erased == 1);
  by_id_.erase(found);
  return true;
}

size_t SimWorld::cancel_node_events(NodeId node) {
  SLUICE_ASSERT(node != kWorldNode);
  size_t cancelled = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->second.node == node) {
      by_id_.erase(it->first.sequence);
      it = queue_.erase(it);
      ++cancelled;
    } else {
      ++it;
    }
  }
  return cancelled;
}

void SimWorld::attach(NodeId node, Scheduler& scheduler) {
  auto [it, inserted] = schedulers_.emplace(node, &scheduler);
  SLUICE_ASSERT_MSG(inserted, "node attached twice");
  scheduler.set_resume_observer([this, node](uint64_t fiber_id) {
    ++fiber_steps_;
    trace((static_cast<uint64_t>(node) << 48) ^ fiber_id);
  });
}

void SimWorld::detach(NodeId node) {
  auto found = schedulers_.find(node);
  SLUICE_ASSERT(found != schedulers_.end());
  found->second->set_resume_observer(nullptr);
  schedulers_.erase(found);
}

void SimWorld::trace(uint64_t value) { trace_hash_ = mix64(trace_hash_ ^ value); }

bool SimWorld::run_ready_fiber() {
  // Draw among the nodes with ready fibers; the chosen node's scheduler then draws among its own.
  ready_scratch_.clear();
  for (auto& [node, scheduler] : schedulers_) {
    if (scheduler->has_ready()) ready_scratch_.push_back(scheduler);
  }
  if (ready_scratch_.empty()) return false;
  const size_t pick = ready_scratch_.size() == 1 ? 0 : schedule_rng_.uniform(ready_scratch_.size());
  const bool ran = ready_scratch_[pick]->run_one();
  SLUICE_ASSERT(ran);
  return true;
}

void SimWorld::run_next_event() {
  SLUICE_ASSERT(!queue_.empty());
  auto it = queue_.begin();
  const Key key = it->first;
  Event event = std::move(it->second);
  queue_.erase(it);
  by_id_.erase(key.sequence);
  SLUICE_ASSERT(key.at >= now_);
  now_ = key.at;
  ++events_run_;
  trace(static_cast<uint64_t>(now_.time_since_epoch().count()));
  trace((key.sequence << 8) ^ (static_cast<uint64_t>(event.node) << 40) ^ static_cast<uint64_t>(event.kind));
  event.action();
  if (event_observer_) event_observer_(key.at, key.sequence, event.node, event.kind, trace_hash_);
}

bool SimWorld::step() {
  if (run_ready_fiber()) return true;
  if (queue_.empty()) return false;
  run_next_event();
  return true;
}

void SimWorld::run_until(Instant deadline) {
  for (;;) {
    if (run_ready_fiber()) continue;
    if (queue_.empty() || queue_.begin()->first.at > deadline) break;
    run_next_event();
  }
  if (now_ < deadline) now_ = deadline;
}

bool SimWorld::run_until(const std::function<bool()>& done, Instant deadline) {
  for (;;) {
    if (done()) return true;
    if (run_ready_fiber()) continue;
    if (queue_.empty() || queue_.begin()->first.at > deadline) break;
    run_next_event();
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
