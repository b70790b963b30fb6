// PositionHints: where a segment's recently served reads ended, as (next offset -> file position). A consumer's
// next fetch asks for the offset right after the last batch it was served; the hint answers that batch's position
// without walking batch headers from the sparse index entry (about 16 header reads a fetch at 1,000 small
// produce requests a second).
//
// A hint is a batch boundary: the batch before `position` ends at `offset - 1`, and the first batch at or after
// `position` holds `offset` or later (offsets may skip after compaction). Appends never move such a boundary;
// anything that cuts or rewrites the .log does, and then forgets every hint (Segment::cut_file_to, reset_state).
// The generation lets a reader that suspended across such a cut drop the hint it was about to remember.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/base/assert.h"

namespace sluice::storage {

class PositionHints {
 public:
  // A consumer, a few group members, the final reader: more than that evicts round robin.
  static constexpr size_t kCapacity = 8;

  // The position of the first batch holding `offset` or later, when a read ended right before it.
  std::optional<uint64_t> find(int64_t offset) const {
    for (size_t i = 0; i < count_; ++i) {
      if (hints_[i].offset == offset) return hints_[i].position;
    }
    return std::nullopt;
  }

  // A read ended at `position` after a batch whose last offset is `offset - 1`. False when the boundary
  // contradicts one remembered before: boundaries of one unchanged file have positions that grow with offsets, one
  // position per offset, so one of the two reads was damaged (a base offset lies outside the batch CRC). The caller
  // forgets every hint and refuses the read.
  [[nodiscard]] bool remember(int64_t offset, uint64_t position) {
    SLUICE_ASSERT(offset > 0);
    SLUICE_ASSERT(position > 0);  // a batch ends before it
    for (size_t i = 0; i < count_; ++i) {
      const Hint& hint = hints_[i];
      if ((hint.offset < offset) != (hint.position < position)) return false;
      if ((hint.offset == offset) != (hint.position == position)) return false;
      if (hint.offset == offset) return true;
    }
    if (count_ < kCapacity) {
      hints_[count_++] = Hint{offset, position};
      return true;
    }
    hints_[next_victim_] = Hint{offset, position};
    next_victim_ = (next_victim_ + 1) % kCapacity;
    return true;
  }

  // Positions moved: a truncation, a rollback or a rescan.
  void forget_all() {
    count_ = 0;
    next_victim_ = 0;
    ++generation_;
  }

  uint64_t generation() const { return generation_; }
  size_t size() const { return count_; }

 private:
  struct Hint {
    int64_t offset = 0;
    uint64_t position = 0;
  };
  std::array<Hint, kCapacity> hints_{};
  size_t count_ = 0;
  size_t next_victim_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace sluice::storage
