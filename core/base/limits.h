// Every bound in one place, so that a reader can see what the broker will and will not accept.
#pragma once

#include <cstddef>

namespace sluice::limits {

// Fiber stacks are mmap'ed with a guard page. AddressSanitizer's redzones need more room.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr size_t kFiberStackBytes = 1024 * 1024;
#else
inline constexpr size_t kFiberStackBytes = 256 * 1024;
#endif

// The largest single read_some a Stream implementation performs into its own buffers.
inline constexpr size_t kStreamReadChunkBytes = 64 * 1024;

static_assert(kFiberStackBytes % 4096 == 0);
static_assert(kFiberStackBytes >= 64 * 1024);

}  // namespace sluice::limits
