// FrameReader: size-prefixed frames read from a Stream through a small read-ahead buffer. A small request, and the
// ones a client pipelined behind it, then take one read instead of two each (the size prefix, then the body);
// every read is a system call on the real network. A frame is handed out as a view, not a fresh buffer: one that
// arrived whole in the read-ahead is not copied at all, and a larger one is read into a buffer kept for the next
// frame, so a connection streaming megabyte produce requests neither zero-fills nor regrows a buffer per request.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/env/network.h"

namespace sluice::protocol {

class FrameReader {
 public:
  // A frame buffer at most this large is kept between frames (a librdkafka produce request is up to 1 MB).
  static constexpr size_t kKeptFrameBytes = 1024 * 1024 + 64 * 1024;

  // `read_ahead_bytes` (at least the 4-byte size prefix) bounds what is read past the current frame's start; a
  // frame's bytes beyond what arrived with its prefix are read straight into its buffer, never past its end.
  FrameReader(Stream& stream, size_t max_frame_bytes, size_t read_ahead_bytes);

  // Called after each kPauseEveryBytes of a frame read in one go (a client that sends a 32 MiB request as fast as
  // loopback allows never makes the read park): the broker yields there, so the copy from the socket does not hold
  // the event loop from every other connection for the whole frame.
  static constexpr size_t kPauseEveryBytes = 1024 * 1024;
  void set_pause(std::function<void()> pause) { pause_ = std::move(pause); }

  // The next frame's payload, as read_frame (header.h) describes. The view stays valid until the next call (or the
  // reader's end): the caller handles a frame before reading the next.
  Result<std::optional<ByteView>> next();
  // The buffer the last frame came in, when it came as one write of the peer's and nothing else (the simulated
  // network hands writes over whole: Stream::read_whole_write): the frame's bytes are in it from kFrameSizeBytes on.
  // The caller may take it (a move), which ends the frame's view. Null when the frame came otherwise.
  Bytes* whole_write() { return whole_write_taken_ ? &whole_write_ : nullptr; }

  // Bytes read from the stream and not yet returned as part of a frame.
  size_t buffered() const { return end_ - begin_; }
  // The capacity of the buffer kept for frames that outgrow the read-ahead (tests).
  size_t kept_frame_bytes() const { return frame_.capacity(); }

 private:
  // Reads at least one more byte into the buffer (moving what is buffered to its front first when needed).
  // Returns the bytes read: 0 at end of stream.
  Result<size_t> fill();
  // Reads into `out` as Stream::read_some does, from what is left of a whole write taken but not a frame of its own
  // first.
  Result<size_t> read_input(MutableByteView out);
  // Copies into `out` what it can of that rest; the bytes copied.
  size_t take_leftover(MutableByteView out);
  // With nothing buffered: the next frame as a whole write of the peer's, when the stream hands one over and it is
  // exactly one frame; otherwise its bytes become input for the usual reads.
  std::optional<ByteView> frame_from_whole_write();
  // Makes frame_ hold at least `needed` bytes, keeping its first `kept`; grows at most to `total` (the frame's
  // declared size) and at most to twice what arrived, so memory follows the bytes a peer sends, not what it claims.
  void grow_frame(size_t needed, size_t kept, size_t total);

  Stream& stream_;
  size_t max_frame_bytes_;
  Bytes buffer_;
  size_t begin_ = 0;  // buffer_[begin_, end_) arrived and is not consumed yet
  size_t end_ = 0;
  Bytes frame_;  // the last frame larger than what arrived with its size prefix; reused for the next such frame
  Bytes whole_write_;              // the last frame, when it came as a whole write
  bool whole_write_taken_ = false;  // whole_write_ holds the current frame
  Bytes leftover_;                 // a whole write that was not one frame, read from before the stream
  size_t leftover_at_ = 0;
  std::function<void()> pause_;
};

}  // namespace sluice::protocol
