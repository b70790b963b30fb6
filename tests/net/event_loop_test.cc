// EventLoop: blocking calls leave the loop free (timers keep firing during a sleep and a real fsync), posts
// and stops from other threads, signals through the signalfd, unwinding a fiber parked in a blocking call.
#include "net/event_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "net/real_env.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using net_test::TempDir;

// A timer that re-arms itself every `period` on the loop, counting its ticks.
class Ticker {
 public:
  Ticker(EventLoop& loop, Duration period) : loop_(loop), period_(period) { arm(); }
  ~Ticker() { loop_.cancel_timer(timer_); }
  uint64_t ticks() const { return ticks_; }

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
  uint64_t ticks_ = 0;
};

int64_t elapsed_ms(Instant since, Instant until) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(until - since).count();
}

TEST(EventLoopTest, RunBlockingReturnsItsValueWhileTimersKeepFiring) {
  RealEnv real("loop", LogLevel::kOff);
  Ticker ticker(real.loop(), 10ms);
  ASSERT_EQ(real.run([&](Env& env) {
    const uint64_t before = ticker.ticks();
    const Instant start = env.clock.now();
    const int value = real.loop().run_blocking([] {
      std::this_thread::sleep_for(300ms);
      return 42;
    });
    EXPECT_EQ(value, 42);
    EXPECT_GE(env.clock.now() - start, 300ms);
    // 30 ticks if the loop is never descheduled; a stalled loop would show none.
    EXPECT_GE(ticker.ticks() - before, 5u);
  }), 0);
  EXPECT_EQ(real.loop().stats().blocking_started, 1u);
  EXPECT_EQ(real.loop().stats().blocking_completed, 1u);
  EXPECT_GT(real.loop().stats().iterations, 5u);
}

TEST(EventLoopTest, FsyncOfALargeDirtyFileDoesNotStallTheLoop) {
  TempDir dir;
  RealEnv real("loop", LogLevel::kOff);
  Ticker ticker(real.loop(), 10ms);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "big", OpenMode::kCreateNew)).value();
    const Bytes chunk(1 << 20, 0x5a);
    for (int i = 0; i < 48; ++i) ASSERT_TRUE(file->append(chunk).ok());
    const uint64_t before = ticker.ticks();
    const uint64_t completed_before = real.loop().stats().blocking_completed;
    const Instant start = env.clock.now();
    ASSERT_TRUE(file->sync().ok());
    const int64_t took_ms = elapsed_ms(start, env.clock.now());
    const uint64_t ticks = ticker.ticks() - before;
    EXPECT_EQ(real.loop().stats().blocking_completed, completed_before + 1);
    // A quarter of the ideal rate, less one: generous on a loaded machine, and never met by a loop stuck in
    // fdatasync (it fires nothing until the call returns).
    const int64_t expected = took_ms / 40 - 1;
    EXPECT_GE(static_cast<int64_t>(ticks), expected) << "fdatasync took " << took_ms << " ms";
    RecordProperty("fdatasync_ms", static_cast<int>(took_ms));
    RecordProperty("ticks_during_fdatasync", static_cast<int>(ticks));
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

TEST(EventLoopTest, UnwindingAFiberParkedInRunBlockingLetsTheCallFinish) {
  auto started = std::make_shared<std::atomic<bool>>(false);
  auto ran = std::make_shared<std::atomic<bool>>(false);
  {
    RealEnv real("loop", LogLevel::kOff);
    ASSERT_EQ(real.run([&](Env& env) {
      env.scheduler.spawn("parked", [&real, started, ran] {
        real.loop().run_blocking([started, ran] {
          started->store(true);
          std::this_thread::sleep_for(100ms);
          ran->store(true);
        });
        ADD_FAILURE() << "the parked fiber should have been unwound";
      });
      // Until a worker holds the call: calls still queued when the loop goes away are dropped.
      while (!started->load()) env.scheduler.sleep_for(1ms);
      EXPECT_EQ(real.loop().stats().blocking_started, 1u);
      EXPECT_EQ(real.loop().stats().blocking_completed, 0u);
    }), 0);
    EXPECT_EQ(real.env().scheduler.live_fibers(), 0u);
  }  // the loop's destructor joins the worker after its call
  EXPECT_TRUE(ran->load());
}

TEST(EventLoopTest, StopFromAnotherThreadEndsTheRun) {
  EventLoop loop;
  std::thread stopper([&loop] {
    std::this_thread::sleep_for(50ms);
    loop.stop();
  });
  EXPECT_FALSE(loop.run_until([] { return false; }));
  stopper.join();
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
