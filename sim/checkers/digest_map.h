// DigestMap: a hash map keyed by value digests, for the checkers' lookups of tens of thousands of records. Open
// addressing in one vector (linear probing, at most half full): no node allocated per entry as std::unordered_map
// and std::map do, and a lookup touches one slot or a few neighbours. Lookups and inserts only; never walked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/assert.h"

namespace sluice::sim {

template <typename V>
class DigestMap {
 public:
  explicit DigestMap(size_t expected = 0) { rehash(slots_for(expected)); }

  // Adds `digest` -> `value` unless the digest is there already. Returns its value and whether it was added.
  std::pair<V*, bool> try_emplace(uint64_t digest, V value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    Slot& slot = slots_[slot_of(digest)];
    if (slot.used) return {&slot.value, false};
    slot = Slot{digest, std::move(value), true};
    ++size_;
    return {&slot.value, true};
  }
  void insert_or_assign(uint64_t digest, V value) {
    auto [held, added] = try_emplace(digest, value);
    if (!added) *held = std::move(value);
  }
  const V* find(uint64_t digest) const {
    const Slot& slot = slots_[slot_of(digest)];
    return slot.used ? &slot.value : nullptr;
  }
  bool contains(uint64_t digest) const { return find(digest) != nullptr; }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t digest = 0;
    V value{};
    bool used = false;
  };

  static size_t slots_for(size_t expected) {
    size_t n = 16;
    while (n < 2 * expected) n *= 2;
    return n;
  }
  // The digest's slot, or the empty one where it would go. Digests of equal values are equal, and test values may
  // be small numbers: a multiply spreads them before the top bits pick the start.
  size_t slot_of(uint64_t digest) const {
    const size_t mask = slots_.size() - 1;
    size_t at = static_cast<size_t>((digest * 0x9e3779b97f4a7c15ULL) >> shift_);
    while (slots_[at].used && slots_[at].digest != digest) at = (at + 1) & mask;
    return at;
  }
  void rehash(size_t slots) {
    SLUICE_ASSERT(slots >= 16 && (slots & (slots - 1)) == 0);
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slots));
    shift_ = 64 - __builtin_ctzll(slots);
    for (Slot& slot : old) {
      if (slot.used) slots_[slot_of(slot.digest)] = std::move(slot);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace sluice::sim
