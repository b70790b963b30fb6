// RealClock and the loop's timers: sleeps last at least as asked, cancel works, callbacks run outside fibers
// in deadline order.
#include "net/real_clock.h"

#include <gtest/gtest.h>

#include <chrono>

#include "net/real_env.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(RealClockTest, SleepForWakesNoEarlierThanAsked) {
  RealEnv real("clock", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    const Instant start = env.clock.now();
    const auto steady_start = std::chrono::steady_clock::now();
    env.scheduler.sleep_for(50ms);
    EXPECT_GE(env.clock.now() - start, 50ms);
    EXPECT_GE(std::chrono::steady_clock::now() - steady_start, 50ms);
  }), 0);
}

TEST(RealClockTest, NowIsMonotonicAndWallTimeIsTheSystemClock) {
  RealEnv real("clock", LogLevel::kOff);
  Clock& clock = real.env().clock;
  const Instant a = clock.now();
  const Instant b = clock.now();
  EXPECT_LE(a, b);
  const int64_t system_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  EXPECT_NEAR(static_cast<double>(to_unix_ms(clock.wall_now())), static_cast<double>(system_ms), 5000.0);
}

TEST(RealClockTest, CancelledTimerNeverRuns) {
  RealEnv real("clock", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    bool cancelled_ran = false;
    bool kept_ran = false;
    const TimerId cancelled = env.clock.add_timer(env.clock.now() + 20ms, [&] { cancelled_ran = true; });
    const TimerId kept = env.clock.add_timer(env.clock.now() + 20ms, [&] { kept_ran = true; });
    EXPECT_NE(cancelled, kept);
    EXPECT_TRUE(env.clock.cancel_timer(cancelled));
    EXPECT_FALSE(env.clock.cancel_timer(cancelled));
    env.scheduler.sleep_for(60ms);
    EXPECT_FALSE(cancelled_ran);
    EXPECT_TRUE(kept_ran);
    EXPECT_FALSE(env.clock.cancel_timer(kept));  // already fired
  }), 0);
}

TEST(RealClockTest, TimersFireInDeadlineOrderOutsideFibers) {
  RealEnv real("clock", LogLevel::kOff);
  std::vector<int> order;
  ASSERT_EQ(real.run([&](Env& env) {
    const Instant base = env.clock.now() + 10ms;
    auto record = [&](int tag) {
      return [&, tag] {
        EXPECT_FALSE(env.scheduler.in_fiber());
        order.push_back(tag);
      };
    };
    env.clock.add_timer(base + 20ms, record(3));
    env.clock.add_timer(base, record(1));
    env.clock.add_timer(base, record(2));  // same deadline: by id
    env.clock.add_timer(base - 1h, record(0));  // already due
    env.scheduler.sleep_until(base + 40ms);
  }), 0);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(real.loop().pending_timers(), 0u);
}

TEST(RealClockTest, ATimerCanWakeAFiber) {
  RealEnv real("clock", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    WaitQueue queue(env.scheduler);
    env.clock.add_timer(env.clock.now() + 10ms, [&] { queue.notify_one(); });
    EXPECT_TRUE(queue.wait_for(10s));
    EXPECT_FALSE(queue.wait_for(5ms));  // nobody notifies: times out
  }), 0);
}

}  // namespace
}  // namespace sluice
