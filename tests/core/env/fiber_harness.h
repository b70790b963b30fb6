// A one-node simulated world for testing fiber code: virtual time, a shuffling scheduler, nothing else.
#pragma once

#include <functional>
#include <memory>

#include "core/env/scheduler.h"
#include "sim/world/sim_clock.h"
#include "sim/world/sim_world.h"

namespace sluice::testing {

class FiberHarness {
 public:
  explicit FiberHarness(uint64_t seed = 1, bool shuffle = true)
      : world(seed), clock(world, kNode), scheduler(clock, shuffle ? &world.schedule_rng() : nullptr) {
    world.attach(kNode, scheduler);
  }
  ~FiberHarness() {
    scheduler.kill_all();
    world.detach(kNode);
  }

  void spawn(std::function<void()> body) { scheduler.spawn("test", std::move(body)); }
  // Runs until no fiber is ready and no event is pending, or a virtual minute has passed.
  void run() { world.run_until(world.now() + std::chrono::minutes(1)); }
  Instant now() const { return world.now(); }

  static constexpr NodeId kNode = 1;
  SimWorld world;
  SimClock clock;
  Scheduler scheduler;
};

}  // namespace sluice::testing
