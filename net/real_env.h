// RealEnv: the real world's Env for one process: an EventLoop (with its RealClock and Scheduler), POSIX
// files, epoll sockets, a Random seeded from the OS and a Logger. All of it runs on the thread that built it.
//
//   RealEnv real("serve", LogLevel::kInfo);
//   int rc = real.run([](Env& env) { ... plain blocking code in the main fiber, may spawn more ... });
//
// run() returns when the main fiber returns, or earlier when the loop is stopped (RealEnv::stop,
// EventLoop::stop from any thread, or SIGINT/SIGTERM after loop().handle_signals() without a handler). No
// other fiber runs after that: the ones still alive are unwound (FiberKilled) before run() returns, so fibers
// may borrow from the main fiber's stack.
#pragma once

#include <functional>
#include <string>

#include "core/base/log.h"
#include "core/env/buggify.h"
#include "core/env/env.h"
#include "core/env/random.h"
#include "net/epoll_network.h"
#include "net/event_loop.h"
#include "net/posix_file_system.h"

namespace sluice {

class RealEnv {
 public:
  explicit RealEnv(std::string name = "sluice", LogLevel level = LogLevel::kInfo);
  // Unwinds any fiber still alive while the parts it may touch still exist.
  ~RealEnv();
  RealEnv(const RealEnv&) = delete;
  RealEnv& operator=(const RealEnv&) = delete;

  Env& env() { return env_; }
  EventLoop& loop() { return loop_; }
  Logger& log() { return logger_; }
  const Buggify& buggify() const { return buggify_; }

  // Spawns `main_fiber` as fiber "main" and runs the loop: 0 when the main fiber returned, 1 when the loop
  // was stopped first. May be called again after it returned. REQUIRES: on the thread that built this.
  int run(std::function<void(Env&)> main_fiber);
  // Ends the current run() after its iteration. Any thread.
  void stop() { loop_.stop(); }

 private:
  EventLoop loop_;
  PosixFileSystem fs_;
  EpollNetwork net_;
  Random random_;
  Logger logger_;
  Buggify buggify_;  // never enabled: BUGGIFY fires only in simulation
  Env env_;
};

}  // namespace sluice
