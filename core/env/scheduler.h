// Scheduler: fibers on one thread (Boost.Context). One per node, in both worlds. The core is written in plain
// blocking style; a blocking call parks the current fiber and the world's loop runs another.
//
// Two kinds of caller:
//  - fibers (the core): spawn, yield, join, sleep_for/until, and the WaitQueue primitive that every blocking
//    construct (sync.h, the worlds' file and network waits) is built on;
//  - the world's driver loop (net/ event loop, sim/ world): run_one / run_ready, and kill_all on a node crash.
//
// Fibers are never preempted. The next ready fiber is the oldest (real world) or drawn from a seeded Random
// (simulation), which explores interleavings while staying replayable.
//
// Killing: kill_all() unwinds every fiber, newest first, by resuming it with a FiberKilled exception thrown from
// its wait point.
// Destructors therefore run on the fiber's own stack; they must not block. Never `catch (...)` without rethrow.
//
// Offloading: run_off_loop(fn) runs CPU-heavy or device-bound work (a big batch's decompression and CRC, a read
// that misses the page cache) through the world's Offloader, on another thread, while the other fibers go on. The
// simulator installs none: the work runs inline, so a run stays replayable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env/clock.h"

namespace sluice {

class Random;
class Scheduler;
struct Fiber;
class FiberStackPool;

// Thrown from a wait point to unwind a fiber whose node is being killed; caught at the fiber's entry.
struct FiberKilled {};

// A handle that keeps a fiber's bookkeeping alive for join(), after it finished too.
class FiberRef {
 public:
  FiberRef() = default;
  uint64_t id() const;
  const std::string& name() const;
  bool done() const;
  explicit operator bool() const { return fiber_ != nullptr; }

 private:
  friend class Scheduler;
  explicit FiberRef(std::shared_ptr<Fiber> fiber) : fiber_(std::move(fiber)) {}
  std::shared_ptr<Fiber> fiber_;
};

// The wait list every blocking construct uses. Waiters live on their fibers' stacks and unlink themselves when
// they leave (woken, timed out or unwound), so a killed fiber never leaves a dangling entry.
class WaitQueue {
 public:
  explicit WaitQueue(Scheduler& scheduler) : scheduler_(&scheduler) {}
  ~WaitQueue();
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  // Parks the current fiber until notified.
  void wait();
  // Parks until notified (true) or until `deadline` passes (false).
  bool wait_until(Instant deadline);
  bool wait_for(Duration timeout);
  // Wakes the longest waiter. True when there was one. Callable from fibers and from timer callbacks.
  bool notify_one();
  size_t notify_all();
  bool empty() const { return head_ == nullptr; }
  Scheduler& scheduler() const { return *scheduler_; }

 private:
  struct Waiter;
  void link(Waiter* waiter);
  void unlink(Waiter* waiter);

  Scheduler* scheduler_;
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

// Where run_off_loop's work runs: the real world's worker threads (net/event_loop.h). Installed by the world.
class Offloader {
 public:
  virtual ~Offloader() = default;
  // Runs `work` on another thread and parks the calling fiber until it has returned.
  virtual void run_parked(std::function<void()> work) = 0;
  // Drops the work not started yet and waits (blocking the thread) until the running work has returned. kill_all
  // calls it before it unwinds any fiber, so offloaded work may borrow from the fiber that handed it off: that
  // fiber's stack, and what it owns, outlive the work.
  virtual void settle() = 0;
};

class Scheduler {
 public:
  // `shuffle`: when set, the next ready fiber is drawn from it; otherwise ready fibers run in FIFO order.
  Scheduler(Clock& clock, Random* shuffle);
  ~Scheduler();  // kills any fiber still alive
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // ---- For fibers (spawn also for the driver) ----
  FiberRef spawn(std::string name, std::function<void()> body);
  void yield();
  // Parks until `fiber` has finished. REQUIRES: called from another fiber.
  void join(const FiberRef& fiber);
  void sleep_until(Instant deadline);
  void sleep_for(Duration duration);
  bool in_fiber() const { return current_ != nullptr; }
  // The running fiber's id and name; 0 and "" outside fibers.
  uint64_t current_id() const;
  const std::string& current_name() const;
  Clock& clock() const { return clock_; }

