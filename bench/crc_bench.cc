// CRC32C throughput (moved here from a "test" that only printed it): ISA-L's SSE4.2 implementation (crc32c.h), which the
// broker uses for every batch it stores and serves, against the portable table-driven one and against memcpy of
// the same buffer (the anchor: the cheapest pass over the bytes), measured in the same run. Never asserted; run it
// by hand:  cmake --build build/release --target crc_bench && build/release/crc_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/base/crc32c.h"

namespace {

using namespace sluice;
using Clock = std::chrono::steady_clock;

constexpr size_t kBufferBytes = size_t{1} << 20;  // a produce batch's size, and L2-resident
constexpr int kPasses = 256;
constexpr int kRepetitions = 5;  // the best of these: the least disturbed by other work on the machine

// MiB/s of `pass` over the buffer: the best of kRepetitions runs of kPasses passes.
template <typename Pass>
double best_mib_per_s(Pass pass) {
  double best = 0;
  for (int r = 0; r < kRepetitions; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < kPasses; ++i) pass();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, kPasses * (kBufferBytes / 1048576.0) / seconds);
  }
  return best;
}

}  // namespace

int main() {
  Bytes buffer(kBufferBytes);
  Bytes copy(kBufferBytes);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<uint8_t>(i * 131 ^ i >> 9);
  uint32_t crc = 0;  // folded into the output, so that no pass can be optimised away
  const double memcpy_rate = best_mib_per_s([&] {
    std::memcpy(copy.data(), buffer.data(), buffer.size());
    crc ^= copy[crc % copy.size()];
  });
  const double isal = best_mib_per_s([&] { crc = crc32c_extend(crc, buffer); });
  const double portable = best_mib_per_s([&] { crc = crc32c_extend_portable(crc, buffer); });
  std::printf("crc32c over %zu KiB, best of %d x %d passes (checksum %08x)\n", kBufferBytes / 1024, kRepetitions,
              kPasses, crc);
  std::printf("  memcpy (anchor)  %8.0f MiB/s\n", memcpy_rate);
  std::printf("  isa-l            %8.0f MiB/s   %.2f x memcpy\n", isal, isal / memcpy_rate);
  std::printf("  portable         %8.0f MiB/s   %.2f x memcpy   isa-l / portable = %.1f\n", portable,
              portable / memcpy_rate, isal / portable);
  return 0;
}
