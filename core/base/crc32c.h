// CRC32C (Castagnoli), the checksum of Kafka record batches. Computed by ISA-L (Debian's libisal) with its SSE4.2
// code (three interleaved crc32 streams joined by carry-less multiplies), not the AVX-512 code its dispatcher would
// pick on this machine's Xeon: that one checksums a long buffer ~2x faster, but everything the process runs after
// it got slower (with it, a simulated run took 17-22 % longer in all; bench/README.md, eighth round).
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
