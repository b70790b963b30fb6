// EchoService: a length-prefixed echo server that, when given a Journal, makes every message durable (append +
// sync) before echoing it. It is the smallest component with the broker's shape — accept, read a frame, persist,
// acknowledge — and it runs unchanged in both worlds: the two-world tests and the simulator's echo self-test use it.
//
// Frame: u32 little-endian length, then that many bytes (at most kMaxMessageBytes).
#pragma once

#include <cstdint>
#include <memory>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/env.h"
#include "sim/selftest/journal.h"

namespace sluice {

class EchoService {
 public:
  static constexpr uint32_t kMaxMessageBytes = 64 * 1024;

  // `journal` may be null (no durability). Both must outlive the service's fibers.
  EchoService(Env env, Journal* journal);
  ~EchoService();

  // Listens on `address` (port 0 picks one) and serves in fibers until stop(). Returns the bound address.
  Result<Address> start(const Address& address);
  // Closes the listener and every connection. Safe to call twice.
  void stop();
  uint64_t messages_served() const;

  // Client side: sends one framed message and waits for its echo.
  static Result<Bytes> call(Stream& stream, ByteView message);
  static Status write_frame(Stream& stream, ByteView message);
  static Result<Bytes> read_frame(Stream& stream);

  // State shared with the service's fibers, which may outlive a stop(). Defined in the .cc.
  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;  // shared with the service's fibers, which may outlive a stop()
};

}  // namespace sluice
