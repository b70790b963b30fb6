// WatchedStream: a connection's stream under its two time bounds. connections.max.idle.ms closes a connection
// through which no byte moved either way for that long (Kafka's idle expiry: a silent client, and a client that
// never reads its answers, whose writes then make no progress); request.timeout.ms closes one whose current request
// frame stops arriving part way (measured from when the broker first waits for the frame's rest). It forwards every
// call and notes when bytes last moved; one timer per connection, re-armed lazily when it fires, closes the inner
// stream when a bound passes, which wakes the connection's blocked read or write with kClosed. Writes are handed
// on in chunks so that a slow reader's progress counts as activity.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/env/clock.h"
#include "core/env/network.h"

namespace sluice::kafka {

enum class Expiry : uint8_t { kNone, kIdle, kRequestTimeout };

class WatchedStream final : public Stream {
 public:
  // Progress of a long write is noted per this many bytes.
  static constexpr size_t kWriteChunkBytes = 1024 * 1024;

  // `idle`: nullopt never closes an idle connection. The timer is cancelled by the destructor.
  WatchedStream(Stream& inner, Clock& clock, std::optional<Duration> idle, Duration request_timeout);
  ~WatchedStream() override;
  WatchedStream(const WatchedStream&) = delete;
  WatchedStream& operator=(const WatchedStream&) = delete;

  // The connection has a whole frame; `more_buffered`: bytes of the next one were read with it (pipelined).
  void frame_done(bool more_buffered);
  // Which bound closed the stream, if one did.
  Expiry expired() const { return expired_; }

  Result<size_t> read_some(MutableByteView out) override;
  Status write_all(ByteView data) override;
  Status write_all_gathered(std::span<const ByteView> parts) override;
  Status write_owned(Bytes frame, size_t from) override;
  void set_prompt_acks(bool on) override { inner_.set_prompt_acks(on); }
  void close() override { inner_.close(); }
  Address peer() const override { return inner_.peer(); }
  Address local() const override { return inner_.local(); }

 private:
  Instant deadline() const;
  void arm(Instant at);
  void on_timer();

  Stream& inner_;
  Clock& clock_;
  std::optional<Duration> idle_;
  Duration request_timeout_;
  Instant last_activity_;
  bool frame_open_ = false;    // bytes of a frame the connection has not had whole yet arrived
  bool frame_waited_ = false;  // ... and the broker waited for its rest: frame_deadline_ applies
  Instant frame_deadline_;
  std::optional<TimerId> timer_;  // pending, at timer_at_
  Instant timer_at_;
  Expiry expired_ = Expiry::kNone;
};

}  // namespace sluice::kafka
