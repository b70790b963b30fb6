// SimWorld: virtual time, one event queue ordered by (time, sequence), the seeded random streams, and the trace
// hash. Every simulated node lives in one world, on one thread. The world's loop alternates between running a
// ready fiber (drawn by the schedule stream from all nodes' ready fibers) and, when none is ready, advancing
// virtual time to the next event. Nothing here reads the real clock; the same seed gives the same run.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/assert.h"
#include "core/env/clock.h"
#include "core/env/random.h"
#include "sim/world/event_action.h"
#include "sim/world/event_heap.h"

namespace sluice {

class Scheduler;

// Kinds of event, folded into the trace hash with the event's time, sequence and node.
enum class EventKind : uint8_t {
  kTimer = 1,     // a Clock timer of a node
  kNetwork = 2,   // bytes or a control message arriving over SimNetwork
  kFault = 3,     // a scheduled fault (partition, power loss, ...)
  kControl = 4,   // a scenario step
};

using EventId = uint64_t;
using NodeId = uint32_t;
inline constexpr NodeId kWorldNode = 0;  // events that belong to no node

class SimWorld {
 public:
  explicit SimWorld(uint64_t seed);
  ~SimWorld();  // schedulers still attached stop flagging their ready fibers here
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  uint64_t seed() const { return seed_; }
  Instant now() const { return now_; }

  // Runs `action` (a void() callable, or an EventAction) at virtual time `at` (not before now). Events at one time run
  // in scheduling order. A callable is built in the event's slot, not moved there through an EventAction.
  template <typename F>
    requires std::is_invocable_r_v<void, std::decay_t<F>&>
  EventId schedule_at(Instant at, NodeId node, EventKind kind, F&& action) {
    if constexpr (std::is_same_v<std::remove_cvref_t<F>, EventAction>) {
      static_assert(!std::is_lvalue_reference_v<F>, "an EventAction is moved in");
      SLUICE_ASSERT(action);
      const uint32_t slot = add_event(at, node, kind);
      slots_[slot].action = std::move(action);
      return event_id(slot, slots_[slot].sequence);
    } else {
      const uint32_t slot = add_event(at, node, kind);
      slots_[slot].action.emplace(std::forward<F>(action));
      return event_id(slot, slots_[slot].sequence);
    }
  }
  template <typename F>
    requires std::is_invocable_r_v<void, std::decay_t<F>&>
  EventId schedule_after(Duration delay, NodeId node, EventKind kind, F&& action) {
    SLUICE_ASSERT(delay.count() >= 0);
    return schedule_at(now_ + delay, node, kind, std::forward<F>(action));
  }
  // True when the event was pending.
  bool cancel(EventId id);
  // Cancels every pending event of `node` (it crashed). Returns how many.
  size_t cancel_node_events(NodeId node);

  // Independent random streams: adding a fault draw never shifts the schedule or a node's own draws.
  Random& schedule_rng() { return schedule_rng_; }
  Random& fault_rng() { return fault_rng_; }
  Random& network_rng() { return network_rng_; }
  // The seed of node `node`'s own Random.
  uint64_t node_seed(NodeId node) const;

  // Schedulers whose ready fibers the loop runs. The world does not own them. Detaching also ends a pause.
  void attach(NodeId node, Scheduler& scheduler);
  void detach(NodeId node);

  // A process pause (SIGSTOP, a long GC, a VM descheduled): until resume_node, no fiber of `node` runs and its
  // events (timers, arriving bytes) wait; at resume they run first, in the order they were due, at the time of the
  // resume, so the node's clock has jumped forward and every timer due meanwhile fires at once. Peers only see
  // silence. A waiting event can still be cancelled. REQUIRES: the node is attached.
  void pause_node(NodeId node);
  void resume_node(NodeId node);  // no-op when the node is not paused (a crash ended the pause)
  bool paused(NodeId node) const;

  // One step: run one ready fiber of some node, else the next event. False when there is nothing to do.
  bool step();
  // Steps until virtual time would pass `deadline` (time is then set to it) or nothing is left.
  void run_until(Instant deadline);
  void run_for(Duration duration) { run_until(now_ + duration); }
  // Steps until `done()` holds (checked between steps) or `deadline` passes. True when done() held.
  bool run_until(const std::function<bool()>& done, Instant deadline);