  // ---- Offloading ----
  // Runs `fn` and returns its result: on the offloader with the calling fiber parked meanwhile, or inline when no
  // offloader is installed (the simulator) or outside a fiber. `fn` may borrow from the caller (Offloader::settle
  // keeps that safe through a kill) but runs concurrently with the fibers: it must touch nothing another fiber may
  // use meanwhile, nor the Env, nor probes; only its inputs and outputs.
  template <typename F>
  auto run_off_loop(F&& fn) -> std::invoke_result_t<F&> {
    using T = std::invoke_result_t<F&>;
    if (offloader_ == nullptr || current_ == nullptr) return fn();
    if constexpr (std::is_void_v<T>) {
      offloader_->run_parked([&fn] { fn(); });
    } else {
      std::optional<T> result;
      offloader_->run_parked([&fn, &result] { result.emplace(fn()); });
      return std::move(*result);
    }
  }
  // The world's driver installs it (nullptr removes it); it must outlive its installation.
  void set_offloader(Offloader* offloader) { offloader_ = offloader; }
  bool offloads() const { return offloader_ != nullptr; }

  // ---- For the world's driver loop (never from a fiber) ----
  bool has_ready() const { return !ready_.empty(); }
  size_t ready_count() const { return ready_.size(); }
  // Runs one ready fiber until it parks, yields or finishes. False when none was ready.
  bool run_one();
  // Runs ready fibers until none is ready; returns how many steps ran.
  size_t run_ready();
  size_t live_fibers() const { return live_; }
  // Unwinds every live fiber (a node crash or shutdown). Pending timers of sleeping fibers are cancelled. The
  // offloader settles first (Offloader::settle).
  void kill_all();
  // Called with the fiber id every time a fiber is resumed; the simulator folds it into the trace hash.
  void set_resume_observer(std::function<void(uint64_t fiber_id)> observer) {
    resume_observer_ = std::move(observer);
  }
  // The simulator's record of which nodes have a ready fiber: from now on `bit` of `*mask` is set while this
  // scheduler has one, and clear while it has none, so its driver need not ask every node at every step. Null
  // stops it. REQUIRES: `mask` outlives the installation.
  void set_ready_flag(uint64_t* mask, uint64_t bit) {
    ready_mask_ = mask;
    ready_bit_ = bit;
    if (ready_mask_ != nullptr) note_ready();
  }

 private:
  friend class WaitQueue;
  friend struct FiberEntry;

  void park();                 // current fiber waits until unpark()
  void unpark(Fiber* fiber);   // fiber must be parked
  void resume(Fiber* fiber);   // driver → fiber, until it switches back
  void switch_to_driver();     // fiber → driver
  void finish(Fiber* fiber);   // called on the fiber's stack as it ends
  void make_ready(Fiber* fiber) {
    ready_.push_back(fiber);
    if (ready_mask_ != nullptr) *ready_mask_ |= ready_bit_;
  }
  void note_ready() {  // after ready_ shrank, or on installation
    if (ready_mask_ == nullptr) return;
    if (ready_.empty()) {
      *ready_mask_ &= ~ready_bit_;
    } else {
      *ready_mask_ |= ready_bit_;
    }
  }

  Clock& clock_;
  Random* shuffle_;
  Offloader* offloader_ = nullptr;
  // Few fibers are ready at once: a vector's erase is a short memmove, a deque's a long call (1 % of a run).
  std::vector<Fiber*> ready_;
  uint64_t* ready_mask_ = nullptr;  // set_ready_flag
  uint64_t ready_bit_ = 0;
  std::unique_ptr<FiberStackPool> stacks_;       // declared before fibers_: it outlives their stacks
  std::vector<std::shared_ptr<Fiber>> fibers_;  // live fibers in creation order (kill_all unwinds in it)
  Fiber* current_ = nullptr;
  uint64_t next_fiber_id_ = 1;
  size_t live_ = 0;
  bool killing_ = false;
  std::function<void(uint64_t)> resume_observer_;
  // The driver's stack, learnt on the first switch (AddressSanitizer needs it to follow stack switches).
  const void* driver_stack_bottom_ = nullptr;
  size_t driver_stack_size_ = 0;
  void* driver_fake_stack_ = nullptr;
};

}  // namespace sluice
