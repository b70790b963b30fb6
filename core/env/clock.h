// Clock: monotonic time, wall time and timers. Sleeping suspends a fiber, so it lives on the Scheduler
// (Scheduler::sleep_for / sleep_until), which is built on the timers here.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace sluice {

using Duration = std::chrono::nanoseconds;

// Tags make monotonic and wall time points distinct types: they cannot be mixed by accident.
struct MonotonicTag {};
struct WallTag {};
using Instant = std::chrono::time_point<MonotonicTag, Duration>;  // since an arbitrary start
using WallTime = std::chrono::time_point<WallTag, Duration>;      // since the Unix epoch

inline int64_t to_unix_ms(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
inline double to_seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

using TimerId = uint64_t;

class Clock {
 public:
  virtual ~Clock() = default;

  // Monotonic: never goes backwards, unaffected by wall-clock jumps.
  virtual Instant now() const = 0;
  // For record timestamps. May jump or be skewed (the simulator does both).
  virtual WallTime wall_now() const = 0;

  // Runs `callback` once at or after `at`, on the node's loop and outside any fiber. The callback must not block;
  // it normally wakes a fiber or spawns one. Timer ids are never reused.
  virtual TimerId add_timer(Instant at, std::function<void()> callback) = 0;
  // True when the timer was still pending (its callback will not run).
  virtual bool cancel_timer(TimerId id) = 0;
};

}  // namespace sluice
