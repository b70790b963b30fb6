#include "core/env/scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/env/sync.h"
#include "tests/core/env/fiber_harness.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::FiberHarness;

TEST(Scheduler, RunsSpawnedFibersToCompletion) {
  FiberHarness h;
  int ran = 0;
  for (int i = 0; i < 10; ++i) h.spawn([&] { ++ran; });
  EXPECT_EQ(h.scheduler.live_fibers(), 10u);
  h.run();
  EXPECT_EQ(ran, 10);
  EXPECT_EQ(h.scheduler.live_fibers(), 0u);
}

TEST(Scheduler, FifoWithoutShuffle) {
  FiberHarness h(1, /*shuffle=*/false);
  std::string order;
  for (char c : std::string("abc")) {
    h.spawn([&, c] {
      order += c;
      h.scheduler.yield();
      order += static_cast<char>(c - 'a' + 'A');
    });
  }
  h.run();
  EXPECT_EQ(order, "abcABC");
}

TEST(Scheduler, ShuffleExploresInterleavingsButReplays) {
  auto run_once = [](uint64_t seed) {
    FiberHarness h(seed);
    std::string order;
    for (char c : std::string("abcdef")) {
      h.spawn([&, c] {
        order += c;
        h.scheduler.yield();
        order += c;
      });
    }
    h.run();
    return order;
  };
  EXPECT_EQ(run_once(7), run_once(7));
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 20; ++seed) seen.insert(run_once(seed));
  EXPECT_GT(seen.size(), 5u);
}

TEST(Scheduler, SleepAdvancesVirtualTimeOnly) {
  FiberHarness h;
  Instant woke{};
  const Instant start = h.now();
  h.spawn([&] {
    h.scheduler.sleep_for(5s);
    woke = h.clock.now();
  });
  h.run();
  EXPECT_EQ(woke - start, Duration(5s));
}

