// EventLoop: blocking calls leave the loop free (timers keep firing during one, fibers run during a real
// fsync), posts and stops from other threads, signals through the signalfd, unwinding a fiber parked in a blocking
// call. Nothing waits for time to pass: each test waits for the condition it needs, with a deadline as a guard.
#include "net/event_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <vector>
#include <thread>

#include "net/real_env.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using net_test::TempDir;

// A timer that re-arms itself every `period` on the loop, counting its ticks (read from other threads too).
class Ticker {
 public:
  Ticker(EventLoop& loop, Duration period) : loop_(loop), period_(period) { arm(); }
  ~Ticker() { loop_.cancel_timer(timer_); }
  uint64_t ticks() const { return ticks_.load(); }

 private:
  void arm() {
    timer_ = loop_.add_timer(loop_.now() + period_, [this] {
      ++ticks_;
      arm();
    });
  }

  EventLoop& loop_;
  Duration period_;
  TimerId timer_ = 0;
  std::atomic<uint64_t> ticks_ = 0;
};

// A failure guard only: no condition below needs more than a few timer periods on an idle machine.
constexpr Duration kGenerousDeadline = 30s;

int64_t elapsed_ms(Instant since, Instant until) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(until - since).count();
}

TEST(EventLoopTest, RunBlockingReturnsItsValueWhileTimersKeepFiring) {
  RealEnv real("loop", LogLevel::kOff);
  Ticker ticker(real.loop(), 10ms);
  ASSERT_EQ(real.run([&](Env& env) {
    const uint64_t before = ticker.ticks();
    // The blocking call returns only once the loop has fired the ticker five more times: a loop stalled by the
    // call would fire none, and the call would give up at the deadline.
    const bool ticked = real.loop().run_blocking([&ticker, before] {
      const auto deadline = std::chrono::steady_clock::now() + kGenerousDeadline;
      while (ticker.ticks() - before < 5) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);  // polling the condition, not waiting for time to pass
      }
      return true;
    });
    EXPECT_TRUE(ticked) << "the loop fired " << ticker.ticks() - before << " ticks while the call blocked";
    (void)env;
  }), 0);
  EXPECT_EQ(real.loop().stats().blocking_started, 1u);
  EXPECT_EQ(real.loop().stats().blocking_completed, 1u);
  EXPECT_GT(real.loop().stats().iterations, 5u);
}

TEST(EventLoopTest, FsyncOfALargeDirtyFileDoesNotStallTheLoop) {
  TempDir dir;
  RealEnv real("loop", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "big", OpenMode::kCreateNew)).value();
    const Bytes chunk(1 << 20, 0x5a);
    for (int i = 0; i < 48; ++i) ASSERT_TRUE(file->append(chunk).ok());
    const uint64_t started_before = real.loop().stats().blocking_started;
    const uint64_t completed_before = real.loop().stats().blocking_completed;
    // Ready before the sync starts, so it runs as soon as the syncing fiber parks: it must find the fdatasync
    // handed to a worker and not finished (its completion reaches the loop only after the ready fibers ran).
    bool ran_during_sync = false;
    env.scheduler.spawn("observer", [&] {
      ran_during_sync = real.loop().stats().blocking_started == started_before + 1 &&
                        real.loop().stats().blocking_completed == completed_before;
    });
    const Instant start = env.clock.now();
    ASSERT_TRUE(file->sync().ok());
    EXPECT_TRUE(ran_during_sync) << "another fiber ran only after the fdatasync: the loop was stalled";
    EXPECT_EQ(real.loop().stats().blocking_completed, completed_before + 1);
    RecordProperty("fdatasync_ms", static_cast<int>(elapsed_ms(start, env.clock.now())));
  }), 0);
}

