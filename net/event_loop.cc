#include "net/event_loop.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <exception>
#include <string>

#include "core/base/assert.h"
#include "core/env/sync.h"

namespace sluice {
namespace {

constexpr int kMaxEventsPerWait = 64;

// Aborts on a failure that leaves the loop unusable (no fds left at start-up): there is no caller to tell.
void check_os(bool ok, const char* what) {
  if (!ok) assert_fail(what, std::strerror(errno), __FILE__, __LINE__);
}

}  // namespace

EventLoop::EventLoop()
    : owner_thread_(std::this_thread::get_id()), clock_(*this), scheduler_(clock_, /*shuffle=*/nullptr) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  check_os(epoll_fd_ >= 0, "epoll_create1");
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  check_os(wake_fd_ >= 0, "eventfd");
  Result<uint64_t> token = watch(wake_fd_, EPOLLIN, [this](uint32_t) { drain_posted(); });
  SLUICE_ASSERT_MSG(token.ok(), "cannot watch the loop's eventfd");
  wake_token_ = *token;
  start_workers();
  scheduler_.set_offloader(this);
}

EventLoop::~EventLoop() {
  assert_loop_thread();
  SLUICE_ASSERT(!running_);
  // Fibers first: their destructors close streams and cancel timers, which needs the rest of the loop. kill_all
  // settles the workers before it unwinds anything: a call still running may be reading into a parked fiber's
  // buffer, which the unwind frees.
  scheduler_.kill_all();
  scheduler_.set_offloader(nullptr);
  stop_workers();
  if (signal_fd_ >= 0) {
    unwatch(signal_token_);
    ::close(signal_fd_);
    ::pthread_sigmask(SIG_SETMASK, &old_signal_mask_, nullptr);
  }
  unwatch(wake_token_);
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void EventLoop::assert_loop_thread() const {
  SLUICE_ASSERT_MSG(std::this_thread::get_id() == owner_thread_, "a loop call from a thread not the loop's");
}

// ---- Driving ----

namespace {

Duration thread_cpu_time() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

bool EventLoop::run_until(const std::function<bool()>& done) {
  assert_loop_thread();
  SLUICE_ASSERT_MSG(!running_, "run_until is not reentrant");
  SLUICE_ASSERT(!scheduler_.in_fiber());
  running_ = true;
  bool finished = false;
  while (true) {
    // done() is checked after every fiber step, so nothing runs once it holds (RealEnv's main fiber returned
    // and the fibers that borrowed from its stack must not run again).
    finished = done && done();
    // One round runs the fibers ready at its start; fibers readied meanwhile (yielders included) wait for the
    // next round, after I/O and timers, so a fiber that never parks cannot starve them.
    for (size_t round = scheduler_.ready_count(); !finished && round > 0; --round) {
      const Instant began = now();
      const Duration cpu_began = measure_step_cpu_ ? thread_cpu_time() : Duration::zero();
      const bool ran = scheduler_.run_one();
      note_step(now() - began, measure_step_cpu_ ? thread_cpu_time() - cpu_began : Duration::zero());
      if (!ran) break;
      finished = done && done();
    }
    if (finished || stop_requested_.exchange(false)) break;
    poll_once();
  }
  running_ = false;
  return finished;
}

void EventLoop::note_step(Duration held, Duration cpu) {
  stats_.longest_step = std::max(stats_.longest_step, held);
  longest_step_since_take_ = std::max(longest_step_since_take_, held);
  longest_step_cpu_since_take_ = std::max(longest_step_cpu_since_take_, cpu);
  if (held >= std::chrono::milliseconds(10)) ++stats_.steps_over_10ms;
}

void EventLoop::stop() {
  stop_requested_.store(true);
  const uint64_t one = 1;
  // A full counter (never in practice) still leaves the fd readable, which is all the wake-up needs.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

int EventLoop::next_timeout_ms() const {
  if (scheduler_.has_ready() || stop_requested_.load()) return 0;
  if (timers_.empty()) return -1;
  const Duration wait = timers_.begin()->first.first - now();
  if (wait <= Duration::zero()) return 0;
  // Round up: waking early would only spin until the deadline.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

void EventLoop::poll_once() {
  epoll_event events[kMaxEventsPerWait];
  int n = ::epoll_wait(epoll_fd_, events, kMaxEventsPerWait, next_timeout_ms());
  if (n < 0) {
    SLUICE_ASSERT_MSG(errno == EINTR, "epoll_wait failed");
    n = 0;
  }
  for (int i = 0; i < n; ++i) {
    auto it = watches_.find(events[i].data.u64);
    if (it == watches_.end()) continue;  // unwatched by an earlier callback of this batch
    // Held while it runs: the callback may unwatch itself.
    std::shared_ptr<Watch> watch = it->second;
    ++stats_.fd_events;
    watch->callback(events[i].events);
  }
  fire_timers();
  ++stats_.iterations;
}

// ---- Timers ----

TimerId EventLoop::add_timer(Instant at, std::function<void()> callback) {
  assert_loop_thread();
  SLUICE_ASSERT(callback != nullptr);
  const TimerId id = next_timer_id_++;
  const auto [it, inserted] = timers_.emplace(std::make_pair(at, id), std::move(callback));
  SLUICE_ASSERT(inserted);
  timer_deadlines_.emplace(id, at);
  SLUICE_ASSERT(timers_.size() == timer_deadlines_.size());
  return id;
}

bool EventLoop::cancel_timer(TimerId id) {
  assert_loop_thread();
  auto it = timer_deadlines_.find(id);
  if (it == timer_deadlines_.end()) return false;
  const size_t erased = timers_.erase(std::make_pair(it->second, id));
  SLUICE_ASSERT(erased == 1);
  timer_deadlines_.erase(it);
  return true;
}

void EventLoop::fire_timers() {
  const Instant now = this->now();
  // Collect first: a timer added by a callback waits for the next iteration, so a callback that re-arms at
  // `now` cannot keep the loop here.
  due_.clear();
  for (auto it = timers_.begin(); it != timers_.end() && it->first.first <= now; ++it) {
    due_.push_back(it->first);
  }
  for (const auto& key : due_) {
    auto it = timers_.find(key);
    if (it == timers_.end()) continue;  // cancelled by an earlier callback
    std::function<void()> callback = std::move(it->second);
    timers_.erase(it);
    timer_deadlines_.erase(key.second);
    ++stats_.timers_fired;
    callback();
  }
}

// ---- File descriptors ----

Result<uint64_t> EventLoop::watch(int fd, uint32_t events, ReadyCallback callback) {
  assert_loop_thread();
  SLUICE_ASSERT(fd >= 0);
  SLUICE_ASSERT(callback != nullptr);
  const uint64_t token = next_watch_token_++;
  epoll_event event{};
  event.events = events;
  event.data.u64 = token;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    const int err = errno;
    return Status(Code::kIoError, "epoll_ctl add fd " + std::to_string(fd) + ": " + std::strerror(err));
  }
  watches_.emplace(token, std::make_shared<Watch>(Watch{fd, std::move(callback)}));
  return token;
}

void EventLoop::unwatch(uint64_t token) {
  assert_loop_thread();
  auto it = watches_.find(token);
  SLUICE_ASSERT_MSG(it != watches_.end(), "unwatch of an unknown token");
  // The fd is still open (callers unwatch before closing), so this cannot fail but for a bug.
  const int rc = ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->fd, nullptr);
  SLUICE_ASSERT_MSG(rc == 0, "epoll_ctl del");
  watches_.erase(it);
}

// ---- Threads ----

void EventLoop::post(std::function<void()> task) {
  SLUICE_ASSERT(task != nullptr);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    posted_.push_back(std::move(task));
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void EventLoop::drain_posted() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof(count));
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks.swap(posted_);
  }
  for (std::function<void()>& task : tasks) {
    ++stats_.posted_run;
    task();
  }
}

