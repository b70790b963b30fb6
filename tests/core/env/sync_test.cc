#include "core/env/sync.h"

#include <gtest/gtest.h>

#include "tests/core/env/fiber_harness.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::FiberHarness;

TEST(Mutex, ExcludesAcrossYields) {
  FiberHarness h;
  Mutex mutex(h.scheduler);
  int inside = 0;
  int max_inside = 0;
  int entries = 0;
  for (int i = 0; i < 8; ++i) {
    h.spawn([&] {
      for (int round = 0; round < 5; ++round) {
        LockGuard guard(mutex);
        ++inside;
        max_inside = std::max(max_inside, inside);
        h.scheduler.yield();
        --inside;
        ++entries;
      }
    });
  }
  h.run();
  EXPECT_EQ(max_inside, 1);
  EXPECT_EQ(entries, 40);
  EXPECT_FALSE(mutex.locked());
}

// A waiter woken by unlock() and then killed before it runs must not leave the mutex locked.
TEST(Mutex, KillingAWokenWaiterLeavesTheMutexFree) {
  FiberHarness h(4, /*shuffle=*/false);
  auto mutex = std::make_unique<Mutex>(h.scheduler);
  h.spawn([&] {
    mutex->lock();
    h.scheduler.yield();  // let both waiters queue up
    mutex->unlock();      // wakes the first waiter, which has not run when the node dies
  });
  for (int i = 0; i < 2; ++i) h.spawn([&] { LockGuard guard(*mutex); });
  for (int step = 0; step < 4; ++step) ASSERT_TRUE(h.scheduler.run_one());
  EXPECT_EQ(h.scheduler.ready_count(), 1u);
  h.scheduler.kill_all();
  EXPECT_FALSE(mutex->locked());
  mutex.reset();  // ~Mutex asserts that it is free
}

TEST(CondVar, WaitsForPredicate) {
  FiberHarness h;
  Mutex mutex(h.scheduler);
  CondVar cv(h.scheduler);
  int value = 0;
  int seen = -1;
  h.spawn([&] {
    LockGuard guard(mutex);
    cv.wait(mutex, [&] { return value == 3; });
    seen = value;
  });
  h.spawn([&] {
    for (int i = 0; i < 3; ++i) {
      h.scheduler.sleep_for(10ms);
      LockGuard guard(mutex);
      ++value;
      cv.notify_all();
    }
  });
  h.run();
  EXPECT_EQ(seen, 3);
}

TEST(CondVar, TimedWaitReturnsFalseOnTimeoutWithMutexHeld) {
  FiberHarness h;
  Mutex mutex(h.scheduler);
  CondVar cv(h.scheduler);
  bool result = true;
  h.spawn([&] {
    LockGuard guard(mutex);
    result = cv.wait_until(mutex, h.clock.now() + 50ms);
    EXPECT_TRUE(mutex.locked());
  });
  h.run();
  EXPECT_FALSE(result);
}

TEST(Event, SetWakesAllAndStaysSet) {
  FiberHarness h;
  Event event(h.scheduler);
  int woken = 0;
  for (int i = 0; i < 3; ++i) h.spawn([&] { event.wait(); ++woken; });
  h.spawn([&] {
    h.scheduler.sleep_for(1s);
    event.set();
  });
  h.run();
  EXPECT_EQ(woken, 3);
  bool immediate = false;
  h.spawn([&] { immediate = event.wait_for(0ns); });
  h.run();
  EXPECT_TRUE(immediate);
}

TEST(Channel, BoundedBackpressureAndOrder) {
  FiberHarness h;
  Channel<int> channel(h.scheduler, 2);
  std::vector<int> received;
  int max_size = 0;
  h.spawn([&] {
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(channel.send(i));
      max_size = std::max(max_size, static_cast<int>(channel.size()));
    }
    channel.close();
  });
  h.spawn([&] {
    while (auto value = channel.receive()) received.push_back(*value);
  });
  h.run();
  ASSERT_EQ(received.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(received[i], i);
  EXPECT_LE(max_size, 2);
}

TEST(Channel, ReceiveUntilTimesOutAndCloseFailsSend) {
  FiberHarness h;
  Channel<int> channel(h.scheduler, 4);
  std::optional<int> got = 99;
  h.spawn([&] { got = channel.receive_until(h.clock.now() + 20ms); });
  h.run();
  EXPECT_FALSE(got.has_value());
  EXPECT_FALSE(channel.closed());
  channel.close();
  bool sent = true;
  h.spawn([&] { sent = channel.send(1); });
  h.run();
  EXPECT_FALSE(sent);
}

TEST(WhenAny, ReturnsFirstFinisher) {
  FiberHarness h;
  std::optional<size_t> winner;
  h.spawn([&] {
    winner = when_any(h.scheduler, {[&] { h.scheduler.sleep_for(300ms); },
                                    [&] { h.scheduler.sleep_for(100ms); },
                                    [&] { h.scheduler.sleep_for(200ms); }});
  });
  h.run();
  ASSERT_TRUE(winner.has_value());
  EXPECT_EQ(*winner, 1u);
}

TEST(WhenAny, DeadlineFirstGivesNullopt) {
  FiberHarness h;
  std::optional<size_t> winner = 7;
  Instant returned{};
  h.spawn([&] {
    winner = when_any(h.scheduler, {[&] { h.scheduler.sleep_for(5s); }}, h.clock.now() + 1s);
    returned = h.clock.now();
  });
  const Instant start = h.now();
  h.run();
  EXPECT_FALSE(winner.has_value());
  EXPECT_EQ(returned - start, Duration(1s));
}

}  // namespace
}  // namespace sluice
