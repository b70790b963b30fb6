// EpollNetwork: Network, Listener and Stream on non-blocking TCP sockets watched by the EventLoop's epoll
// set. Edge-triggered: each object registers once for in, out and hang-up, and always tries the system call
// before it waits, so no edge is lost.
//
// - Accepted and connected sockets get TCP_NODELAY; listeners get SO_REUSEADDR and a backlog of SOMAXCONN.
// - Hosts: numeric IPv4/IPv6 and "localhost" (127.0.0.1, then ::1 for connect) are resolved inline; other
//   names through getaddrinfo on a loop worker. Unknown hosts are kNotFound.
// - Errors: ECONNREFUSED (and unreachable networks) → kConnectionRefused, ECONNRESET/EPIPE →
//   kConnectionReset, EADDRINUSE → kAddressInUse, ETIMEDOUT → kTimedOut, a local close() → kClosed, others →
//   kIoError.
// - Writes use MSG_NOSIGNAL: a broken connection is an error value, never SIGPIPE.
// - Fairness: read_some, write_all and accept yield the fiber after 16 calls in a row that did not park.
//
// Lifetime: streams and listeners belong to the loop's thread and must not outlive the loop. close() wakes
// the fibers blocked on the object; destroy it only once those fibers have left its calls.
#pragma once

#include <memory>

#include "core/env/network.h"

namespace sluice {

class EventLoop;

class EpollNetwork final : public Network {
 public:
  explicit EpollNetwork(EventLoop& loop) : loop_(loop) {}

  // Port 0 binds any free port; Listener::address() tells which. REQUIRES: called from a fiber, or from the
  // loop's thread while it is not running (then name resolution runs inline).
  Result<std::unique_ptr<Listener>> listen(const Address& address) override;
  // REQUIRES: called from a fiber (it waits for the handshake).
  Result<std::unique_ptr<Stream>> connect(const Address& address) override;

 private:
  EventLoop& loop_;
};

}  // namespace sluice
