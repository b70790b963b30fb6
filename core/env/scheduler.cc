#include "core/env/scheduler.h"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <exception>
#include <memory>
#include <vector>

#include "core/base/assert.h"
#include "core/base/limits.h"
#include "core/env/random.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLUICE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUICE_ASAN 1
#endif
#endif

#if defined(SLUICE_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace ctx = boost::context;

namespace sluice {
namespace {

// AddressSanitizer does not see Boost.Context's stack switches; every switch is announced to it (DESIGN.md §7).
void asan_start_switch(void** fake_stack_save, const void* bottom, size_t size) {
#if defined(SLUICE_ASAN)
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
#else
  (void)fake_stack_save, (void)bottom, (void)size;
#endif
}

void asan_finish_switch(void* fake_stack_save, const void** bottom_old, size_t* size_old) {
#if defined(SLUICE_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, size_old);
#else
  (void)fake_stack_save, (void)bottom_old, (void)size_old;
#endif
}

enum class FiberState : uint8_t { kReady, kRunning, kParked, kDone };

}  // namespace

struct Fiber {
  Fiber(Scheduler& scheduler, uint64_t fiber_id, std::string fiber_name, std::function<void()> fiber_body)
      : id(fiber_id), name(std::move(fiber_name)), body(std::move(fiber_body)), joiners(scheduler) {}

  uint64_t id;
  std::string name;
  std::function<void()> body;
  FiberState state = FiberState::kReady;
  bool killed = false;
  ctx::fiber context;  // the fiber's own continuation while it is not running
  ctx::fiber driver;   // the driver's continuation while the fiber runs
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  void* fake_stack = nullptr;
  WaitQueue joiners;
};

// Finished fibers' stacks, kept for the next spawns: mapping a guarded stack and unmapping it (a TLB shootdown)
// cost three system calls per fiber, and a sync round spawns two. Up to kMaxPooled are kept; the rest are
// unmapped as before.
class FiberStackPool {
 public:
  FiberStackPool() = default;
  FiberStackPool(const FiberStackPool&) = delete;
  FiberStackPool& operator=(const FiberStackPool&) = delete;
  ~FiberStackPool() {
    for (ctx::stack_context& sc : free_) {
#if defined(SLUICE_ASAN)
      ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
      allocator_.deallocate(sc);
    }
  }

  ctx::stack_context take() {
    ctx::stack_context sc;
    if (free_.empty()) {
      sc = allocator_.allocate();
    } else {
      sc = free_.back();
      free_.pop_back();
    }
#if defined(SLUICE_ASAN)
    // The last fiber's frames may have left poisoned redzones behind (its entry frame never returns), on a pooled
    // stack or on a fresh mapping at an address an unmapped stack had: munmap does not clear ASan's shadow.
    ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
    return sc;
  }

  void give_back(ctx::stack_context& sc) noexcept {
    if (free_.size() < kMaxPooled) {
      free_.push_back(sc);
    } else {
#if defined(SLUICE_ASAN)
      ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(sc.sp) - sc.size, sc.size);  // the shadow outlives the mapping
#endif
      allocator_.deallocate(sc);
    }
  }

 private:
  static constexpr size_t kMaxPooled = 64;
  ctx::protected_fixedsize_stack allocator_{limits::kFiberStackBytes};
  std::vector<ctx::stack_context> free_;
};

namespace {

// Boost's guarded mmap stack, taken from and given back to the scheduler's pool, recording its bounds into the
// Fiber for AddressSanitizer.
struct RecordingStack {
  FiberStackPool* pool;
  Fiber* fiber;

  ctx::stack_context allocate() {
    ctx::stack_context sc = pool->take();
    fiber->stack_bottom = static_cast<char*>(sc.sp) - sc.size;
    fiber->stack_size = sc.size;
    return sc;
  }
  void deallocate(ctx::stack_context& sc) noexcept { pool->give_back(sc); }
};

}  // namespace

// ---- FiberRef ----

uint64_t FiberRef::id() const { return fiber_ ? fiber_->id : 0; }
const std::string& FiberRef::name() const {
  static const std::string kNone;
  return fiber_ ? fiber_->name : kNone;
}
bool FiberRef::done() const { return fiber_ == nullptr || fiber_->state == FiberState::kDone; }

// ---- Scheduler ----

struct FiberEntry {
  static ctx::fiber run(Scheduler& scheduler, Fiber* fiber, ctx::fiber&& driver) {
    fiber->driver = std::move(driver);
    asan_finish_switch(nullptr, &scheduler.driver_stack_bottom_, &scheduler.driver_stack_size_);
    if (!fiber->killed) {
      try {
        fiber->body();
      } catch (const FiberKilled&) {
        SLUICE_ASSERT(fiber->killed);
      } catch (const std::exception& e) {
        assert_fail("no exception escapes a fiber", e.what(), __FILE__, __LINE__);
      }
    }
    fiber->body = nullptr;  // release captures on the fiber's own stack, before it goes away
    scheduler.finish(fiber);
    asan_start_switch(nullptr, scheduler.driver_stack_bottom_, scheduler.driver_stack_size_);
    return std::move(fiber->driver);
  }
};

