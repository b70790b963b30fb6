// The process's open-file limit (RLIMIT_NOFILE). `sluice serve` raises the soft limit to the hard one at start: every
// partition's active segment keeps three files open (closed segments share a bounded cache,
// core/storage/segment_file_cache.h), so a broker with a few hundred partitions outgrows the usual soft 1024.
#pragma once

#include <cstdint>

#include "core/base/result.h"

namespace sluice {

struct OpenFileLimit {
  uint64_t soft = 0;
  uint64_t hard = 0;  // UINT64_MAX when unlimited
};

Result<OpenFileLimit> open_file_limit();
// Raises the soft limit to the hard one (to the kernel's fs.nr_open when the hard one is unlimited) and answers the
// limits now in force.
Result<OpenFileLimit> raise_open_file_limit();

}  // namespace sluice