TEST(EventLoopTest, ManyBlockingCallsFromManyFibers) {
  RealEnv real("loop", LogLevel::kOff);
  int finished = 0;
  ASSERT_EQ(real.run([&](Env& env) {
    std::vector<FiberRef> fibers;
    for (int i = 0; i < 20; ++i) {
      fibers.push_back(env.scheduler.spawn("caller", [&real, &finished, i] {
        const int doubled = real.loop().run_blocking([i] { return 2 * i; });
        EXPECT_EQ(doubled, 2 * i);
        ++finished;
      }));
    }
    for (const FiberRef& fiber : fibers) env.scheduler.join(fiber);
  }), 0);
  EXPECT_EQ(finished, 20);
  EXPECT_EQ(real.loop().stats().blocking_completed, 20u);
}

// kill_all settles the workers first: a call still running may write into its parked fiber's stack, so the fiber
// is unwound only after the call returned. Here the call writes into a buffer on the fiber's stack after the main
// fiber returned (which ends the run and unwinds the parked fiber).
TEST(EventLoopTest, UnwindingAFiberParkedInRunBlockingWaitsForTheRunningCall) {
  auto started = std::make_shared<std::atomic<bool>>(false);
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto ran = std::make_shared<std::atomic<bool>>(false);
  RealEnv real("loop", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    env.scheduler.spawn("parked", [&real, started, release, ran] {
      char on_the_fiber_stack[64] = {};
      real.loop().run_blocking([&on_the_fiber_stack, started, release, ran] {
        started->store(true);
        const auto deadline = std::chrono::steady_clock::now() + kGenerousDeadline;
        while (!release->load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        // Long enough for the run to reach kill_all: without the settle, the fiber would be gone by now.
        std::this_thread::sleep_for(50ms);
        std::memset(on_the_fiber_stack, 1, sizeof(on_the_fiber_stack));
        ran->store(true);
      });
      ADD_FAILURE() << "the parked fiber should have been unwound";
    });
    // Until a worker holds the call: calls still queued when the fibers are unwound are dropped.
    while (!started->load()) env.scheduler.sleep_for(1ms);  // polls the condition
    EXPECT_EQ(real.loop().stats().blocking_started, 1u);
    EXPECT_EQ(real.loop().stats().blocking_completed, 0u);
    release->store(true);
  }), 0);
  EXPECT_TRUE(ran->load()) << "the fiber was unwound while its call was running";
  EXPECT_EQ(real.env().scheduler.live_fibers(), 0u);
}

// Scheduler::run_off_loop on the real loop runs on a worker: the loop fires timers while the work runs. The work
// returns only once the loop fired five more ticks; run inline it would stall the loop and give up at the deadline.
TEST(EventLoopTest, RunOffLoopRunsOnAWorkerWhileTheLoopGoesOn) {
  RealEnv real("loop", LogLevel::kOff);
  EXPECT_TRUE(real.env().scheduler.offloads());
  Ticker ticker(real.loop(), 1ms);
  ASSERT_EQ(real.run([&](Env& env) {
    const uint64_t before = ticker.ticks();
    std::vector<uint8_t> borrowed(4096, 7);  // offloaded work may borrow from its fiber
    const Result<size_t> sum = env.scheduler.run_off_loop([&]() -> Result<size_t> {
      const auto deadline = std::chrono::steady_clock::now() + kGenerousDeadline;
      while (ticker.ticks() - before < 5) {
        if (std::chrono::steady_clock::now() > deadline) return timed_out("the loop fired no ticks");
        std::this_thread::sleep_for(1ms);  // polling the condition, not waiting for time to pass
      }
      size_t total = 0;
      for (uint8_t byte : borrowed) total += byte;
      return total;
    });
    ASSERT_TRUE(sum.ok()) << sum.status().to_string();
    EXPECT_EQ(*sum, 7u * 4096);
  }), 0);
  EXPECT_EQ(real.loop().stats().blocking_started, 1u);
  EXPECT_EQ(real.loop().stats().blocking_completed, 1u);
}