void EventLoop::run_blocking_impl(std::function<void()> fn) {
  assert_loop_thread();
  if (!scheduler_.in_fiber()) {
    SLUICE_ASSERT_MSG(!running_, "run_blocking from a loop callback would stall the loop");
    ++stats_.blocking_inline;
    fn();
    return;
  }
  // Shared by the fiber and the completion: whichever lets go last frees it, on the loop thread.
  struct Call {
    explicit Call(Scheduler& scheduler) : finished(scheduler) {}
    Event finished;
  };
  auto call = std::make_shared<Call>(scheduler_);
  ++stats_.blocking_started;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SLUICE_ASSERT(!workers_stopping_);
    jobs_.push_back(Job{std::move(fn), [this, call] {
                          ++stats_.blocking_completed;
                          call->finished.set();
                        }});
  }
  jobs_ready_.notify_one();
  call->finished.wait();
}

void EventLoop::start_workers() {
  // Workers are born with every signal blocked, so SIGINT/SIGTERM can only land on the loop's thread.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &previous);
  for (size_t i = 0; i < kWorkerThreads; ++i) workers_.emplace_back([this] { worker_main(); });
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void EventLoop::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    workers_stopping_ = true;
  }
  jobs_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  // Queued calls never ran and posted completions never will; their fibers are gone already.
  jobs_.clear();
  posted_.clear();
}

void EventLoop::settle() {
  assert_loop_thread();
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_.clear();  // not started: nothing borrowed yet; their fibers are about to be unwound
  job_returned_.wait(lock, [this] { return running_jobs_ == 0; });
}

void EventLoop::worker_main() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      jobs_ready_.wait(lock, [this] { return workers_stopping_ || !jobs_.empty(); });
      if (workers_stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_jobs_;
    }
    try {
      job.fn();
    } catch (const std::exception& e) {
      assert_fail("a run_blocking function threw", e.what(), __FILE__, __LINE__);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --running_jobs_;
    }
    job_returned_.notify_all();
    // The function's captures travel back too: they are released on the loop thread, with the completion.
    post([fn = std::move(job.fn), completion = std::move(job.completion)]() mutable {
      fn = nullptr;
      completion();
    });
  }
}

// ---- Signals ----

Status EventLoop::handle_signals(SignalHandler handler) {
  assert_loop_thread();
  SLUICE_ASSERT_MSG(signal_fd_ < 0, "handle_signals called twice");
  signal_handler_ = std::move(handler);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (::pthread_sigmask(SIG_BLOCK, &set, &old_signal_mask_) != 0) return io_error("pthread_sigmask failed");
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) {
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old_signal_mask_, nullptr);
    return io_error(std::string("signalfd: ") + std::strerror(err));
  }
  Result<uint64_t> token = watch(signal_fd_, EPOLLIN, [this](uint32_t) { on_signal_fd(); });
  if (!token.ok()) {
    ::close(signal_fd_);
    signal_fd_ = -1;
    ::pthread_sigmask(SIG_SETMASK, &old_signal_mask_, nullptr);
    return token.status();
  }
  signal_token_ = *token;
  return Status();
}

void EventLoop::on_signal_fd() {
  signalfd_siginfo info{};
  while (::read(signal_fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    ++stats_.signals;
    if (signal_handler_) {
      signal_handler_(static_cast<int>(info.ssi_signo));
    } else {
      stop();
    }
  }
}

}  // namespace sluice
