// read_frame's memory: the buffer grows with the bytes that arrive, never with the size a peer merely declares, so a
// client that announces 100 MB and sends nothing costs the broker almost nothing. Measured with the allocator's own
// counters (ASan's in sanitized builds, glibc's otherwise) from inside the Stream, while read_frame waits for bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#if defined(__SANITIZE_ADDRESS__)
#define SLUICE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUICE_TEST_ASAN 1
#endif
#endif
#ifdef SLUICE_TEST_ASAN
// In every ASan runtime; GCC ships no header declaring it.
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

#include "core/base/limits.h"
#include "core/protocol/header.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

int64_t allocated_bytes() {
#ifdef SLUICE_TEST_ASAN
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);  // small chunks and mmapped large ones
#endif
}

Bytes size_prefix(uint32_t size) {
  return Bytes{static_cast<uint8_t>(size >> 24), static_cast<uint8_t>(size >> 16), static_cast<uint8_t>(size >> 8),
               static_cast<uint8_t>(size)};
}

// Serves `data` like BufferStream; at every read it first measures how far the heap has grown beyond twice the
// payload bytes delivered so far (read_frame's bound, plus one read chunk).
class MeteredStream : public testing::BufferStream {
 public:
  MeteredStream(Bytes data, size_t chunk) : BufferStream(std::move(data), chunk), baseline_(allocated_bytes()) {}

  Result<size_t> read_some(MutableByteView out) override {
    const int64_t payload = static_cast<int64_t>(std::max(delivered_, kFrameSizeBytes) - kFrameSizeBytes);
    worst_excess_ = std::max(worst_excess_, allocated_bytes() - baseline_ - 2 * payload);
    largest_read_ = std::max(largest_read_, out.size());
    Result<size_t> n = BufferStream::read_some(out);
    if (n.ok()) delivered_ += *n;
    return n;
  }

  int64_t worst_excess() const { return worst_excess_; }
  size_t largest_read() const { return largest_read_; }

 private:
  size_t delivered_ = 0;
  int64_t baseline_;
  int64_t worst_excess_ = 0;
  size_t largest_read_ = 0;
};

// One read chunk of headroom, plus a little for the allocator's and the test's own bookkeeping.
constexpr int64_t kAllowedExcess = static_cast<int64_t>(limits::kStreamReadChunkBytes) + 16 * 1024;

TEST(ReadFrame, HugeDeclaredSizeWithFewBytesAllocatesLittle) {
  constexpr uint32_t kDeclared = 100'000'000;
  ASSERT_LE(kDeclared, kDefaultMaxFrameBytes);
  Bytes data = size_prefix(kDeclared);
  data.resize(data.size() + 10, 0x42);
  MeteredStream stream(std::move(data), 1 << 20);
  Result<std::optional<Bytes>> frame = read_frame(stream);
  EXPECT_EQ(frame.status().code(), Code::kConnectionReset);  // the stream ended inside the frame
  EXPECT_LE(stream.worst_excess(), kAllowedExcess);
  EXPECT_LE(stream.largest_read(), limits::kStreamReadChunkBytes);
}

TEST(ReadFrame, LargeFrameArrivesWholeWithMemoryBoundedByWhatArrived) {
  constexpr uint32_t kSize = 3 * 1024 * 1024 + 17;
  Bytes data = size_prefix(kSize);
  for (uint32_t i = 0; i < kSize; ++i) data.push_back(static_cast<uint8_t>(i * 7 + i / 251));
  const Bytes expected(data.begin() + kFrameSizeBytes, data.end());
  MeteredStream stream(std::move(data), 1000);
  Result<std::optional<Bytes>> frame = read_frame(stream);
  ASSERT_TRUE(frame.ok()) << frame.status().to_string();
  ASSERT_TRUE(frame->has_value());
  EXPECT_TRUE(**frame == expected);
  EXPECT_LE((*frame)->capacity(), size_t{kSize});  // growth never overshoots the declared size
  EXPECT_LE(stream.worst_excess(), kAllowedExcess);
  EXPECT_LE(stream.largest_read(), limits::kStreamReadChunkBytes);
}

TEST(ReadFrame, EmptyAndChunkSizedFrames) {
  for (uint32_t size : {0u, 1u, static_cast<uint32_t>(limits::kStreamReadChunkBytes),
                        static_cast<uint32_t>(limits::kStreamReadChunkBytes + 1)}) {
    Bytes data = size_prefix(size);
    data.resize(data.size() + size, 0x5a);
    MeteredStream stream(std::move(data), 1 << 20);
    Result<std::optional<Bytes>> frame = read_frame(stream);
    ASSERT_TRUE(frame.ok() && frame->has_value()) << size;
    EXPECT_EQ((*frame)->size(), size);
    EXPECT_TRUE(std::all_of((*frame)->begin(), (*frame)->end(), [](uint8_t b) { return b == 0x5a; }));
  }
}

}  // namespace
}  // namespace sluice::protocol
