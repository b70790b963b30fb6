// WatchedStream (watched_stream.h) forwarding a broker's framed response: write_owned hands the part after the room
// to the inner stream whole when it is small, and in chunks of at most kWriteChunkBytes when it is large; the base
// Stream's write_owned writes exactly that part.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/env/network.h"
#include "core/kafka/watched_stream.h"
#include "fuzz/fuzz_env.h"

namespace sluice::kafka {
namespace {

// Records each write as it arrives (gathered and owned writes through the base class's defaults).
class RecordingStream final : public Stream {
 public:
  Result<size_t> read_some(MutableByteView) override { return size_t{0}; }
  Status write_all(ByteView data) override {
    writes.emplace_back(data.begin(), data.end());
    return Status();
  }
  void close() override {}
  Address peer() const override { return {}; }
  Address local() const override { return {}; }
  std::vector<Bytes> writes;
};

Bytes numbered(size_t n) {
  Bytes bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + i / 251);
  return bytes;
}

Bytes joined(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

TEST(WatchedStream, WriteOwnedSendsThePartAfterTheRoomWholeOrInChunks) {
  fuzz::StillClock clock;  // time stands still and no timer fires: only the forwarding is under test
  for (const size_t size : {size_t{40}, WatchedStream::kWriteChunkBytes + 9, 3 * WatchedStream::kWriteChunkBytes}) {
    RecordingStream inner;
    std::optional<WatchedStream> watched;
    watched.emplace(inner, clock, std::nullopt, std::chrono::seconds(30));
    const Bytes frame = numbered(size);
    ASSERT_TRUE(watched->write_owned(frame, 3).ok());
    EXPECT_EQ(joined(inner.writes), Bytes(frame.begin() + 3, frame.end())) << size;
    for (const Bytes& write : inner.writes) EXPECT_LE(write.size(), WatchedStream::kWriteChunkBytes) << size;
    EXPECT_EQ(inner.writes.size(), (size - 3 + WatchedStream::kWriteChunkBytes - 1) / WatchedStream::kWriteChunkBytes);
  }
}

TEST(WatchedStream, WriteOwnedOfNothingPastTheRoomWritesNothingAmiss) {
  fuzz::StillClock clock;
  RecordingStream inner;
  WatchedStream watched(inner, clock, std::nullopt, std::chrono::seconds(30));
  ASSERT_TRUE(watched.write_owned(numbered(9), 9).ok());
  EXPECT_TRUE(joined(inner.writes).empty());
}

}  // namespace
}  // namespace sluice::kafka
