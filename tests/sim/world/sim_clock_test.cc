// SimClock's drift (the clock-skew fault): local time stays continuous and never goes back, timers fire when local
// time reaches them (never earlier, even when the clock slows after they were set), cancel holds across re-arming,
// and a clock that never drifted is world time exactly.
#include <gtest/gtest.h>

#include <vector>

#include "sim/world/sim_clock.h"
#include "sim/world/sim_world.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(SimClock, WithoutDriftItIsWorldTime) {
  SimWorld world(1);
  SimClock clock(world, kWorldNode);
  world.run_for(1500ms);
  EXPECT_EQ(clock.now(), world.now());
  Instant fired{};
  clock.add_timer(clock.now() + 1s, [&] { fired = world.now(); });
  world.run_for(2s);
  EXPECT_EQ(fired, Instant(2500ms));
}

TEST(SimClock, AFastClockFiresTimersEarlyInWorldTime) {
  SimWorld world(1);
  SimClock clock(world, kWorldNode);
  world.run_for(1s);
  clock.set_drift(500);  // 1.5 local seconds per world second
  EXPECT_EQ(clock.now(), Instant(1s)) << "a drift changes the rate, not the time";
  Instant fired_world{};
  Instant fired_local{};
  const Instant at = clock.now() + 1500ms;
  clock.add_timer(at, [&] {
    fired_world = world.now();
    fired_local = clock.now();
  });
  world.run_for(3s);
  EXPECT_EQ(fired_world, Instant(2s));
  EXPECT_GE(fired_local, at);
  EXPECT_EQ(clock.wall_now().time_since_epoch(),
            std::chrono::milliseconds(SimClock::kWallEpochMs) + (clock.now() - Instant()))
      << "the wall clock drifts with it";
}

TEST(SimClock, ATimerNeverFiresBeforeItsLocalTimeWhenTheClockSlows) {
  SimWorld world(1);
  SimClock clock(world, kWorldNode);
  clock.set_drift(1000);  // twice as fast
  const Instant at = clock.now() + 2s;  // world 1 s at this rate
  std::vector<Instant> fired;
  clock.add_timer(at, [&] { fired.push_back(world.now()); });
  world.run_for(500ms);
  EXPECT_EQ(clock.now(), Instant(1s));
  clock.set_drift(-500);  // half speed: the last local second takes two world seconds
  world.run_for(1s);
  EXPECT_TRUE(fired.empty()) << "its first world event came early and armed it again";
  world.run_for(2s);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], Instant(2500ms));
  // Local time never went back across both changes.
  EXPECT_GE(clock.now(), at);
}

TEST(SimClock, CancelHoldsAcrossReArming) {
  SimWorld world(1);
  SimClock clock(world, kWorldNode);
  clock.set_drift(1000);
  bool fired = false;
  const TimerId id = clock.add_timer(clock.now() + 2s, [&] { fired = true; });
  world.run_for(500ms);
  clock.set_drift(-500);
  world.run_for(1s);  // past the first world event: armed again under the same id
  EXPECT_TRUE(clock.cancel_timer(id));
  EXPECT_FALSE(clock.cancel_timer(id));
  world.run_for(5s);
  EXPECT_FALSE(fired);
}

// The timer-jitter fault: while it holds, each timer fires late by its own draw within the bound, never early;
// timers set before it or after it ends keep their time, and the clock keeps its rate.
TEST(SimClock, JitteredTimersFireLateWithinTheBoundEachByItsOwnDraw) {
  SimWorld world(3);
  SimClock clock(world, 1);
  Instant early{};
  clock.add_timer(clock.now() + 100ms, [&] { early = world.now(); });
  clock.set_timer_jitter(20ms);
  std::vector<Duration> late;
  for (int i = 0; i < 200; ++i) {
    const Instant at = clock.now() + 50ms;
    clock.add_timer(at, [&, at] { late.push_back(world.now() - at); });
  }
  clock.set_timer_jitter(0ms);
  Instant after{};
  clock.add_timer(clock.now() + 100ms, [&] { after = world.now(); });
  world.run_for(1s);
  EXPECT_EQ(early, Instant(100ms));
  EXPECT_EQ(after, Instant(100ms));
  ASSERT_EQ(late.size(), 200u);
  Duration most{0};
  Duration least = 1h;
  for (const Duration d : late) {
    EXPECT_GE(d, 0ms);
    EXPECT_LE(d, 20ms);
    most = std::max(most, d);
    least = std::min(least, d);
  }
  EXPECT_GT(most - least, 10ms) << "each timer draws its own delay";
  EXPECT_EQ(clock.now(), world.now()) << "the clock keeps its rate";
}

}  // namespace
}  // namespace sluice
