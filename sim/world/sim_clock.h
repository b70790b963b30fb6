// SimClock: a node's view of the world's virtual time. Its timers are world events tagged with the node, so a
// crash cancels them all. Wall time starts at a fixed epoch plus the node's skew, and can be jumped (a fault).
#pragma once

#include "core/env/clock.h"
#include "sim/world/sim_world.h"

namespace sluice {

class SimClock final : public Clock {
 public:
  // Wall clocks start at 2026-01-01T00:00:00Z: fixed, so traces do not depend on the day a test runs.
  static constexpr int64_t kWallEpochMs = 1767225600000;

  SimClock(SimWorld& world, NodeId node) : world_(world), node_(node) {}

  Instant now() const override { return world_.now(); }
  WallTime wall_now() const override;
  TimerId add_timer(Instant at, std::function<void()> callback) override;
  bool cancel_timer(TimerId id) override { return world_.cancel(id); }

  // Moves this node's wall clock by `offset` (forwards or backwards); monotonic time is unaffected.
  void jump_wall(Duration offset) { wall_offset_ += offset; }
  Duration wall_offset() const { return wall_offset_; }

 private:
  SimWorld& world_;
  NodeId node_;
  Duration wall_offset_{0};
};

}  // namespace sluice
