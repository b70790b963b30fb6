#include "core/kafka/watched_stream.h"

#include <algorithm>
#include <vector>

namespace sluice::kafka {

WatchedStream::WatchedStream(Stream& inner, Clock& clock, std::optional<Duration> idle, Duration request_timeout)
    : inner_(inner), clock_(clock), idle_(idle), request_timeout_(request_timeout), last_activity_(clock.now()) {
  if (idle_) arm(deadline());
}

WatchedStream::~WatchedStream() {
  if (timer_) clock_.cancel_timer(*timer_);
}

void WatchedStream::frame_done(bool more_buffered) {
  frame_open_ = more_buffered;
  frame_waited_ = false;  // the pending timer, if it was the frame's, finds the later deadline and re-arms
}

Result<size_t> WatchedStream::read_some(MutableByteView out) {
  if (frame_open_ && !frame_waited_) {  // the frame did not come whole: its rest is due within the request timeout
    frame_waited_ = true;
    frame_deadline_ = clock_.now() + request_timeout_;
    arm(frame_deadline_);
  }
  Result<size_t> n = inner_.read_some(out);
  if (n.ok() && *n > 0) {
    last_activity_ = clock_.now();
    frame_open_ = true;  // (a frame already open stays open until frame_done)
  }
  return n;
}

Status WatchedStream::write_all(ByteView data) {
  while (!data.empty()) {
    const size_t n = std::min(data.size(), kWriteChunkBytes);
    SLUICE_TRY(inner_.write_all(data.first(n)));
    data = data.subspan(n);
    last_activity_ = clock_.now();
  }
  return Status();
}

Status WatchedStream::write_all_gathered(std::span<const ByteView> parts) {
  size_t total = 0;
  for (const ByteView& part : parts) total += part.size();
  if (total <= kWriteChunkBytes) {
    SLUICE_TRY(inner_.write_all_gathered(parts));
    last_activity_ = clock_.now();
    return Status();
  }
  // Chunks of up to kWriteChunkBytes, each still one gathered write (a small header with the start of its body).
  std::vector<ByteView> chunk;
  size_t in_chunk = 0;
  for (ByteView part : parts) {
    while (!part.empty()) {
      const size_t n = std::min(part.size(), kWriteChunkBytes - in_chunk);
      chunk.push_back(part.first(n));
      part = part.subspan(n);
      in_chunk += n;
      if (in_chunk == kWriteChunkBytes) {
        SLUICE_TRY(inner_.write_all_gathered(chunk));
        last_activity_ = clock_.now();
        chunk.clear();
        in_chunk = 0;
      }
    }
  }
  if (!chunk.empty()) {
    SLUICE_TRY(inner_.write_all_gathered(chunk));
    last_activity_ = clock_.now();
  }
  return Status();
}

Status WatchedStream::write_owned(Bytes frame, size_t from) {
  SLUICE_ASSERT(from <= frame.size());
  if (frame.size() - from > kWriteChunkBytes) {
    const ByteView part = ByteView(frame).subspan(from);
    return write_all_gathered(std::span<const ByteView>(&part, 1));  // in chunks, each noted
  }
  SLUICE_TRY(inner_.write_owned(std::move(frame), from));
  last_activity_ = clock_.now();
  return Status();
}

Instant WatchedStream::deadline() const {
  Instant due = Instant::max();
  if (idle_) due = last_activity_ + *idle_;
  if (frame_open_ && frame_waited_) due = std::min(due, frame_deadline_);
  return due;
}

void WatchedStream::arm(Instant at) {
  if (timer_ && timer_at_ <= at) return;  // fires earlier and re-arms for the rest
  if (timer_) clock_.cancel_timer(*timer_);
  timer_at_ = at;
  timer_ = clock_.add_timer(at, [this] { on_timer(); });
}

void WatchedStream::on_timer() {
  timer_.reset();
  if (expired_ != Expiry::kNone) return;
  const Instant due = deadline();
  if (due == Instant::max()) return;  // idle expiry off and no frame pending
  if (clock_.now() < due) {
    arm(due);
    return;
  }
  const bool frame = frame_open_ && frame_waited_ && frame_deadline_ <= due;
  expired_ = frame ? Expiry::kRequestTimeout : Expiry::kIdle;
  inner_.close();
}

}  // namespace sluice::kafka
