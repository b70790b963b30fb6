// FrameReader: size-prefixed frames read from a Stream through a small read-ahead buffer. A small request, and the
// ones a client pipelined behind it, then take one read instead of two each (the size prefix, then the body);
// every read is a system call on the real network.
#pragma once

#include <cstddef>
#include <optional>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/env/network.h"

namespace sluice::protocol {

class FrameReader {
 public:
  // `read_ahead_bytes` (at least the 4-byte size prefix) bounds what is read past the current frame's start; a
  // frame's bytes beyond what arrived with its prefix are read straight into its buffer, never past its end.
  FrameReader(Stream& stream, size_t max_frame_bytes, size_t read_ahead_bytes);

  // The next frame's payload, as read_frame (header.h) describes.
  Result<std::optional<Bytes>> next();

  // Bytes read from the stream and not yet returned as part of a frame.
  size_t buffered() const { return end_ - begin_; }

 private:
  // Reads at least one more byte into the buffer (moving what is buffered to its front first when needed).
  // Returns the bytes read: 0 at end of stream.
  Result<size_t> fill();

  Stream& stream_;
  size_t max_frame_bytes_;
  Bytes buffer_;
  size_t begin_ = 0;  // buffer_[begin_, end_) arrived and is not consumed yet
  size_t end_ = 0;
};

}  // namespace sluice::protocol
