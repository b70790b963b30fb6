// HardStateFile: a group's HardState (term, vote, incarnation), stored crash-safely in one small file with two
// fixed-size slots. A store writes the slot that does not hold the latest copy, then syncs, so a torn write can
// destroy at most the older copy; load takes the valid slot with the higher sequence number.
//
// Slot (little endian, kHardStateSlotBytes): [u32 crc32c of the rest][u64 sequence][u64 term][u64 voted_for]
// [u64 incarnation]. Slot 0 is at offset 0, slot 1 at kHardStateSlot1Offset: a different 4 KiB block, so one torn
// sector or block cannot reach both. An absent or empty file is the initial HardState; a non-empty file with no
// valid slot is refused (kCorruption): the node must not forget a vote it may have cast.
//
// Fail-stop, like FileRaftLog: after a failed write or sync every store() fails (fsyncgate).
//
// Single-threaded: one fiber owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/file_system.h"
#include "core/raft/types.h"

namespace sluice::raft {

inline constexpr size_t kHardStateSlotBytes = 4 + 8 * 4;
inline constexpr uint64_t kHardStateSlot1Offset = 4096;
static_assert(kHardStateSlotBytes <= kHardStateSlot1Offset);

class HardStateFile {
 public:
  // Opens or creates the file at `path` (its directory must exist) and loads it.
  static Result<HardStateFile> open(FileSystem& fs, const std::string& path);

  // The latest stored (or loaded) hard state.
  const HardState& loaded() const { return state_; }
  // The sequence number of that copy (0: none stored yet).
  uint64_t sequence() const { return sequence_; }
  // Writes `state` into the older slot and syncs; returns once it is durable.
  Status store(const HardState& state);
  const Status& status() const { return failure_; }

  // One slot's bytes (exposed for tests that damage a slot on purpose).
  static Bytes encode_slot(uint64_t sequence, const HardState& state);

 private:
  explicit HardStateFile(std::unique_ptr<File> file, std::string path)
      : file_(std::move(file)), path_(std::move(path)) {}
  Status load();

  std::unique_ptr<File> file_;
  std::string path_;
  HardState state_;
  uint64_t sequence_ = 0;
  int latest_slot_ = -1;  // -1 when neither slot holds a copy
  Status failure_;
};

}  // namespace sluice::raft
