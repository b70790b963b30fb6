// Long polls wait for appends to the partitions they read, as Kafka's DelayedFetch purgatory is keyed by partition.
// A fetch parked on one broker-wide queue was woken by every append to any partition and read all of its
// partitions again (1.7 extra rounds per fetch request in bench/sim_1k_produce.toml).
//
// An AppendSignal belongs to whatever notifies: each Partition (appends, high watermark moves, leadership changes,
// its removal) and the PartitionManager (broker-wide events: a stopping broker). An AppendWatch lives on the
// waiting fiber's stack, linked into the signals it watches, and unlinks itself however it leaves (woken, timed
// out, or unwound by a kill), as WaitQueue's waiters do.
//
// Fibers: every call from the node's fibers or its driver's callbacks; only wait_until suspends.
#pragma once

#include <cstddef>
#include <vector>

#include "core/env/clock.h"
#include "core/env/scheduler.h"

namespace sluice::cluster {

class AppendWatch;

class AppendSignal {
 public:
  AppendSignal() = default;
  ~AppendSignal();  // REQUIRES: no watch linked (a watcher keeps what it watches alive)
  AppendSignal(const AppendSignal&) = delete;
  AppendSignal& operator=(const AppendSignal&) = delete;

  // Wakes every watch linked here. Never suspends.
  void notify_all();
  bool empty() const { return head_ == nullptr; }

 private:
  friend class AppendWatch;
  struct Link {
    AppendWatch* watch = nullptr;
    AppendSignal* signal = nullptr;
    Link* prev = nullptr;
    Link* next = nullptr;
  };

  Link* head_ = nullptr;
  Link* tail_ = nullptr;
};

class AppendWatch {
 public:
  // `signals`: at most this many watch() calls follow (their links never move once linked).
  AppendWatch(Scheduler& scheduler, size_t signals);
  ~AppendWatch();
  AppendWatch(const AppendWatch&) = delete;
  AppendWatch& operator=(const AppendWatch&) = delete;

  // Adds `signal` to what wakes this watch. It must outlive the watch.
  void watch(AppendSignal& signal);
  // Parks until a watched signal notifies (true) or `deadline` passes (false). A notify before the call is not
  // remembered: watch, check the condition, then wait, without suspending in between.
  bool wait_until(Instant deadline) { return woken_.wait_until(deadline); }

 private:
  friend class AppendSignal;

  WaitQueue woken_;
  std::vector<AppendSignal::Link> links_;
};

}  // namespace sluice::cluster
