// Fixed-width little-endian integers for raft's own files (file_raft_log, hard_state_file). Byte by byte, so the
// format does not depend on the host's order or on alignment.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/assert.h"
#include "core/base/bytes.h"

namespace sluice::raft {

inline void put_u32_le(Bytes& out, uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

inline void put_u64_le(Bytes& out, uint64_t value) {
  for (int shift = 0; shift < 64; shift += 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

inline uint32_t get_u32_le(ByteView in, size_t at) {
  SLUICE_ASSERT(at + 4 <= in.size());
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | in[at + static_cast<size_t>(i)];
  return value;
}

inline uint64_t get_u64_le(ByteView in, size_t at) {
  SLUICE_ASSERT(at + 8 <= in.size());
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | in[at + static_cast<size_t>(i)];
  return value;
}

}  // namespace sluice::raft
