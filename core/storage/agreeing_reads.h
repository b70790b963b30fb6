// read_until_two_agree: a device or its path can hand back one bad copy of good bytes, and what has no checksum of
// its own (a walk over batch headers, whose base offset and epoch lie outside the batch CRC) is believed once two
// reads in a row agree. Reads that report damage (kCorruption) are made again too; other errors end it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/base/assert.h"
#include "core/base/result.h"

namespace sluice::storage {

// `read()` returns Result<T>; `on_disagreement()` runs each time two answers differ (a probe at its call site).
// kCorruption naming `what` when no two of `max_reads` agree, or the last damage reported.
template <typename T, typename Read, typename OnDisagreement, typename Equal = std::equal_to<T>>
Result<T> read_until_two_agree(int max_reads, const std::string& what, Read read, OnDisagreement on_disagreement,
                               Equal equal = Equal()) {
  SLUICE_ASSERT(max_reads >= 2);
  std::optional<T> previous;
  Status damage;
  for (int attempt = 1; attempt <= max_reads; ++attempt) {
    Result<T> answer = read();
    if (!answer.ok()) {
      if (answer.status().code() != Code::kCorruption) return std::move(answer).take_status();
      damage = std::move(answer).take_status();
      previous.reset();
      continue;
    }
    if (previous.has_value() && equal(*previous, *answer)) return std::move(*answer);
    if (previous.has_value()) on_disagreement();
    previous = std::move(*answer);
  }
  if (!damage.ok()) return damage;
  return corruption(what + ": no two of " + std::to_string(max_reads) + " reads agreed");
}

}  // namespace sluice::storage
