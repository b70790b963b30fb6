// What PartitionLog's source files share beyond partition_log.h: the housekeeping fiber's state and the append
// lock's guard. Included only by partition_log*.cc.
#pragma once

#include "core/base/assert.h"
#include "core/storage/partition_log.h"

namespace sluice::storage {

// Shared by the log and its housekeeping fiber, which may outlive it by one wake-up.
struct PartitionLog::Background {
  explicit Background(Scheduler& scheduler) : wake(scheduler) {}
  PartitionLog* log = nullptr;  // null once the log is gone
  bool stop = false;
  bool busy = false;  // inside run_housekeeping: the log must not be destroyed now
  WaitQueue wake;
  FiberRef fiber;
};

// Holds the append lock for a scope. Waiters re-check the flag (no hand-off), so a killed waiter leaves nothing
// locked behind it.
class PartitionLog::AppendGuard {
 public:
  explicit AppendGuard(PartitionLog& log) : log_(log) {
    while (log_.append_locked_) log_.append_waiters_.wait();
    log_.append_locked_ = true;
  }
  ~AppendGuard() {
    SLUICE_ASSERT(log_.append_locked_);
    log_.append_locked_ = false;
    log_.append_waiters_.notify_one();
  }
  AppendGuard(const AppendGuard&) = delete;
  AppendGuard& operator=(const AppendGuard&) = delete;

 private:
  PartitionLog& log_;
};

}  // namespace sluice::storage
