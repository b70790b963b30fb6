// Fiber synchronisation: Event, Mutex, CondVar, Channel<T>, and when_any with a deadline. All are built on
// WaitQueue (scheduler.h) and belong to one node's Scheduler; none is for use across nodes or threads.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/base/assert.h"
#include "core/env/scheduler.h"

namespace sluice {

// A level-triggered flag: wait() returns at once while set.
class Event {
 public:
  explicit Event(Scheduler& scheduler) : waiters_(scheduler) {}
  void set();
  void reset() { set_ = false; }
  bool is_set() const { return set_; }
  void wait();
  bool wait_until(Instant deadline);  // false on timeout
  bool wait_for(Duration timeout);

 private:
  bool set_ = false;
  WaitQueue waiters_;
};

// A fiber mutex. Waiters are woken in arrival order but compete with fibers that arrive meanwhile (no
// hand-off, so that killing a woken waiter cannot leave the mutex locked).
class Mutex {
 public:
  explicit Mutex(Scheduler& scheduler) : waiters_(scheduler) {}
  ~Mutex() { SLUICE_ASSERT(!locked_); }
  void lock();
  bool try_lock();
  void unlock();
  bool locked() const { return locked_; }

 private:
  bool locked_ = false;
  WaitQueue waiters_;
};

class LockGuard {
 public:
  explicit LockGuard(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~LockGuard() { mutex_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Mutex& mutex_;
};

class CondVar {
 public:
  explicit CondVar(Scheduler& scheduler) : waiters_(scheduler) {}
  // REQUIRES: mutex held by this fiber; it is held again on return.
  void wait(Mutex& mutex);
  bool wait_until(Mutex& mutex, Instant deadline);  // false on timeout
  template <typename Predicate>
  void wait(Mutex& mutex, Predicate ready) {
    while (!ready()) wait(mutex);
  }
  void notify_one() { waiters_.notify_one(); }
  void notify_all() { waiters_.notify_all(); }

 private:
  WaitQueue waiters_;
};

// A bounded multi-producer multi-consumer queue. send blocks while full; receive blocks while empty. After
// close(), sends fail and receives drain what is left, then return nullopt.
template <typename T>
class Channel {
 public:
  Channel(Scheduler& scheduler, size_t capacity)
      : capacity_(capacity), not_full_(scheduler), not_empty_(scheduler) {
    SLUICE_ASSERT(capacity > 0);
  }

  // False when the channel is closed (the value is dropped).
  bool send(T value) {
    while (!closed_ && items_.size() >= capacity_) not_full_.wait();
    if (closed_) return false;
    items_.push_back(std::move(value));
    not_empty_.notify_one();
    return true;
  }
  bool try_send(T value) {
    if (closed_ || items_.size() >= capacity_) return false;
    items_.push_back(std::move(value));
    not_empty_.notify_one();
    return true;
  }
  std::optional<T> receive() {
    while (items_.empty() && !closed_) not_empty_.wait();
    return pop();
  }
  // nullopt on timeout too; closed() tells the two apart.
  std::optional<T> receive_until(Instant deadline) {
    while (items_.empty() && !closed_) {
      if (!not_empty_.wait_until(deadline)) break;
    }
    return pop();
  }
  std::optional<T> try_receive() { return pop(); }
  void close() {
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }
  bool closed() const { return closed_; }
  size_t size() const { return items_.size(); }

 private:
  std::optional<T> pop() {
    if (items_.empty()) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return value;
  }

  size_t capacity_;
  bool closed_ = false;
  std::deque<T> items_;
  WaitQueue not_full_;
  WaitQueue not_empty_;
};

// Runs each task in its own fiber and returns the index of the first to finish, or nullopt when `deadline`
// passes first. The other tasks keep running: a caller that wants them stopped closes what they block on (a
// stream, a channel). REQUIRES: called from a fiber; at least one task.
std::optional<size_t> when_any(Scheduler& scheduler, std::vector<std::function<void()>> tasks,
                               std::optional<Instant> deadline = std::nullopt);

}  // namespace sluice
