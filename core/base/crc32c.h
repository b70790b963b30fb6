// CRC32C (Castagnoli), the checksum of Kafka record batches. Computed by ISA-L (Debian's libisal), which picks the
// fastest code the CPU runs (carry-less multiply folding with AVX-512 here, ~2x three interleaved SSE4.2 crc32
// streams); checksumming each produced batch is a measurable share of the broker's CPU per GB.
#pragma once

#include <cstdint>

#include "core/base/bytes.h"

namespace sluice {

// Extends `crc` (0 to start) over `data`.
uint32_t crc32c_extend(uint32_t crc, ByteView data);
inline uint32_t crc32c(ByteView data) { return crc32c_extend(0, data); }

// A table-driven implementation of our own, which tests hold ISA-L's to.
uint32_t crc32c_extend_portable(uint32_t crc, ByteView data);

}  // namespace sluice