  // Called after each event runs, with its time, sequence, node, kind and the trace hash so far: a determinism check
  // records two runs' events and names the first that differs. Null: none (the default; it costs nothing).
  using EventObserver = std::function<void(Instant at, uint64_t sequence, NodeId node, EventKind kind,
                                           uint64_t trace_hash)>;
  void set_event_observer(EventObserver observer) { event_observer_ = std::move(observer); }

  // Folds a value into the trace hash (events and fiber resumptions are folded automatically).
  void trace(uint64_t value);
  uint64_t trace_hash() const { return trace_hash_; }
  uint64_t events_run() const { return events_run_; }
  uint64_t fiber_steps() const { return fiber_steps_; }
  size_t pending_events() const { return live_events_; }

 private:
  // The queue is a min-heap of (time, sequence) over slots that hold the events (event_heap.h): the same order as a
  // sorted map, without a tree node per event. A cancelled event's slot is freed at once and its heap entry skipped
  // when it surfaces (its slot then holds another sequence, or none).
  using HeapEntry = EventHeap::Entry;
  struct Slot {
    uint64_t sequence = 0;  // 0: free
    NodeId node = kWorldNode;
    EventKind kind = EventKind::kTimer;
    EventAction action;
  };
  // An EventId names its slot and sequence, so cancel finds the slot without a map.
  static constexpr int kSlotShift = 40;
  static_assert(64 - kSlotShift == EventHeap::kSlotBits, "an EventId and a heap entry hold the same slots");
  static EventId event_id(uint32_t slot, uint64_t sequence) {
    return (static_cast<uint64_t>(slot) << kSlotShift) | sequence;
  }

  // Takes a free slot for an event at `at` (not before now), with the next sequence, and queues it; the caller puts
  // the action in. Returns the slot.
  uint32_t add_event(Instant at, NodeId node, EventKind kind);
  bool run_ready_fiber();
  bool run_ready_fiber_asking_each();  // with more than kFlaggedSchedulers nodes
  // After schedulers_ or paused_ changed: each scheduler's bit is its index again, and both masks are true.
  void renumber_schedulers();
  // Runs (or, for a paused node, holds) the event `entry`. REQUIRES: next_event() just returned it.
  void run_next_event(HeapEntry entry);
  // The earliest pending event's heap entry, after dropping cancelled ones from the top; null when none. Events a
  // resumed node kept waiting come first (resumed_).
  const HeapEntry* next_event();
  // Frees an event's slot for the events scheduled next, destroying its action unless `keep_action` (run_next_event
  // runs the action from the slot, which moves it out before anything can reuse the slot).
  void free_slot(uint32_t slot, bool keep_action = false);
  bool live(const HeapEntry& entry) const { return slots_[entry.slot()].sequence == entry.sequence(); }
  size_t waiting_entries() const;

  uint64_t seed_;
  Instant now_{};
  uint64_t next_sequence_ = 1;
  EventHeap heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  size_t live_events_ = 0;
  Random schedule_rng_;
  Random fault_rng_;
  Random network_rng_;
  // Sorted by node. Up to kFlaggedSchedulers of them keep bit i of ready_mask_ set while schedulers_[i] has a ready
  // fiber (Scheduler::set_ready_flag), and paused_mask_ holds the paused ones' bits, so that run_ready_fiber, run
  // at every step, need not ask every node (it did, and that was 1.5 % of a benchmark run's instructions).
  static constexpr size_t kFlaggedSchedulers = 64;
  std::vector<std::pair<NodeId, Scheduler*>> schedulers_;
  uint64_t ready_mask_ = 0;
  uint64_t paused_mask_ = 0;
  std::vector<Scheduler*> ready_scratch_;  // beyond kFlaggedSchedulers nodes
  // Paused nodes and the events that came due while they were paused (their slots stay live, so cancel works).
  std::vector<std::pair<NodeId, std::vector<HeapEntry>>> paused_;
  std::deque<HeapEntry> resumed_;  // a resumed node's waiting events, run before the heap's
  uint64_t trace_hash_;
  EventObserver event_observer_;
  uint64_t events_run_ = 0;
  uint64_t fiber_steps_ = 0;
};

// An assertion failure hook for a simulated run: prints the seed, the virtual time and the one command that
// replays the run. Install it with set_assert_failure_hook for the run's duration.
AssertFailureHook simulation_failure_hook(const SimWorld& world, std::string replay_command);

}  // namespace sluice
