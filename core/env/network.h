// Network, Listener and Stream: byte streams between nodes (TCP in the real world, SimNetwork in simulation).
// Calls suspend only the calling fiber. Closing a stream or listener from another fiber wakes a fiber blocked on
// it with kClosed: that is how the core puts a deadline on I/O (a timer that closes the stream).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"

namespace sluice {

struct Address {
  std::string host;  // "127.0.0.1", "localhost", or a simulated node name such as "n1"
  uint16_t port = 0;

  std::string to_string() const;  // "host:port", IPv6 hosts in brackets
  bool operator==(const Address&) const = default;
  auto operator<=>(const Address&) const = default;
};

// Parses "host:port" and "[v6]:port". Port 0 means "any free port" for listen.
Result<Address> parse_address(std::string_view text);

class Stream {
 public:
  virtual ~Stream() = default;

  // Reads at least one byte, blocking until some arrive. Returns 0 at end of stream (the peer closed its side
  // in order); kConnectionReset when the connection broke; kClosed when this side was closed.
  virtual Result<size_t> read_some(MutableByteView out) = 0;
  // The peer's next write, whole, as the buffer it was written in (no copy): for a stream that keeps writes as
  // buffers, once bytes have arrived (blocking as read_some does) and the next write arrived unread and in one
  // piece. nullopt otherwise, and always on the real network: read_some then reads (and reports an end or a failure).
  virtual std::optional<Bytes> read_whole_write() { return std::nullopt; }
  // Writes all bytes or fails (kConnectionReset, kClosed).
  virtual Status write_all(ByteView data) = 0;
  // Writes the parts back to back, as one write_all of their concatenation would. The real network hands them to
  // the kernel in one call (no copy into a joined buffer: a response header and its multi-MiB fetch body); this
  // default joins them, so a simulated stream sees the same single write.
  virtual Status write_all_gathered(std::span<const ByteView> parts);
  // Writes `frame` from byte `from` on, as write_all of that part would, taking the buffer: a simulated stream
  // hands it to the network as it is (no joined copy); this default writes the part.
  virtual Status write_owned(Bytes frame, size_t from);
  // A hint for the reads that follow: acknowledge what arrives at once rather than waiting to piggyback the
  // acknowledgement on the next write. Worth it while answers are held back (a produce waiting for its sync): a
  // client with Nagle's algorithm on (librdkafka's default) sends its next small request only once the last one
  // is acknowledged. The real network sets TCP_QUICKACK after each read; a simulated stream has nothing to do.
  virtual void set_prompt_acks(bool on) { (void)on; }
  // Idempotent. Pending and later reads and writes on this side fail with kClosed; the peer reads end of stream.
  virtual void close() = 0;
  virtual Address peer() const = 0;
  virtual Address local() const = 0;
};

class Listener {
 public:
  virtual ~Listener() = default;
  virtual Result<std::unique_ptr<Stream>> accept() = 0;
  // The bound address (the real port when asked to listen on port 0).
  virtual Address address() const = 0;
  // Idempotent; a pending accept fails with kClosed.
  virtual void close() = 0;
};

class Network {
 public:
  virtual ~Network() = default;
  virtual Result<std::unique_ptr<Listener>> listen(const Address& address) = 0;
  virtual Result<std::unique_ptr<Stream>> connect(const Address& address) = 0;
};

// Reads exactly out.size() bytes; kConnectionReset if the stream ends first.
Status read_exact(Stream& stream, MutableByteView out);

}  // namespace sluice
