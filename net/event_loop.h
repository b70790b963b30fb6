// EventLoop: the real world's driver. One thread runs the node's Scheduler (FIFO), an epoll set, the timers
// and a small pool of worker threads for blocking system calls (fsync, open, rename, getaddrinfo).
//
// One iteration: run the fibers ready at its start (fibers readied meanwhile wait for the next one); wait in
// epoll_wait until the next timer is due (at once if a fiber is ready); dispatch fd readiness to the watch
// callbacks (they wake fibers through WaitQueue notifies), among them the eventfd that delivers post()ed
// tasks and worker completions; fire the expired timers. Callbacks of every kind (fd watches, timers, posted
// tasks, signals) run on the loop thread, outside fibers, and must not block.
//
// Threads: everything here belongs to the thread that constructed the loop, except post() and stop(), which
// any thread may call. Worker threads only run the blocking function and post its completion back. The loop is
// its scheduler's Offloader: Scheduler::run_off_loop (big batch checks, reads that miss the page cache) runs on
// the same workers, as run_blocking does.
//
// Stopping: run_until(done) returns as soon as done() holds (it is checked after every fiber step), or after
// the iteration in which stop() was called (from any thread, or by the default signal handler). Either way
// the live fibers stay parked; RealEnv::run unwinds them (Scheduler::kill_all) before it returns, and so does
// the destructor. SIGINT/SIGTERM reach the loop only after handle_signals().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/clock.h"
#include "core/env/scheduler.h"
#include "net/real_clock.h"

namespace sluice {

class EventLoop : private Offloader {
 public:
  // Counters for tests and diagnostics. Updated on the loop thread only.
  struct Stats {
    uint64_t iterations = 0;          // epoll_wait rounds
    uint64_t fd_events = 0;           // readiness events dispatched to watches
    uint64_t timers_fired = 0;
    uint64_t posted_run = 0;          // tasks run from post(), worker completions included
    uint64_t blocking_started = 0;    // run_blocking calls handed to a worker
    uint64_t blocking_completed = 0;  // ... whose completion reached the loop
    uint64_t blocking_inline = 0;     // run_blocking calls run inline (no loop running, no fiber)
    uint64_t signals = 0;
    // How long one fiber step held the loop (it runs until the fiber parks): every other connection, heartbeats
    // included, waits that long. The figure slow work off the loop is judged by (bench/offload_bench.cc).
    Duration longest_step{0};
    uint64_t steps_over_10ms = 0;
  };

  using ReadyCallback = std::function<void(uint32_t epoll_events)>;
  using SignalHandler = std::function<void(int signal_number)>;

  // A persisted log's sync round runs up to three fdatasyncs at once (.log, .index, .timeindex); one more worker
  // keeps an open or a rename from queueing behind them. Blocked workers cost no CPU.
  static constexpr size_t kWorkerThreads = 4;

  // Creates the epoll set, the wake-up eventfd and the worker threads. Aborts if the OS refuses (no fds).
  EventLoop();
  // Unwinds the fibers still alive (after the workers finished the calls they were running: queued calls are
  // dropped, see settle), then joins the workers, restores the signal mask and closes the loop's fds.
  ~EventLoop() override;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Scheduler& scheduler() { return scheduler_; }
  RealClock& clock() { return clock_; }
  Instant now() const { return clock_.now(); }
  const Stats& stats() const { return stats_; }
  // The longest fiber step since the last call (or the start), and a new span from now. On the loop thread.
  Duration take_longest_step() {
    assert_loop_thread();
    return std::exchange(longest_step_since_take_, Duration::zero());
  }
  // Also times each step on the loop thread's CPU clock (two system calls a step, so off unless asked): a step that
  // held the loop long in wall time but briefly on the CPU waited for a core, not for work of the node's.
  void measure_step_cpu(bool on) { measure_step_cpu_ = on; }
  Duration take_longest_step_cpu() {
    assert_loop_thread();
    return std::exchange(longest_step_cpu_since_take_, Duration::zero());
  }

  // ---- Driving (loop thread, outside fibers) ----

  // Runs iterations until `done` (checked before the first and after every fiber step; may be empty) holds →
  // true, or until stop() → false. A stop() is consumed by the run it ends. REQUIRES: not already running.
  bool run_until(const std::function<bool()>& done);
  // Makes the current (or next) run_until return after its iteration. Any thread; async-signal-unsafe.
  void stop();
  bool running() const { return running_; }

