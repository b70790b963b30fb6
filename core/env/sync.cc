#include "core/env/sync.h"

namespace sluice {

void Event::set() {
  set_ = true;
  waiters_.notify_all();
}

void Event::wait() {
  while (!set_) waiters_.wait();
}

bool Event::wait_until(Instant deadline) {
  while (!set_) {
    if (!waiters_.wait_until(deadline)) return set_;
  }
  return true;
}

bool Event::wait_for(Duration timeout) {
  return wait_until(waiters_.scheduler().clock().now() + timeout);
}

void Mutex::lock() {
  // No hand-off: a woken waiter competes again. A hand-off would leave the mutex locked forever when the
  // fiber it was handed to is killed before it runs (a node crash unwinds every fiber at its wait point).
  while (locked_) waiters_.wait();
  locked_ = true;
}

bool Mutex::try_lock() {
  if (locked_) return false;
  locked_ = true;
  return true;
}

void Mutex::unlock() {
  SLUICE_ASSERT_MSG(locked_, "unlock of a mutex that is not locked");
  locked_ = false;
  waiters_.notify_one();
}

namespace {

// Re-locks the mutex as a condition wait returns, so that the caller's LockGuard finds it held. While a killed
// fiber unwinds it must not block: it takes the mutex only if free (its node's other fibers are dying too).
struct RelockOnExit {
  Mutex& mutex;
  ~RelockOnExit() {
    if (std::uncaught_exceptions() == 0) {
      mutex.lock();
    } else {
      (void)mutex.try_lock();
    }
  }
};

}  // namespace

void CondVar::wait(Mutex& mutex) {
  SLUICE_ASSERT(mutex.locked());
  mutex.unlock();
  RelockOnExit relock{mutex};
  waiters_.wait();
}

bool CondVar::wait_until(Mutex& mutex, Instant deadline) {
  SLUICE_ASSERT(mutex.locked());
  mutex.unlock();
  RelockOnExit relock{mutex};
  return waiters_.wait_until(deadline);
}

std::optional<size_t> when_any(Scheduler& scheduler, std::vector<std::function<void()>> tasks,
                               std::optional<Instant> deadline) {
  SLUICE_ASSERT(!tasks.empty());
  SLUICE_ASSERT(scheduler.in_fiber());
  // Shared with the task fibers, which may outlive this call.
  struct State {
    explicit State(Scheduler& s) : done(s) {}
    std::optional<size_t> winner;
    Event done;
  };
  auto state = std::make_shared<State>(scheduler);
  for (size_t i = 0; i < tasks.size(); ++i) {
    scheduler.spawn("when_any." + std::to_string(i), [state, i, task = std::move(tasks[i])] {
      task();
      if (!state->winner) {
        state->winner = i;
        state->done.set();
      }
    });
  }
  if (deadline) {
    state->done.wait_until(*deadline);
  } else {
    state->done.wait();
  }
  return state->winner;
}

}  // namespace sluice