Scheduler::Scheduler(Clock& clock, Random* shuffle)
    : clock_(clock), shuffle_(shuffle), stacks_(std::make_unique<FiberStackPool>()) {}

Scheduler::~Scheduler() {
  SLUICE_ASSERT(current_ == nullptr);
  kill_all();
  SLUICE_ASSERT(live_ == 0);
}

FiberRef Scheduler::spawn(std::string name, std::function<void()> body) {
  SLUICE_ASSERT(body != nullptr);
  auto fiber = std::make_shared<Fiber>(*this, next_fiber_id_++, std::move(name), std::move(body));
  Fiber* raw = fiber.get();
  raw->killed = killing_;  // spawned while its node dies: it unwinds before running its body
  raw->context = ctx::fiber(std::allocator_arg, RecordingStack{.pool = stacks_.get(), .fiber = raw},
                            [this, raw](ctx::fiber&& driver) {
                              return FiberEntry::run(*this, raw, std::move(driver));
                            });
  SLUICE_ASSERT(raw->stack_bottom != nullptr);
  fibers_.push_back(std::move(fiber));
  ++live_;
  make_ready(raw);
  return FiberRef(fibers_.back());
}

uint64_t Scheduler::current_id() const { return current_ ? current_->id : 0; }

const std::string& Scheduler::current_name() const {
  static const std::string kNone;
  return current_ ? current_->name : kNone;
}

void Scheduler::switch_to_driver() {
  Fiber* fiber = current_;
  SLUICE_ASSERT(fiber != nullptr);
  asan_start_switch(&fiber->fake_stack, driver_stack_bottom_, driver_stack_size_);
  fiber->driver = std::move(fiber->driver).resume();
  asan_finish_switch(fiber->fake_stack, &driver_stack_bottom_, &driver_stack_size_);
  SLUICE_ASSERT(current_ == fiber);
  SLUICE_ASSERT(fiber->state == FiberState::kRunning);
}

void Scheduler::park() {
  Fiber* fiber = current_;
  SLUICE_ASSERT_MSG(fiber != nullptr, "a blocking call outside any fiber");
  if (fiber->killed) {
    SLUICE_ASSERT_MSG(std::uncaught_exceptions() == 0, "a destructor blocked while its fiber was killed");
    throw FiberKilled{};
  }
  fiber->state = FiberState::kParked;
  switch_to_driver();
  if (fiber->killed) {
    SLUICE_ASSERT_MSG(std::uncaught_exceptions() == 0, "a destructor blocked while its fiber was killed");
    throw FiberKilled{};
  }
}

void Scheduler::unpark(Fiber* fiber) {
  SLUICE_ASSERT(fiber != nullptr);
  if (fiber->state == FiberState::kReady) {
    // Only kill_all makes a parked fiber ready behind its wait queue's back.
    SLUICE_ASSERT(fiber->killed);
    return;
  }
  SLUICE_ASSERT(fiber->state == FiberState::kParked);
  fiber->state = FiberState::kReady;
  make_ready(fiber);
}

void Scheduler::yield() {
  Fiber* fiber = current_;
  SLUICE_ASSERT_MSG(fiber != nullptr, "yield outside any fiber");
  if (fiber->killed) throw FiberKilled{};
  fiber->state = FiberState::kReady;
  make_ready(fiber);
  switch_to_driver();
  if (fiber->killed) throw FiberKilled{};
}

void Scheduler::join(const FiberRef& ref) {
  SLUICE_ASSERT(ref.fiber_ != nullptr);
  SLUICE_ASSERT_MSG(ref.fiber_.get() != current_, "a fiber cannot join itself");
  while (ref.fiber_->state != FiberState::kDone) ref.fiber_->joiners.wait();
}

void Scheduler::sleep_until(Instant deadline) {
  WaitQueue never_notified(*this);
  while (clock_.now() < deadline) {
    if (!never_notified.wait_until(deadline)) break;
  }
}

void Scheduler::sleep_for(Duration duration) { sleep_until(clock_.now() + duration); }

