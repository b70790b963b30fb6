// CRC32C (Castagnoli), the checksum of Kafka record batches. Uses the SSE4.2 crc32 instruction when the CPU has it,
// a table-driven fallback otherwise; both give the same values.
#pragma once

#include <cstdint>

#include "core/base/bytes.h"

namespace sluice {

// Extends `crc` (0 to start) over `data`.
uint32_t crc32c_extend(uint32_t crc, ByteView data);
inline uint32_t crc32c(ByteView data) { return crc32c_extend(0, data); }

// The portable implementation, exposed so tests can compare the two paths.
uint32_t crc32c_extend_portable(uint32_t crc, ByteView data);
bool crc32c_hardware_available();

}  // namespace sluice
