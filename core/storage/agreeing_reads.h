// A device or its path can hand back one bad copy of good bytes, so nothing read is believed on one bad copy:
// - read_again_on_damage: a read that reports damage (kCorruption: a CRC, a header that does not parse) is made
//   again; lasting damage fails every read.
// - read_until_two_agree: what has no checksum of its own (a walk over batch headers, whose base offset and epoch
//   lie outside the batch CRC; a file without a CRC) is believed once two reads in a row agree.
// Other errors (I/O) end either at once.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/base/assert.h"
#include "core/base/result.h"

namespace sluice::storage {

// `read()` returns a Result; it is made up to `max_reads` times in all while it answers kCorruption, and
// `on_retry(status)` runs before each repeat with the damage reported (a probe, a log line at its call site).
template <typename Read, typename OnRetry>
auto read_again_on_damage(int max_reads, Read read, OnRetry on_retry) -> decltype(read()) {
  SLUICE_ASSERT(max_reads >= 1);
  auto answer = read();
  for (int attempt = 2; attempt <= max_reads && !answer.ok() && answer.status().code() == Code::kCorruption;
       ++attempt) {
    on_retry(answer.status());
    answer = read();
  }
  return answer;
}

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
