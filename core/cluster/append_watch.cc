#include "core/cluster/append_watch.h"

#include "core/base/assert.h"

namespace sluice::cluster {

AppendSignal::~AppendSignal() { SLUICE_ASSERT_MSG(head_ == nullptr, "an AppendSignal destroyed while watched"); }

void AppendSignal::notify_all() {
  // notify_all only makes the waiting fiber ready: no link comes or goes during the walk.
  for (Link* link = head_; link != nullptr; link = link->next) link->watch->woken_.notify_all();
}

AppendWatch::AppendWatch(Scheduler& scheduler, size_t signals) : woken_(scheduler) { links_.reserve(signals); }

AppendWatch::~AppendWatch() {
  for (AppendSignal::Link& link : links_) {
    AppendSignal& signal = *link.signal;
    if (link.prev != nullptr) link.prev->next = link.next; else signal.head_ = link.next;
    if (link.next != nullptr) link.next->prev = link.prev; else signal.tail_ = link.prev;
  }
}

void AppendWatch::watch(AppendSignal& signal) {
  SLUICE_ASSERT_MSG(links_.size() < links_.capacity(), "more signals watched than the watch was made for");
  AppendSignal::Link& link = links_.emplace_back();
  link.watch = this;
  link.signal = &signal;
  link.prev = signal.tail_;
  if (signal.tail_ != nullptr) signal.tail_->next = &link; else signal.head_ = &link;
  signal.tail_ = &link;
}

}  // namespace sluice::cluster
