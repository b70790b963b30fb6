// EventHeap: the order of the simulator's pending events, earliest (time, sequence) first. A 4-ary min-heap of
// 16-byte entries: half the levels of a binary heap, and a node's four children share one cache line, so a pop
// costs fewer of the unpredictable compares and cache misses that made std::pop_heap 2-3 % of a run's wall time.
// Sequences are unique, so any correct heap pops the same order: the choice cannot change a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/assert.h"
#include "core/env/clock.h"

namespace sluice {

class EventHeap {
 public:
  static constexpr int kSlotBits = 24;
  static constexpr uint64_t kMaxSequence = (uint64_t{1} << (64 - kSlotBits)) - 1;

  struct Entry {
    Instant at;
    uint64_t order = 0;  // sequence << kSlotBits | slot: ordered as the sequences are, which are unique

    static Entry make(Instant at, uint64_t sequence, uint32_t slot) {
      SLUICE_ASSERT(sequence <= kMaxSequence);
      SLUICE_ASSERT(slot < (uint32_t{1} << kSlotBits));
      return Entry{at, (sequence << kSlotBits) | slot};
    }
    uint64_t sequence() const { return order >> kSlotBits; }
    uint32_t slot() const { return static_cast<uint32_t>(order & ((uint64_t{1} << kSlotBits) - 1)); }
    // Earlier time first; at one time, the earlier sequence.
    friend bool operator<(const Entry& a, const Entry& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; }
  };

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // REQUIRES: not empty.
  const Entry& top() const {
    SLUICE_ASSERT(!entries_.empty());
    return entries_.front();
  }

  void push(Entry entry) {
    entries_.push_back(entry);
    sift_up(entries_.size() - 1, entry);
  }

  // REQUIRES: not empty.
  void pop() {
    SLUICE_ASSERT(!entries_.empty());
    const Entry last = entries_.back();
    entries_.pop_back();
    if (!entries_.empty()) sift_down(0, last);
  }

  // Drops the entries `drop` says to, then restores the order (bottom-up, in linear time).
  template <typename Drop>
  void erase_if(Drop drop) {
    std::erase_if(entries_, drop);
    if (entries_.size() < 2) return;
    for (size_t i = (entries_.size() - 2) / kArity + 1; i-- > 0;) sift_down(i, entries_[i]);
  }

 private:
  static constexpr size_t kArity = 4;

  // Moves `entry` up from the hole at `hole` to where its parent is not after it.
  void sift_up(size_t hole, Entry entry) {
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!(entry < entries_[parent])) break;
      entries_[hole] = entries_[parent];
      hole = parent;
    }
    entries_[hole] = entry;
  }

  // Moves `entry` down from the hole at `hole` to where no child is before it.
  void sift_down(size_t hole, Entry entry) {
    const size_t n = entries_.size();
    Entry* const e = entries_.data();
    for (;;) {
      const size_t first = kArity * hole + 1;
      size_t least = first;
      if (first + kArity <= n) {
        // All four children (the usual case): least of each pair, then of the two, without a loop.
        const size_t left = e[first + 1] < e[first] ? first + 1 : first;
        const size_t right = e[first + 3] < e[first + 2] ? first + 3 : first + 2;
        least = e[right] < e[left] ? right : left;
      } else {
        if (first >= n) break;
        for (size_t child = first + 1; child < n; ++child) {
          if (e[child] < e[least]) least = child;
        }
      }
      if (!(e[least] < entry)) break;
      e[hole] = e[least];
      hole = least;
    }
    e[hole] = entry;
  }

  std::vector<Entry> entries_;
};

}  // namespace sluice