// A fiber step that keeps the loop (here 25 ms of work without parking) is what every other connection waits for:
// the loop measures each step, and take_longest_step gives the longest since the last call.
TEST(EventLoopTest, TheLongestFiberStepIsMeasured) {
  RealEnv real("loop", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    env.scheduler.sleep_for(1ms);
    (void)real.loop().take_longest_step();  // a new span from here
    const auto until = std::chrono::steady_clock::now() + 25ms;
    while (std::chrono::steady_clock::now() < until) {
    }
    env.scheduler.sleep_for(1ms);  // ends the step
    EXPECT_GE(real.loop().take_longest_step(), 25ms);
    // The step running now is measured when it ends: within it, the span just begun has no step yet.
    EXPECT_EQ(real.loop().take_longest_step(), Duration::zero()) << "a new span after each call";
  }), 0);
  EXPECT_GE(real.loop().stats().longest_step, 25ms);
  EXPECT_GE(real.loop().stats().steps_over_10ms, 1u);
}

TEST(EventLoopTest, StopFromAnotherThreadEndsTheRun) {
  EventLoop loop;
  // The stop comes once the loop ran a posted task, so it finds the loop running, with nothing to do but wait in
  // epoll: the stop has to wake it.
  std::atomic<bool> loop_ran = false;
  loop.post([&loop_ran] { loop_ran.store(true); });
  std::atomic<bool> stopped = false;
  std::thread stopper([&] {
    const auto deadline = std::chrono::steady_clock::now() + kGenerousDeadline;
    while (!loop_ran.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    stopped.store(true);
    loop.stop();
  });
  EXPECT_FALSE(loop.run_until([] { return false; }));
  stopper.join();
  EXPECT_TRUE(loop_ran.load());
  EXPECT_TRUE(stopped.load());
  EXPECT_FALSE(loop.running());
}

TEST(EventLoopTest, PostedTasksRunOnTheLoopThreadOutsideFibers) {
  EventLoop loop;
  const std::thread::id loop_thread = std::this_thread::get_id();
  bool ran = false;
  std::thread poster([&] {
    loop.post([&] {
      EXPECT_EQ(std::this_thread::get_id(), loop_thread);
      EXPECT_FALSE(loop.scheduler().in_fiber());
      ran = true;
    });
  });
  EXPECT_TRUE(loop.run_until([&] { return ran; }));
  poster.join();
  EXPECT_EQ(loop.stats().posted_run, 1u);
}

TEST(EventLoopTest, DoneIsCheckedAfterEveryFiberStep) {
  EventLoop loop;
  int steps = 0;
  for (int f = 0; f < 2; ++f) {
    loop.scheduler().spawn("counter", [&] {
      for (int i = 0; i < 100; ++i) {
        ++steps;
        loop.scheduler().yield();
      }
    });
  }
  EXPECT_TRUE(loop.run_until([&] { return steps == 3; }));
  EXPECT_EQ(steps, 3);  // no fiber ran once done() held
  EXPECT_EQ(loop.scheduler().live_fibers(), 2u);  // the destructor unwinds them
}

TEST(EventLoopTest, AFiberThatOnlyYieldsDoesNotStarveTimers) {
  RealEnv real("loop", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    bool fired = false;
    env.clock.add_timer(env.clock.now() + 5ms, [&] { fired = true; });
    // Never parks: only the round bound lets the loop reach its timers.
    while (!fired) env.scheduler.yield();
  }), 0);
  EXPECT_GE(real.loop().stats().timers_fired, 1u);
}

TEST(EventLoopTest, SignalReachesTheHandlerOnTheLoopThread) {
  EventLoop loop;
  int received = 0;
  ASSERT_TRUE(loop.handle_signals([&](int signal_number) {
    EXPECT_FALSE(loop.scheduler().in_fiber());
    received = signal_number;
  }).ok());
  loop.scheduler().spawn("raiser", [] { ::raise(SIGTERM); });
  EXPECT_TRUE(loop.run_until([&] { return received != 0; }));
  EXPECT_EQ(received, SIGTERM);
  EXPECT_EQ(loop.stats().signals, 1u);
}

TEST(EventLoopTest, SignalWithoutHandlerStopsTheLoop) {
  EventLoop loop;
  ASSERT_TRUE(loop.handle_signals().ok());
  loop.scheduler().spawn("raiser", [] { ::raise(SIGINT); });
  EXPECT_FALSE(loop.run_until([] { return false; }));
  EXPECT_EQ(loop.stats().signals, 1u);
}

}  // namespace
}  // namespace sluice
