// KeyOffsetMap: the cleaner's bounded map from a record key to the latest offset holding it (Kafka's
// SkimpyOffsetMap). Open addressing over a fixed slot array sized from a memory budget: each slot is a 16-byte
// key digest plus an 8-byte offset. The map reports itself full at `load_factor` so the cleaner can stop mid-
// segment and clean only up to the last mapped offset (a partial pass; storage-semantics.md §3.2).
//
// Digests are two independent 64-bit hashes of the key. Two keys with the same digest would be confused, an
// accepted risk as in Kafka (MD5) — 2^-128 per pair, not a correctness bet for any realistic key count.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/base/bytes.h"

namespace sluice::storage {

class KeyOffsetMap {
 public:
  static constexpr uint64_t kSlotBytes = 24;

  // REQUIRES: memory_bytes / 24 >= 1 slot and 0 < load_factor <= 1.
  KeyOffsetMap(uint64_t memory_bytes, double load_factor);

  // Records `offset` as the latest for `key` (a later put of the same key replaces it). Returns false, and
  // changes nothing, when the map is full and `key` is new.
  bool put(ByteView key, int64_t offset);
  // The latest offset recorded for `key`.
  std::optional<int64_t> get(ByteView key) const;

  void clear();
  uint64_t size() const { return size_; }
  uint64_t slots() const { return slots_.size(); }
  // Keys it accepts before put() refuses new ones: slots × load factor.
  uint64_t capacity() const { return capacity_; }
  bool full() const { return size_ >= capacity_; }
  // The largest offset put since the last clear (-1 when empty): where a partial pass stops.
  int64_t latest_offset() const { return latest_offset_; }
  // Whether the key's digest is even: how the compaction-drops-latest mutation picks its keys (about half).
  static bool digest_even(ByteView key);
  // Probes made by put/get, for tests of the hash's spread.
  uint64_t probes() const { return probes_; }

 private:
  struct Slot {
    uint64_t digest_high = 0;
    uint64_t digest_low = 0;
    int64_t offset = -1;  // -1: empty
  };
  static_assert(sizeof(Slot) == kSlotBytes);

  size_t find(uint64_t high, uint64_t low) const;  // the slot holding the digest, or the empty one to use

  std::vector<Slot> slots_;
  uint64_t capacity_;
  uint64_t size_ = 0;
  int64_t latest_offset_ = -1;
  mutable uint64_t probes_ = 0;
};

}  // namespace sluice::storage