void Scheduler::resume(Fiber* fiber) {
  SLUICE_ASSERT(current_ == nullptr);
  SLUICE_ASSERT(fiber->state == FiberState::kReady);
  fiber->state = FiberState::kRunning;
  current_ = fiber;
  if (resume_observer_) resume_observer_(fiber->id);
  asan_start_switch(&driver_fake_stack_, fiber->stack_bottom, fiber->stack_size);
  fiber->context = std::move(fiber->context).resume();
  asan_finish_switch(driver_fake_stack_, nullptr, nullptr);
  current_ = nullptr;
  if (fiber->state == FiberState::kDone) {
    SLUICE_ASSERT(!fiber->context);  // the stack is gone
    for (size_t i = 0; i < fibers_.size(); ++i) {
      if (fibers_[i].get() == fiber) {
        fibers_.erase(fibers_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
}

void Scheduler::finish(Fiber* fiber) {
  SLUICE_ASSERT(fiber == current_);
  SLUICE_ASSERT(live_ > 0);
  fiber->state = FiberState::kDone;
  --live_;
  fiber->joiners.notify_all();
}

bool Scheduler::run_one() {
  SLUICE_ASSERT_MSG(current_ == nullptr, "the driver loop runs outside fibers");
  if (ready_.empty()) return false;
  size_t index = 0;
  if (shuffle_ != nullptr && ready_.size() > 1) index = shuffle_->uniform(ready_.size());
  Fiber* fiber = ready_[index];
  ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(index));
  note_ready();
  resume(fiber);
  return true;
}

size_t Scheduler::run_ready() {
  size_t steps = 0;
  while (run_one()) ++steps;
  return steps;
}

void Scheduler::kill_all() {
  SLUICE_ASSERT(current_ == nullptr);
  SLUICE_ASSERT(!killing_);
  // Before any fiber unwinds: offloaded work may be writing to a parked fiber's stack.
  if (offloader_ != nullptr) offloader_->settle();
  killing_ = true;
  ready_.clear();
  note_ready();
  // Newest first, like a stack unwinding: a fiber spawned by another usually borrows objects its parent owns,
  // so the parent must outlive the child's destructors. Fibers spawned during the unwind are killed too.
  while (!fibers_.empty()) {
    std::vector<std::shared_ptr<Fiber>> victims(fibers_.rbegin(), fibers_.rend());
    for (const std::shared_ptr<Fiber>& fiber : victims) {
      fiber->killed = true;
      if (fiber->state == FiberState::kDone) continue;
      SLUICE_ASSERT(fiber->state == FiberState::kReady || fiber->state == FiberState::kParked);
      if (fiber->state == FiberState::kParked) SLUICE_PROBE("scheduler.killed_parked_fiber");
      fiber->state = FiberState::kReady;
      resume(fiber.get());
      SLUICE_ASSERT(fiber->state == FiberState::kDone);
    }
    ready_.clear();  // unparks during the unwind (a notify) leave stale entries
    note_ready();
  }
  SLUICE_ASSERT_MSG(live_ == 0, "a fiber survived kill_all");
  killing_ = false;
}

// ---- WaitQueue ----

struct WaitQueue::Waiter {
  Fiber* fiber = nullptr;
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
  bool linked = false;
  bool notified = false;
};

WaitQueue::~WaitQueue() { SLUICE_ASSERT_MSG(head_ == nullptr, "a WaitQueue destroyed with fibers waiting"); }

void WaitQueue::link(Waiter* waiter) {
  SLUICE_ASSERT(!waiter->linked);
  waiter->prev = tail_;
  waiter->next = nullptr;
  if (tail_ != nullptr) tail_->next = waiter; else head_ = waiter;
  tail_ = waiter;
  waiter->linked = true;
}

void WaitQueue::unlink(Waiter* waiter) {
  SLUICE_ASSERT(waiter->linked);
  if (waiter->prev != nullptr) waiter->prev->next = waiter->next; else head_ = waiter->next;
  if (waiter->next != nullptr) waiter->next->prev = waiter->prev; else tail_ = waiter->prev;
  waiter->prev = waiter->next = nullptr;
  waiter->linked = false;
}

void WaitQueue::wait() {
  Waiter waiter{.fiber = scheduler_->current_};
  SLUICE_ASSERT_MSG(waiter.fiber != nullptr, "a blocking call outside any fiber");
  link(&waiter);
  struct Unlink {
    WaitQueue* queue;
    Waiter* waiter;
    ~Unlink() { if (waiter->linked) queue->unlink(waiter); }
  } unlink_on_exit{this, &waiter};
  scheduler_->park();
  SLUICE_ASSERT(waiter.notified);
}

bool WaitQueue::wait_until(Instant deadline) {
  Waiter waiter{.fiber = scheduler_->current_};
  SLUICE_ASSERT_MSG(waiter.fiber != nullptr, "a blocking call outside any fiber");
  Clock& clock = scheduler_->clock();
  if (clock.now() >= deadline) return false;
  link(&waiter);
  const TimerId timer = clock.add_timer(deadline, [this, &waiter] {
    if (!waiter.linked) return;
    unlink(&waiter);
    scheduler_->unpark(waiter.fiber);
  });
  struct Cleanup {
    WaitQueue* queue;
    Waiter* waiter;
    Clock* clock;
    TimerId timer;
    ~Cleanup() {
      if (waiter->linked) queue->unlink(waiter);
      clock->cancel_timer(timer);
    }
  } cleanup{this, &waiter, &clock, timer};
  scheduler_->park();
  return waiter.notified;
}

bool WaitQueue::wait_for(Duration timeout) { return wait_until(scheduler_->clock().now() + timeout); }

bool WaitQueue::notify_one() {
  Waiter* waiter = head_;
  if (waiter == nullptr) return false;
  unlink(waiter);
  waiter->notified = true;
  scheduler_->unpark(waiter->fiber);
  return true;
}

size_t WaitQueue::notify_all() {
  size_t woken = 0;
  while (notify_one()) ++woken;
  return woken;
}

}  // namespace sluice
