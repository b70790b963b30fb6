#include "net/real_clock.h"

#include <chrono>

#include "net/event_loop.h"

namespace sluice {

Instant RealClock::now() const {
  const auto since_boot = std::chrono::steady_clock::now().time_since_epoch();
  return Instant(std::chrono::duration_cast<Duration>(since_boot));
}

WallTime RealClock::wall_now() const {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return WallTime(std::chrono::duration_cast<Duration>(since_epoch));
}

TimerId RealClock::add_timer(Instant at, std::function<void()> callback) {
  return loop_.add_timer(at, std::move(callback));
}

bool RealClock::cancel_timer(TimerId id) { return loop_.cancel_timer(id); }

}  // namespace sluice
