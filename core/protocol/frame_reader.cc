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
  SLUICE_ASSIGN_OR_RETURN(const size_t n, stream_.read_some(MutableByteView(buffer_).subspan(end_)));
  SLUICE_ASSERT(n <= buffer_.size() - end_);
  end_ += n;
  return n;
}

Result<std::optional<Bytes>> FrameReader::next() {
  while (buffered() < kFrameSizeBytes) {
    SLUICE_ASSIGN_OR_RETURN(const size_t n, fill());
    if (n > 0) continue;
    if (buffered() == 0) return std::optional<Bytes>();  // ended cleanly between frames
    return Status(Code::kConnectionReset, "the stream ended inside a frame's size");
  }
  const int32_t size = read_be32(buffer_.data() + begin_);
  if (size < 0 || static_cast<size_t>(size) > max_frame_bytes_) {
    return malformed(fmt::format("frame size {} is outside [0, {}]", size, max_frame_bytes_));
  }
  begin_ += kFrameSizeBytes;
  const size_t total = static_cast<size_t>(size);
  // What arrived with the prefix first; the rest straight from the stream. The buffer grows with the bytes that
  // arrive, never to the declared size up front: a peer that declares 100 MiB and sends nothing holds one chunk.
  // Capacity doubles (bounded by the frame), so copying stays linear.
  const size_t taken = std::min(total, buffered());
  Bytes payload(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
                buffer_.begin() + static_cast<std::ptrdiff_t>(begin_ + taken));
  begin_ += taken;
  if (begin_ == end_) begin_ = end_ = 0;
  while (payload.size() < total) {
    const size_t done = payload.size();
    const size_t chunk = std::min(total - done, limits::kStreamReadChunkBytes);
    if (payload.capacity() < done + chunk) payload.reserve(std::min(total, std::max(done + chunk, 2 * done)));
    payload.resize(done + chunk);
    SLUICE_TRY(read_exact(stream_, MutableByteView(payload).subspan(done)));
  }
  return std::optional<Bytes>(std::move(payload));
}

}  // namespace sluice::protocol