  // ---- Timers (loop thread). Callbacks run outside fibers, in deadline order, ties by id. ----
  TimerId add_timer(Instant at, std::function<void()> callback);
  bool cancel_timer(TimerId id);  // true when it was pending: its callback will not run
  size_t pending_timers() const { return timers_.size(); }

  // ---- File descriptors (loop thread) ----

  // Adds `fd` to the epoll set with `events` (EPOLLET is the caller's choice). `callback` runs on readiness
  // until unwatch(). Returns a token; errors are the OS's (ENOMEM, the max_user_watches limit).
  Result<uint64_t> watch(int fd, uint32_t events, ReadyCallback callback);
  // Removes the watch. Call before closing the fd. Events already fetched for it are dropped.
  void unwatch(uint64_t token);

  // ---- Threads ----

  // Runs `task` on the loop thread, outside fibers, at the next iteration. Callable from any thread.
  void post(std::function<void()> task);

  // Runs `fn` on a worker thread and parks the calling fiber until it returns; returns its result. The loop
  // keeps running other fibers meanwhile. A fiber is unwound (Scheduler::kill_all) only once the calls running
  // on the workers have returned and the queued ones were dropped (settle), so `fn` may borrow from the fiber's
  // stack. Called outside a fiber while the loop is not running (setup code), `fn` runs inline.
  template <typename F>
  auto run_blocking(F fn) -> std::invoke_result_t<F&> {
    using T = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<T>) {
      run_blocking_impl(std::function<void()>(std::move(fn)));
    } else {
      // The result lives on the heap, owned by the task, so an unwound fiber leaves nothing dangling.
      auto result = std::make_shared<std::optional<T>>();
      run_blocking_impl([result, fn = std::move(fn)]() mutable { result->emplace(fn()); });
      return std::move(**result);
    }
  }

  // ---- Signals ----

  // Blocks SIGINT and SIGTERM on this thread and receives them through a signalfd; `handler` runs on the loop
  // thread, outside fibers. Without a handler the default is stop(). Workers block all signals from birth, so
  // process-directed signals land here. The old mask is restored by the destructor.
  Status handle_signals(SignalHandler handler = {});

 private:
  struct Watch {
    int fd;
    ReadyCallback callback;
  };
  struct Job {
    std::function<void()> fn;
    std::function<void()> completion;  // posted to the loop once fn returned
  };

  void run_blocking_impl(std::function<void()> fn);
  // Offloader, for Scheduler::run_off_loop.
  void run_parked(std::function<void()> work) override { run_blocking_impl(std::move(work)); }
  void settle() override;
  void assert_loop_thread() const;
  int next_timeout_ms() const;
  void poll_once();
  void note_step(Duration held, Duration cpu);  // Stats::longest_step and the spans the takes read
  void fire_timers();
  void drain_posted();
  void on_signal_fd();
  void worker_main();
  void start_workers();
  void stop_workers();

  const std::thread::id owner_thread_;
  RealClock clock_;
  Stats stats_;
  Duration longest_step_since_take_{0};
  bool measure_step_cpu_ = false;
  Duration longest_step_cpu_since_take_{0};
  bool running_ = false;
  std::atomic<bool> stop_requested_{false};

  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: post() and stop() wake epoll_wait
  uint64_t wake_token_ = 0;
  uint64_t next_watch_token_ = 1;
  std::unordered_map<uint64_t, std::shared_ptr<Watch>> watches_;

  // An ordered map serves as the min-heap keyed by (deadline, id), with removal for cancel.
  std::map<std::pair<Instant, TimerId>, std::function<void()>> timers_;
  std::unordered_map<TimerId, Instant> timer_deadlines_;
  TimerId next_timer_id_ = 1;
  std::vector<std::pair<Instant, TimerId>> due_;  // scratch for fire_timers

  // Shared with other threads, under mutex_.
  std::mutex mutex_;
  std::condition_variable jobs_ready_;
  std::condition_variable job_returned_;  // for settle()
  std::deque<Job> jobs_;
  size_t running_jobs_ = 0;  // taken by a worker, not returned yet
  std::vector<std::function<void()>> posted_;
  bool workers_stopping_ = false;
  std::vector<std::thread> workers_;

  int signal_fd_ = -1;
  uint64_t signal_token_ = 0;
  SignalHandler signal_handler_;
  sigset_t old_signal_mask_{};

  // Last member: destroyed first, so fibers unwinding in its destructor still find the loop whole.
  Scheduler scheduler_;
};

}  // namespace sluice