TEST(Scheduler, SleepersWakeInDeadlineOrder) {
  FiberHarness h;
  std::vector<int> order;
  for (int i : {3, 1, 2}) {
    h.spawn([&, i] {
      h.scheduler.sleep_for(std::chrono::milliseconds(i * 10));
      order.push_back(i);
    });
  }
  h.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(Scheduler, JoinWaitsForCompletion) {
  FiberHarness h;
  bool child_done = false;
  bool joined_after = false;
  h.spawn([&] {
    FiberRef child = h.scheduler.spawn("child", [&] {
      h.scheduler.sleep_for(1s);
      child_done = true;
    });
    h.scheduler.join(child);
    joined_after = child_done;
    EXPECT_TRUE(child.done());
  });
  h.run();
  EXPECT_TRUE(joined_after);
}

TEST(Scheduler, KillAllUnwindsParkedFibersAndRunsDestructors) {
  FiberHarness h;
  int destroyed = 0;
  struct Counter {
    int* count;
    ~Counter() { ++*count; }
  };
  WaitQueue never(h.scheduler);
  for (int i = 0; i < 3; ++i) {
    h.spawn([&] {
      Counter c{&destroyed};
      never.wait();
      ADD_FAILURE() << "a killed fiber continued";
    });
  }
  h.spawn([&] {
    Counter c{&destroyed};
    h.scheduler.sleep_for(1h);  // a pending timer must be cancelled by the unwind
  });
  h.world.run_for(1s);
  EXPECT_EQ(h.scheduler.live_fibers(), 4u);
  h.scheduler.kill_all();
  EXPECT_EQ(destroyed, 4);
  EXPECT_EQ(h.scheduler.live_fibers(), 0u);
  EXPECT_TRUE(never.empty());
  EXPECT_EQ(h.world.pending_events(), 0u);  // the sleeper's timer is gone
  // The node can boot again after a kill.
  bool rebooted = false;
  h.spawn([&] { rebooted = true; });
  h.run();
  EXPECT_TRUE(rebooted);
}

// The simulator's driver asks a node's bit instead of the node (SimWorld::run_ready_fiber): the bit must be set
// exactly while the scheduler has a ready fiber, whatever made it ready (spawn, a notify, a yield) or not.
TEST(Scheduler, TheReadyFlagIsSetExactlyWhileAFiberIsReady) {
  FiberHarness h(1, /*shuffle=*/false);
  constexpr uint64_t kOther = uint64_t{1} << 9;  // another node's bit: never touched
  constexpr uint64_t kBit = uint64_t{1} << 2;
  uint64_t mask = kOther;
  h.scheduler.set_ready_flag(&mask, kBit);
  EXPECT_EQ(mask, kOther);
  Event go(h.scheduler);
  h.spawn([&] { go.wait(); });
  EXPECT_EQ(mask, kOther | kBit) << "spawned";
  ASSERT_TRUE(h.scheduler.run_one());
  EXPECT_EQ(mask, kOther) << "parked on the event";
  h.spawn([&] {
    go.set();
    h.scheduler.yield();
  });
  EXPECT_EQ(mask, kOther | kBit);
  ASSERT_TRUE(h.scheduler.run_one());  // sets the event (the first fiber is ready) and yields
  EXPECT_EQ(h.scheduler.ready_count(), 2u);
  EXPECT_EQ(mask, kOther | kBit);
  ASSERT_TRUE(h.scheduler.run_one());
  ASSERT_TRUE(h.scheduler.run_one());
  EXPECT_FALSE(h.scheduler.has_ready());
  EXPECT_EQ(mask, kOther) << "both done";
  h.spawn([&] { go.wait(); });
  h.spawn([] {});
  EXPECT_EQ(mask, kOther | kBit);
  h.scheduler.kill_all();
  EXPECT_EQ(mask, kOther) << "killed: nothing is ready";
  h.scheduler.set_ready_flag(nullptr, 0);
  h.spawn([] {});
  EXPECT_EQ(mask, kOther) << "no longer installed";
  h.scheduler.set_ready_flag(&mask, kBit);
  EXPECT_EQ(mask, kOther | kBit) << "installing it reports what is ready now";
  h.scheduler.set_ready_flag(nullptr, 0);  // `mask` goes before the harness unwinds the fiber
}

TEST(Scheduler, FiberSpawnedNeverRunKilledCleanly) {
  FiberHarness h;
  bool ran = false;
  h.spawn([&] { ran = true; });
  h.scheduler.kill_all();
  EXPECT_FALSE(ran);
  EXPECT_EQ(h.scheduler.live_fibers(), 0u);
}

// Without an offloader (the simulator), run_off_loop runs its work inline: the fiber does not park, so no other
// fiber runs in between and a run stays replayable.
TEST(Scheduler, RunOffLoopWithoutAnOffloaderRunsInline) {
  FiberHarness h;
  EXPECT_FALSE(h.scheduler.offloads());
  std::string order;
  h.spawn([&] {
    const int value = h.scheduler.run_off_loop([&] {
      order += "work ";
      return 42;
    });
    order += "back:" + std::to_string(value) + " ";
    h.scheduler.run_off_loop([&] { order += "void "; });
  });
  h.spawn([&] { order += "other "; });
  h.run();
  // Either fiber may go first (shuffled), but nothing comes between the work and its return.
  EXPECT_TRUE(order == "work back:42 void other " || order == "other work back:42 void ") << order;
  // Outside a fiber too.
  EXPECT_EQ(h.scheduler.run_off_loop([] { return 7; }), 7);
}

// An offloader that runs the work when the test says so, from the driver: what a worker does on another thread.
class ManualOffloader final : public Offloader {
 public:
  explicit ManualOffloader(Scheduler& scheduler) : returned_(scheduler) {}
  void run_parked(std::function<void()> work) override {
    pending_ = std::move(work);
    returned_.wait();
  }
  void settle() override {
    ++settles_;
    pending_ = nullptr;  // dropped, as work not started is
  }
  void finish() {
    pending_();
    pending_ = nullptr;
    returned_.notify_one();
  }
  bool has_pending() const { return pending_ != nullptr; }
  int settles() const { return settles_; }

 private:
  std::function<void()> pending_;
  WaitQueue returned_;
  int settles_ = 0;
};

TEST(Scheduler, RunOffLoopParksTheFiberUntilTheOffloaderReturnsAndKillAllSettlesFirst) {
  FiberHarness h;
  ManualOffloader offloader(h.scheduler);
  h.scheduler.set_offloader(&offloader);
  EXPECT_TRUE(h.scheduler.offloads());
  std::string order;
  h.spawn([&] {
    const int value = h.scheduler.run_off_loop([&] {
      order += "work ";
      return 42;
    });
    order += "back:" + std::to_string(value) + " ";
  });
  h.run();
  ASSERT_TRUE(offloader.has_pending());
  order += "parked ";
  offloader.finish();
  h.run();
  EXPECT_EQ(order, "parked work back:42 ");
  // A fiber parked in run_off_loop is unwound only after the offloader settled.
  h.spawn([&] { h.scheduler.run_off_loop([&] { order += "never "; }); });
  h.run();
  ASSERT_TRUE(offloader.has_pending());
  h.scheduler.kill_all();
  EXPECT_EQ(offloader.settles(), 1);
  EXPECT_FALSE(offloader.has_pending());
  EXPECT_EQ(h.scheduler.live_fibers(), 0u);
  h.scheduler.set_offloader(nullptr);
  EXPECT_EQ(order, "parked work back:42 ");
}

TEST(WaitQueue, TimedWaitTimesOutAndNotifyWakes) {
  FiberHarness h;
  WaitQueue queue(h.scheduler);
  bool first = true;
  bool second = false;
  h.spawn([&] { first = queue.wait_for(100ms); });
  h.spawn([&] { second = queue.wait_for(10s); });
  h.spawn([&] {
    h.scheduler.sleep_for(1s);
    EXPECT_TRUE(queue.notify_one());
  });
  h.run();
  EXPECT_FALSE(first);
  EXPECT_TRUE(second);
  EXPECT_TRUE(queue.empty());
}

TEST(WaitQueue, NotifyWakesInArrivalOrder) {
  FiberHarness h(3, /*shuffle=*/false);
  WaitQueue queue(h.scheduler);
  std::vector<int> woken;
  for (int i = 0; i < 4; ++i) {
    h.spawn([&, i] {
      queue.wait();
      woken.push_back(i);
    });
  }
  h.spawn([&] { EXPECT_EQ(queue.notify_all(), 4u); });
  h.run();
  EXPECT_EQ(woken, (std::vector<int>{0, 1, 2, 3}));
}

TEST(Scheduler, DeepStackFitsInFiber) {
  FiberHarness h;
  std::function<int(int)> recurse = [&](int depth) -> int {
    volatile char pad[256];
    pad[0] = static_cast<char>(depth);
    return depth == 0 ? pad[0] : recurse(depth - 1) + 1;
  };
  int result = 0;
  h.spawn([&] { result = recurse(200); });
  h.run();
  EXPECT_EQ(result, 200);
}

}  // namespace
}  // namespace sluice
