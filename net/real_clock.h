// RealClock: monotonic time from steady_clock, wall time from system_clock. Timers are kept and fired by the
// EventLoop that owns this clock (on its thread, outside fibers); this class only forwards to it.
#pragma once

#include "core/env/clock.h"

namespace sluice {

class EventLoop;

class RealClock final : public Clock {
 public:
  // `loop` owns this clock; it may still be under construction (the reference is only stored).
  explicit RealClock(EventLoop& loop) : loop_(loop) {}

  Instant now() const override;
  WallTime wall_now() const override;
  // Loop thread only (fibers and loop callbacks).
  TimerId add_timer(Instant at, std::function<void()> callback) override;
  bool cancel_timer(TimerId id) override;

 private:
  EventLoop& loop_;
};

}  // namespace sluice
