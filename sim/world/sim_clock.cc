#include "sim/world/sim_clock.h"

namespace sluice {

WallTime SimClock::wall_now() const {
  const Duration since_epoch = std::chrono::milliseconds(kWallEpochMs) + world_.now().time_since_epoch();
  return WallTime(since_epoch + wall_offset_);
}

TimerId SimClock::add_timer(Instant at, std::function<void()> callback) {
  return world_.schedule_at(at, node_, EventKind::kTimer, std::move(callback));
}

}  // namespace sluice
