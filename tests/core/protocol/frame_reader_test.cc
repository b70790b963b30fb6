// FrameReader: frames read through a read-ahead buffer come out as read_frame would return them, under every way
// the stream may cut the bytes, and pipelined small frames take one read between them.
#include "core/protocol/frame_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/protocol/header.h"
#include "tests/core/protocol/protocol_test_util.h"

namespace sluice::protocol {
namespace {

using testing::BufferStream;
using testing::hex;

constexpr size_t kReadAhead = 64;

Bytes payload_of_size(size_t size, uint8_t seed) {
  Bytes payload(size);
  for (size_t i = 0; i < size; ++i) payload[i] = static_cast<uint8_t>(seed + i * 7);
  return payload;
}

Bytes to_bytes(ByteView view) { return Bytes(view.begin(), view.end()); }

// The payloads framed back to back.
Bytes frames_of(const std::vector<Bytes>& payloads) {
  Bytes out;
  for (const Bytes& payload : payloads) {
    const Bytes frame = encode_frame(payload);
    out.insert(out.end(), frame.begin(), frame.end());
  }
  return out;
}

TEST(FrameReader, PipelinedSmallFramesComeInOneRead) {
  const std::vector<Bytes> payloads{payload_of_size(10, 1), payload_of_size(20, 2), payload_of_size(5, 3)};
  BufferStream stream(frames_of(payloads));
  FrameReader reader(stream, kDefaultMaxFrameBytes, 16 * 1024);
  for (const Bytes& payload : payloads) {
    Result<std::optional<ByteView>> frame = reader.next();
    ASSERT_TRUE(frame.ok() && frame->has_value());
    EXPECT_EQ(to_bytes(**frame), payload);
  }
  EXPECT_EQ(stream.reads(), 1u) << "read_frame takes two reads per frame";
  Result<std::optional<ByteView>> end = reader.next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

TEST(FrameReader, EveryCutOfTheStreamGivesTheSameFrames) {
  // Empty, short, exactly the read-ahead, larger than it (read past it), then small ones behind.
  const std::vector<Bytes> payloads{payload_of_size(0, 0),  payload_of_size(1, 1),   payload_of_size(5, 2),
                                    payload_of_size(60, 3), payload_of_size(300, 4), payload_of_size(2, 5),
                                    payload_of_size(64, 6), payload_of_size(3, 7)};
  const Bytes bytes = frames_of(payloads);
  for (size_t chunk = 1; chunk <= bytes.size(); chunk += (chunk < 80 ? 1 : 37)) {
    BufferStream stream(bytes, chunk);
    FrameReader reader(stream, kDefaultMaxFrameBytes, kReadAhead);
    for (const Bytes& payload : payloads) {
      Result<std::optional<ByteView>> frame = reader.next();
      ASSERT_TRUE(frame.ok() && frame->has_value()) << "chunk " << chunk;
      ASSERT_EQ(to_bytes(**frame), payload) << "chunk " << chunk;
    }
    Result<std::optional<ByteView>> end = reader.next();
    ASSERT_TRUE(end.ok());
    EXPECT_FALSE(end->has_value()) << "chunk " << chunk;
    EXPECT_EQ(reader.buffered(), 0u);
  }
}

// A stream that keeps each write as a buffer, as the simulated network does: read_whole_write hands over the next
// one untouched, read_some reads across them.
class WholeWriteStream : public testing::ReadOnlyStream {
 public:
  explicit WholeWriteStream(std::vector<Bytes> writes) : writes_(writes.begin(), writes.end()) {}

  std::optional<Bytes> read_whole_write() override {
    if (writes_.empty() || at_ != 0) return std::nullopt;
    Bytes write = std::move(writes_.front());
    writes_.pop_front();
    return write;
  }
  Result<size_t> read_some(MutableByteView out) override {
    if (writes_.empty()) return size_t{0};
    const Bytes& front = writes_.front();
    const size_t n = std::min(out.size(), front.size() - at_);
    std::copy_n(front.begin() + static_cast<std::ptrdiff_t>(at_), n, out.begin());
    at_ += n;
    if (at_ == front.size()) {
      writes_.pop_front();
      at_ = 0;
    }
    return n;
  }

 private:
  std::deque<Bytes> writes_;
  size_t at_ = 0;
};

// A write that is one frame comes out as that write's buffer (whole_write, no copy); writes that hold two frames, or
// part of one, or a frame larger than the read-ahead in parts, are read as any bytes are, in order.
TEST(FrameReader, AWriteThatIsOneFrameIsHandedOverWhole) {
  const Bytes a = payload_of_size(10, 1), b = payload_of_size(20, 2), c = payload_of_size(5, 3);
  const Bytes d = payload_of_size(300, 4), e = payload_of_size(0, 5), f = payload_of_size(7, 6);
  const Bytes framed_d = encode_frame(d);
  std::vector<Bytes> writes{encode_frame(a), frames_of({b, c}),
                            Bytes(framed_d.begin(), framed_d.begin() + 100),
                            Bytes(framed_d.begin() + 100, framed_d.end()), encode_frame(e), encode_frame(f)};
  WholeWriteStream stream(writes);
  FrameReader reader(stream, kDefaultMaxFrameBytes, kReadAhead);
  const std::vector<std::pair<Bytes, bool>> expected{{a, true},  {b, false}, {c, false},
                                                     {d, false}, {e, true},  {f, true}};
  for (const auto& [payload, whole] : expected) {
    Result<std::optional<ByteView>> frame = reader.next();
    ASSERT_TRUE(frame.ok() && frame->has_value()) << frame.status().to_string();
    EXPECT_EQ(to_bytes(**frame), payload);
    Bytes* write = reader.whole_write();
    ASSERT_EQ(write != nullptr, whole) << "a frame of " << payload.size() << " bytes";
    if (write != nullptr) {
      EXPECT_EQ(Bytes(write->begin() + kFrameSizeBytes, write->end()), payload);
      EXPECT_EQ((*frame)->data(), write->data() + kFrameSizeBytes) << "the frame views the write: no copy";
      Bytes taken = std::move(*write);  // the caller may keep it
      EXPECT_EQ(taken.size(), kFrameSizeBytes + payload.size());
    }
  }
  Result<std::optional<ByteView>> end = reader.next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  EXPECT_EQ(reader.whole_write(), nullptr);

  // A whole write with a size out of bounds fails as any such frame does.
  WholeWriteStream bad({Bytes{0x7f, 0xff, 0xff, 0xff, 1, 2}});
  FrameReader strict(bad, 1024, kReadAhead);
  EXPECT_FALSE(strict.next().ok());
}

// A frame larger than the read-ahead is read into a buffer that the next one reuses, without regrowing it; one above
// kKeptFrameBytes is let go before the next frame, so an idle connection does not pin it.
TEST(FrameReader, ALargeFrameBufferIsReusedUpToTheKeptSize) {
  const size_t big = FrameReader::kKeptFrameBytes + 1;
  const std::vector<Bytes> payloads{payload_of_size(300, 1), payload_of_size(200, 2), payload_of_size(big, 3),
                                    payload_of_size(300, 4)};
  BufferStream stream(frames_of(payloads), 1000);
  FrameReader reader(stream, kDefaultMaxFrameBytes, kReadAhead);
  std::vector<const uint8_t*> where;
  std::vector<size_t> kept;
  for (const Bytes& payload : payloads) {
    Result<std::optional<ByteView>> frame = reader.next();
    ASSERT_TRUE(frame.ok() && frame->has_value());
    EXPECT_EQ(to_bytes(**frame), payload);
    where.push_back((*frame)->data());
    kept.push_back(reader.kept_frame_bytes());
  }
  EXPECT_EQ(where[1], where[0]) << "the second frame regrew the buffer";
  EXPECT_EQ(kept[1], kept[0]);
  EXPECT_GE(kept[2], big);
  EXPECT_LT(kept[3], big) << "the oversized buffer was kept";
  EXPECT_LE(kept[0], 2 * size_t{300});
}

// A big frame read in one go pauses after each kPauseEveryBytes read, and between slices of its buffer's growth
// (the broker yields there to its other connections); the frame comes out whole either way, and a small one never
// pauses.
TEST(FrameReader, ABigFramePausesAfterEachMebibyte) {
  const size_t big = 3 * FrameReader::kPauseEveryBytes + 1000;
  const std::vector<Bytes> payloads{payload_of_size(100, 1), payload_of_size(big, 2), payload_of_size(100, 3)};
  BufferStream stream(frames_of(payloads));
  FrameReader reader(stream, kDefaultMaxFrameBytes, kReadAhead);
  size_t pauses = 0;
  reader.set_pause([&pauses] { ++pauses; });
  std::vector<size_t> pauses_after;
  for (const Bytes& payload : payloads) {
    Result<std::optional<ByteView>> frame = reader.next();
    ASSERT_TRUE(frame.ok() && frame->has_value());
    EXPECT_EQ(to_bytes(**frame), payload);
    pauses_after.push_back(pauses);
  }
  EXPECT_EQ(pauses_after[0], 0u) << "a small frame paused";
  EXPECT_GE(pauses_after[1], 3u) << "at least once a mebibyte read (the buffer's growth pauses too)";
  EXPECT_EQ(pauses_after[2], pauses_after[1]) << "a small frame paused";
}

TEST(FrameReader, ReadFrameLeavesTheNextFrameOnTheStream) {
  const Bytes bytes = frames_of({payload_of_size(3, 1), payload_of_size(2, 2)});
  BufferStream stream(bytes);
  Result<std::optional<Bytes>> first = read_frame(stream);
  ASSERT_TRUE(first.ok() && first->has_value());
  Bytes rest(64);
  Result<size_t> n = stream.read_some(rest);
  ASSERT_TRUE(n.ok());
  rest.resize(*n);
  EXPECT_EQ(rest, frames_of({payload_of_size(2, 2)}));
}

TEST(FrameReader, BadSizesAndCutFramesFailAsReadFrameDoes) {
  BufferStream negative(hex("ffffffff 00 00000001 00"));
  FrameReader a(negative, kDefaultMaxFrameBytes, kReadAhead);
  Result<std::optional<ByteView>> refused = a.next();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().protocol_error(), static_cast<int16_t>(ErrorCode::kInvalidRequest));

  BufferStream over_limit(frames_of({payload_of_size(17, 0)}));
  FrameReader b(over_limit, 16, kReadAhead);
  EXPECT_EQ(b.next().status().code(), Code::kCorruption);

  BufferStream in_size(hex("00000002 aabb 0000"));
  FrameReader c(in_size, kDefaultMaxFrameBytes, kReadAhead);
  ASSERT_TRUE(c.next().ok());
  EXPECT_EQ(c.next().status().code(), Code::kConnectionReset);

  BufferStream in_payload(hex("00000004 0102"));
  FrameReader d(in_payload, kDefaultMaxFrameBytes, kReadAhead);
  EXPECT_EQ(d.next().status().code(), Code::kConnectionReset);

  Bytes cut = frames_of({payload_of_size(500, 0)});  // cut inside the part read past the read-ahead
  cut.resize(300);
  BufferStream in_long_payload(cut);
  FrameReader e(in_long_payload, kDefaultMaxFrameBytes, kReadAhead);
  EXPECT_EQ(e.next().status().code(), Code::kConnectionReset);
}

}  // namespace
}  // namespace sluice::protocol
