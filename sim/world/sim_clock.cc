#include "sim/world/sim_clock.h"

#include "core/base/assert.h"

namespace sluice {
namespace {

constexpr __int128 kPerThousand = 1000;
constexpr TimerId kDriftTimerBit = TimerId{1} << 63;
// Random::fork stream of each node's timer jitter; fixed forever, or old seeds stop replaying.
constexpr uint64_t kTimerJitterStreamBase = 4000;

}  // namespace

SimClock::SimClock(SimWorld& world, NodeId node)
    : world_(world), node_(node), jitter_rng_(world.fault_rng().fork(kTimerJitterStreamBase + node)) {}

void SimClock::set_timer_jitter(Duration max_late) {
  SLUICE_ASSERT(max_late >= Duration::zero());
  max_late_ = max_late;
}

Instant SimClock::now() const {
  if (!drifted_) return world_.now();
  const __int128 elapsed = (world_.now() - anchor_world_).count();
  const __int128 local = elapsed * (kPerThousand + drift_per_thousand_) / kPerThousand;
  return anchor_local_ + Duration(static_cast<int64_t>(local));
}

WallTime SimClock::wall_now() const {
  const Duration since_epoch = std::chrono::milliseconds(kWallEpochMs) + now().time_since_epoch();
  return WallTime(since_epoch + wall_offset_);
}

void SimClock::set_drift(int64_t parts_per_thousand) {
  SLUICE_ASSERT(parts_per_thousand >= kMinDriftPerThousand);
  const Instant local = now();
  anchor_world_ = world_.now();
  anchor_local_ = local;
  drift_per_thousand_ = parts_per_thousand;
  drifted_ = true;
  SLUICE_ASSERT(now() == local);  // continuous: a drift changes the rate, never the time
}

Instant SimClock::world_time_of(Instant local) const {
  if (local >= Instant::max()) return Instant::max();
  const Instant local_now = now();
  if (local <= local_now) return world_.now();
  // Rounded up: the event must not run before local time reaches `local`.
  const __int128 ahead = (local - local_now).count();
  const __int128 rate = kPerThousand + drift_per_thousand_;
  const __int128 world_ahead = (ahead * kPerThousand + rate - 1) / rate;
  const __int128 limit = (Instant::max() - world_.now()).count();
  if (world_ahead >= limit) return Instant::max();
  return world_.now() + Duration(static_cast<int64_t>(world_ahead));
}

TimerId SimClock::add_timer(Instant at, std::function<void()> callback) {
  if (max_late_ > Duration::zero() && at < Instant::max() - max_late_) {
    at += Duration(static_cast<int64_t>(jitter_rng_.uniform(static_cast<uint64_t>(max_late_.count()) + 1)));
  }
  if (!drifted_) return world_.schedule_at(at, node_, EventKind::kTimer, std::move(callback));
  // An id of its own names the timer for its whole life, however often it is armed again; the top bit keeps it apart
  // from the world event ids of timers set before the first drift.
  const TimerId id = kDriftTimerBit | next_timer_++;
  arm(id, at, std::move(callback));
  return id;
}

void SimClock::arm(TimerId id, Instant at, std::function<void()> callback) {
  pending_[id] = world_.schedule_at(world_time_of(at), node_, EventKind::kTimer,
                                    [this, id, at, callback = std::move(callback)]() mutable {
                                      if (now() < at) {
                                        arm(id, at, std::move(callback));  // the clock slowed meanwhile
                                        return;
                                      }
                                      pending_.erase(id);
                                      callback();
                                    });
}

bool SimClock::cancel_timer(TimerId id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return (id & kDriftTimerBit) == 0 && world_.cancel(id);  // fired, or set before any drift
  const bool pending = world_.cancel(it->second);
  pending_.erase(it);
  return pending;
}

}  // namespace sluice
