#include "core/raft/hard_state_file.h"

#include <array>
#include <optional>
#include <utility>

#include "core/base/assert.h"
#include "core/base/crc32c.h"
#include "core/raft/little_endian.h"

namespace sluice::raft {

namespace {

constexpr std::array<uint64_t, 2> kSlotOffsets = {0, kHardStateSlot1Offset};

struct SlotCopy {
  uint64_t sequence = 0;
  HardState state;
};

// The copy in `bytes` (one slot as read), or nothing when it is short or its CRC fails.
std::optional<SlotCopy> decode_slot(ByteView bytes) {
  if (bytes.size() != kHardStateSlotBytes) return std::nullopt;
  if (crc32c(bytes.subspan(4)) != get_u32_le(bytes, 0)) return std::nullopt;
  SlotCopy copy;
  copy.sequence = get_u64_le(bytes, 4);
  copy.state.term = get_u64_le(bytes, 12);
  copy.state.voted_for = get_u64_le(bytes, 20);
  copy.state.incarnation = get_u64_le(bytes, 28);
  // Sequence 0 is never written: a zeroed slot whose CRC happens to match is not a copy.
  if (copy.sequence == 0) return std::nullopt;
  return copy;
}

}  // namespace

Bytes HardStateFile::encode_slot(uint64_t sequence, const HardState& state) {
  SLUICE_ASSERT(sequence > 0);
  Bytes out;
  put_u32_le(out, 0);  // the CRC, below
  put_u64_le(out, sequence);
  put_u64_le(out, state.term);
  put_u64_le(out, state.voted_for);
  put_u64_le(out, state.incarnation);
  SLUICE_ASSERT(out.size() == kHardStateSlotBytes);
  const uint32_t crc = crc32c(ByteView(out).subspan(4));
  for (int i = 0; i < 4; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (8 * i));
  return out;
}

Result<HardStateFile> HardStateFile::open(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kCreate));
  SLUICE_TRY(fs.sync_dir(parent_dir(path)));  // the name of a created file is durable only then
  HardStateFile hard_state_file(std::move(file), path);
  SLUICE_TRY(hard_state_file.load());
  return hard_state_file;
}

Status HardStateFile::load() {
  SLUICE_ASSERT(latest_slot_ == -1);
  SLUICE_ASSIGN_OR_RETURN(const uint64_t size, file_->size());
  if (size == 0) return Status();  // never stored: the initial hard state
  std::array<std::optional<SlotCopy>, 2> copies;
  // A slot that fails its CRC is read again before it is believed torn: a bad copy of the newer slot would
  // otherwise bring back the older term and vote (and a vote given twice in one term).
  constexpr int kReads = 4;
  for (size_t slot = 0; slot < kSlotOffsets.size(); ++slot) {
    for (int read = 1; read <= kReads && !copies[slot].has_value(); ++read) {
      Bytes bytes(kHardStateSlotBytes);
      SLUICE_ASSIGN_OR_RETURN(const size_t got, file_->pread(kSlotOffsets[slot], bytes));
      bytes.resize(got);
      copies[slot] = decode_slot(bytes);
      if (read > 1 && copies[slot].has_value()) SLUICE_PROBE("hard_state.slot_read_again");
    }
  }
  if (!copies[0] && !copies[1]) {
    return corruption(path_ + ": no valid hard state slot in a file of " + std::to_string(size) +
                      " bytes; refusing to start with a term and vote that may have been lost");
  }
  if (copies[0] && copies[1] && copies[0]->sequence == copies[1]->sequence) {
    if (copies[0]->state != copies[1]->state) return corruption(path_ + ": two different copies, one sequence");
  }
  const int latest = !copies[1] || (copies[0] && copies[0]->sequence >= copies[1]->sequence) ? 0 : 1;
  if (!copies[0] || !copies[1]) SLUICE_PROBE("hard_state_one_slot_valid");
  latest_slot_ = latest;
  sequence_ = copies[static_cast<size_t>(latest)]->sequence;
  state_ = copies[static_cast<size_t>(latest)]->state;
  SLUICE_ASSERT(sequence_ > 0);
  return Status();
}

Status HardStateFile::store(const HardState& state) {
  if (!failure_.ok()) return failure_;
  SLUICE_ASSERT(latest_slot_ >= -1);
  SLUICE_ASSERT(latest_slot_ <= 1);
  // Terms never go back; incarnations are raised by the caller at each start.
  SLUICE_ASSERT(state.term >= state_.term);
  const int slot = latest_slot_ == 0 ? 1 : 0;
  const uint64_t sequence = sequence_ + 1;
  Status written = file_->pwrite(kSlotOffsets[static_cast<size_t>(slot)], encode_slot(sequence, state));
  if (written.ok()) written = file_->sync();
  if (!written.ok()) {
    SLUICE_PROBE("hard_state_store_failed");
    failure_ = written;
    return written;
  }
  latest_slot_ = slot;
  sequence_ = sequence;
  state_ = state;
  SLUICE_ASSERT(latest_slot_ != -1);
  return Status();
}

}  // namespace sluice::raft
