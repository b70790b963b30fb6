// SimClock: a node's view of the world's virtual time. Its timers are world events tagged with the node, so a
// crash cancels them all. Wall time starts at a fixed epoch plus the node's skew, and can be jumped (a fault).
//
// The monotonic clock may also drift (a clock-skew fault): from the moment set_drift is called it advances
// `parts_per_thousand` faster (negative: slower) than world time, so every timer and timeout the node sets fires
// early or late in world time. Local time stays continuous and never goes back. Until a drift is first set,
// now() is world time exactly and timers are plain world events, so runs without the fault are unchanged.
#pragma once

#include <map>

#include "core/env/clock.h"
#include "core/env/random.h"
#include "sim/world/sim_world.h"

namespace sluice {

class SimClock final : public Clock {
 public:
  // Wall clocks start at 2026-01-01T00:00:00Z: fixed, so traces do not depend on the day a test runs.
  static constexpr int64_t kWallEpochMs = 1767225600000;
  // The slowest drift: a clock at a tenth of its rate (a node starved of ticks), never stopped.
  static constexpr int64_t kMinDriftPerThousand = -900;

  SimClock(SimWorld& world, NodeId node);

  Instant now() const override;
  WallTime wall_now() const override;
  TimerId add_timer(Instant at, std::function<void()> callback) override;
  bool cancel_timer(TimerId id) override;

  // Moves this node's wall clock by `offset` (forwards or backwards); monotonic time is unaffected.
  void jump_wall(Duration offset) { wall_offset_ += offset; }
  Duration wall_offset() const { return wall_offset_; }

  // From now on the monotonic clock runs `parts_per_thousand` fast (negative: slow); 0 puts it back to the world's
  // rate (keeping the offset it gathered). REQUIRES: parts_per_thousand >= kMinDriftPerThousand.
  void set_drift(int64_t parts_per_thousand);
  int64_t drift() const { return drift_per_thousand_; }

  // From now on every timer set fires up to `max_late` after its time (uniform, from this node's own jitter stream,
  // so a run without it draws as before): a loaded machine's scheduler. Zero ends it; timers set before keep theirs.
  void set_timer_jitter(Duration max_late);
  Duration timer_jitter() const { return max_late_; }

 private:
  // The world time at which local time reaches `local` at the current drift (rounded up, never before now).
  Instant world_time_of(Instant local) const;
  // Schedules the world event for timer `id` (its first event's id) and remembers the event.
  void arm(TimerId id, Instant at, std::function<void()> callback);

  SimWorld& world_;
  NodeId node_;
  Duration wall_offset_{0};
  bool drifted_ = false;  // set_drift was called once: timers check their time when they fire
  int64_t drift_per_thousand_ = 0;
  Instant anchor_world_{};  // local time = anchor_local_ + (world - anchor_world_) * (1000 + drift) / 1000
  Instant anchor_local_{};
  // Timers armed since the first drift, by the id add_timer returned, to the world event pending now: a timer
  // that fires before its local time (the clock slowed after it was armed) is armed again under the same id.
  std::map<TimerId, EventId> pending_;
  TimerId next_timer_ = 1;
  Duration max_late_{0};
  Random jitter_rng_;
};

}  // namespace sluice
