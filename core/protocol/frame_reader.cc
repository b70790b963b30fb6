#include "core/protocol/frame_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/base/limits.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/header.h"

namespace sluice::protocol {
namespace {

int32_t read_be32(const uint8_t* b) {
  return static_cast<int32_t>((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3]);
}

}  // namespace

FrameReader::FrameReader(Stream& stream, size_t max_frame_bytes, size_t read_ahead_bytes)
    : stream_(stream), max_frame_bytes_(max_frame_bytes), buffer_(std::max(read_ahead_bytes, kFrameSizeBytes)) {}

Result<size_t> FrameReader::fill() {
  SLUICE_ASSERT(begin_ <= end_ && end_ <= buffer_.size());
  if (end_ == buffer_.size()) {
    SLUICE_ASSERT(begin_ > 0);  // only a partial size prefix is ever kept, and it is shorter than the buffer
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  SLUICE_ASSIGN_OR_RETURN(const size_t n, read_input(MutableByteView(buffer_).subspan(end_)));
  SLUICE_ASSERT(n <= buffer_.size() - end_);
  end_ += n;
  return n;
}

Result<size_t> FrameReader::read_input(MutableByteView out) {
  if (leftover_at_ == leftover_.size()) return stream_.read_some(out);
  return take_leftover(out);
}

size_t FrameReader::take_leftover(MutableByteView out) {
  const size_t n = std::min(out.size(), leftover_.size() - leftover_at_);
  std::memcpy(out.data(), leftover_.data() + leftover_at_, n);
  leftover_at_ += n;
  if (leftover_at_ == leftover_.size()) {
    leftover_.clear();
    leftover_at_ = 0;
  }
  return n;
}

std::optional<ByteView> FrameReader::frame_from_whole_write() {
  SLUICE_ASSERT(buffered() == 0 && leftover_.empty());
  std::optional<Bytes> write = stream_.read_whole_write();
  if (!write.has_value()) return std::nullopt;
  SLUICE_ASSERT(!write->empty());
  if (write->size() >= kFrameSizeBytes) {
    const int32_t size = read_be32(write->data());
    if (size >= 0 && static_cast<size_t>(size) <= max_frame_bytes_ &&
        write->size() - kFrameSizeBytes == static_cast<size_t>(size)) {
      whole_write_ = std::move(*write);
      whole_write_taken_ = true;
      return ByteView(whole_write_).subspan(kFrameSizeBytes);
    }
  }
  leftover_ = std::move(*write);  // part of a frame, or several, or a bad size: read as any bytes are
  return std::nullopt;
}

void FrameReader::grow_frame(size_t needed, size_t kept, size_t total) {
  SLUICE_ASSERT(kept <= needed && needed <= total);
  if (frame_.size() >= needed) return;
  if (frame_.capacity() < needed) {
    Bytes grown;
    grown.reserve(std::min(total, std::max(needed, 2 * kept)));  // doubling keeps the copying linear
    // A slice at a time, pausing between (set_pause): copying 16 MiB into fresh pages is tens of milliseconds.
    for (size_t at = 0; at < kept;) {
      const size_t slice = std::min(kept - at, kPauseEveryBytes);
      grown.insert(grown.end(), frame_.begin() + static_cast<std::ptrdiff_t>(at),
                   frame_.begin() + static_cast<std::ptrdiff_t>(at + slice));
      at += slice;
      if (pause_ && at < kept) pause_();
    }
    frame_ = std::move(grown);
  }
  frame_.resize(needed);  // zero-fills only bytes no earlier frame reached
}

Result<std::optional<ByteView>> FrameReader::next() {
  // A frame above the kept size does not pin its buffer for the rest of the connection.
  if (frame_.capacity() > kKeptFrameBytes) Bytes().swap(frame_);
  // The last frame's whole write, unless its caller took it, goes now: it would otherwise stay until the next one.
  whole_write_ = Bytes();
  whole_write_taken_ = false;
  if (buffered() == 0 && leftover_.empty()) {
    if (std::optional<ByteView> frame = frame_from_whole_write()) return frame;
  }
  while (buffered() < kFrameSizeBytes) {
    SLUICE_ASSIGN_OR_RETURN(const size_t n, fill());
    if (n > 0) continue;
    if (buffered() == 0) return std::optional<ByteView>();  // ended cleanly between frames
    return Status(Code::kConnectionReset, "the stream ended inside a frame's size");
  }
  const int32_t size = read_be32(buffer_.data() + begin_);
  if (size < 0 || static_cast<size_t>(size) > max_frame_bytes_) {
    return malformed(fmt::format("frame size {} is outside [0, {}]", size, max_frame_bytes_));
  }
  begin_ += kFrameSizeBytes;
  const size_t total = static_cast<size_t>(size);
  if (buffered() >= total) {  // arrived whole: handed out in place (the next fill is what overwrites it)
    const ByteView frame(buffer_.data() + begin_, total);
    begin_ += total;
    if (begin_ == end_) begin_ = end_ = 0;
    return std::optional<ByteView>(frame);
  }
  // What arrived with the prefix first; the rest straight from the stream. The buffer grows with the bytes that
  // arrive, never to the declared size up front: a peer that declares 100 MiB and sends nothing holds one chunk.
  const size_t taken = buffered();
  grow_frame(taken, 0, total);
  if (taken > 0) std::memcpy(frame_.data(), buffer_.data() + begin_, taken);  // (an empty frame_ has no data())
  begin_ = end_ = 0;
  size_t done = taken;
  if (leftover_at_ < leftover_.size()) {  // the rest of a whole write that was not one frame comes first
    const size_t left = std::min(total - done, leftover_.size() - leftover_at_);
    grow_frame(done + left, done, total);
    done += take_leftover(MutableByteView(frame_.data() + done, left));
  }
  while (done < total) {
    // A chunk at a time while the buffer grows; in one read where an earlier frame left room (fewer recv calls).
    const size_t room = std::min(total, frame_.size()) - std::min(done, frame_.size());
    const size_t chunk = std::max(std::min(total - done, limits::kStreamReadChunkBytes), room);
    grow_frame(done + chunk, done, total);
    SLUICE_TRY(read_exact(stream_, MutableByteView(frame_.data() + done, chunk)));
    const bool crossed = done / kPauseEveryBytes != (done + chunk) / kPauseEveryBytes;
    done += chunk;
    if (pause_ && crossed && done < total) pause_();
  }
  return std::optional<ByteView>(ByteView(frame_.data(), total));
}

}  // namespace sluice::protocol
