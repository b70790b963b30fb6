#include "net/epoll_network.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/base/assert.h"
#include "core/env/scheduler.h"
#include "net/event_loop.h"

namespace sluice {
namespace {

constexpr uint32_t kStreamEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
constexpr uint32_t kListenerEvents = EPOLLIN | EPOLLET;
// Calls that succeed at once never park; after this many in a row the fiber yields, so a peer that always has
// data ready (or a flood of connections) cannot keep the loop from its other fibers, I/O and timers.
constexpr uint32_t kImmediateCallsBeforeYield = 16;

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

// Closes the fd unless released: keeps the error paths of listen/connect leak-free.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string os_text(int err) { return std::system_category().message(err); }

Status socket_error(int err, std::string_view op, const Address& address) {
  std::string message = std::string(op) + " " + address.to_string() + ": " + os_text(err);
  switch (err) {
    case ECONNRESET:
    case EPIPE:
    case ECONNABORTED: return connection_reset(std::move(message));
    case ECONNREFUSED:
    case ENETUNREACH:
    case EHOSTUNREACH: return connection_refused(std::move(message));
    case ETIMEDOUT: return timed_out(std::move(message));
    case EADDRINUSE: return Status(Code::kAddressInUse, std::move(message));
    case EADDRNOTAVAIL: return invalid_argument(std::move(message));
    default: return io_error(std::move(message));
  }
}

Address to_address(const sockaddr_storage& storage) {
  char text[INET6_ADDRSTRLEN] = {};
  if (storage.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    return Address{text, ntohs(v4->sin_port)};
  }
  if (storage.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    return Address{text, ntohs(v6->sin6_port)};
  }
  return Address{"?", 0};
}

std::optional<SocketAddress> parse_numeric(const std::string& host, uint16_t port) {
  SocketAddress out;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.length = sizeof(sockaddr_in);
    return out;
  }
  out = SocketAddress{};
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.length = sizeof(sockaddr_in6);
    return out;
  }
  return std::nullopt;
}

struct Lookup {
  int rc = 0;
  int err = 0;
  std::vector<SocketAddress> addresses;
};

Lookup lookup_host(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  Lookup lookup;
  lookup.rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  lookup.err = errno;
  if (lookup.rc != 0) return lookup;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_addrlen > sizeof(sockaddr_storage)) continue;
    SocketAddress address;
    std::memcpy(&address.storage, ai->ai_addr, ai->ai_addrlen);
    address.length = ai->ai_addrlen;
    lookup.addresses.push_back(address);
  }
  ::freeaddrinfo(found);
  return lookup;
}

// Numeric hosts and "localhost" inline; other names through getaddrinfo on a worker.
Result<std::vector<SocketAddress>> resolve(EventLoop& loop, const Address& address, bool passive) {
  if (address.host == "localhost") {
    std::vector<SocketAddress> out{*parse_numeric("127.0.0.1", address.port)};
    if (!passive) out.push_back(*parse_numeric("::1", address.port));
    return out;
  }
  if (std::optional<SocketAddress> numeric = parse_numeric(address.host, address.port)) {
    return std::vector<SocketAddress>{*numeric};
  }
  Lookup lookup = loop.run_blocking([host = address.host, port = address.port, passive] {
    return lookup_host(host, port, passive);
  });
  if (lookup.rc != 0) {
    const std::string why = lookup.rc == EAI_SYSTEM ? os_text(lookup.err) : ::gai_strerror(lookup.rc);
    return not_found("resolve " + address.host + ": " + why);
  }
  if (lookup.addresses.empty()) return not_found("resolve " + address.host + ": no address");
  return std::move(lookup.addresses);
}

// Counts calls that completed without parking; yields the fiber every kImmediateCallsBeforeYield of them.
class YieldStreak {
 public:
  void before_call(Scheduler& scheduler) {
    if (++streak_ < kImmediateCallsBeforeYield) return;
    streak_ = 0;
    scheduler.yield();
  }
  void parked() { streak_ = 0; }

 private:
  uint32_t streak_ = 0;
};

void set_nodelay(int fd) {
  const int one = 1;
  // Best effort: a socket without it still works, only with Nagle's delays.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

class EpollStream final : public Stream {
 public:
  // Takes ownership of `fd`: a non-blocking TCP socket, connected or with a connect in progress.
  static Result<std::unique_ptr<EpollStream>> adopt(EventLoop& loop, int fd) {
    std::unique_ptr<EpollStream> stream(new EpollStream(loop, fd));
    Result<uint64_t> token = loop.watch(fd, kStreamEvents, [raw = stream.get()](uint32_t events) {
      raw->on_ready(events);
    });
    if (!token.ok()) return token.status();  // the destructor closes the fd
    stream->watch_token_ = *token;
    return stream;
  }

  ~EpollStream() override { close(); }

  Result<size_t> read_some(MutableByteView out) override;
  Status write_all(ByteView data) override;
  Status write_all_gathered(std::span<const ByteView> parts) override;
  void close() override;
  void set_prompt_acks(bool on) override { prompt_acks_ = on; }
  Address peer() const override { return peer_; }
  Address local() const override { return local_; }

  // Waits for a non-blocking connect to `target` to complete, then learns the addresses.
  Status finish_connect(const Address& target);
  void learn_addresses();

 private:
  EpollStream(EventLoop& loop, int fd)
      : loop_(loop), fd_(fd), readers_(loop.scheduler()), writers_(loop.scheduler()) {
    SLUICE_ASSERT(fd >= 0);
  }
  void on_ready(uint32_t events);
  Status closed_status(std::string_view op) const {
    return closed(std::string(op) + " on a closed stream to " + peer_.to_string());
  }

  EventLoop& loop_;
  int fd_;
  uint64_t watch_token_ = 0;
  bool closed_ = false;
  bool prompt_acks_ = false;
  Address local_;
  Address peer_;
  WaitQueue readers_;
  WaitQueue writers_;
  YieldStreak read_streak_;
  YieldStreak write_streak_;
};

void EpollStream::on_ready(uint32_t events) {
  SLUICE_ASSERT(!closed_);  // close() unwatches first
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) readers_.notify_all();
  if ((events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) writers_.notify_all();
}

Result<size_t> EpollStream::read_some(MutableByteView out) {
  SLUICE_ASSERT_MSG(!out.empty(), "read_some into an empty buffer cannot tell data from end of stream");
  read_streak_.before_call(loop_.scheduler());
  while (true) {
    if (closed_) return closed_status("read");
    const ssize_t n = ::recv(fd_, out.data(), out.size(), 0);
    if (n >= 0) {
      SLUICE_ASSERT(static_cast<size_t>(n) <= out.size());
      if (prompt_acks_ && n > 0) {
        // Not sticky: the kernel goes back to delayed acknowledgements once this side writes soon after reading.
        const int one = 1;
        (void)::setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
      }
      return static_cast<size_t>(n);
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) return socket_error(err, "recv from", peer_);
    readers_.wait();
    read_streak_.parked();
  }
}

Status EpollStream::write_all(ByteView data) {
  write_streak_.before_call(loop_.scheduler());
  if (closed_) return closed_status("write");
  size_t done = 0;
  while (done < data.size()) {
    if (closed_) return closed_status("write");
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) return socket_error(err, "send to", peer_);
    writers_.wait();
    write_streak_.parked();
  }
  SLUICE_ASSERT(done == data.size());
  return Status();
}

Status EpollStream::write_all_gathered(std::span<const ByteView> parts) {
  // sendmsg takes at most IOV_MAX parts; responses have two (header, body), so longer lists just join.
  constexpr size_t kMaxParts = 8;
  if (parts.size() > kMaxParts) return Stream::write_all_gathered(parts);
  write_streak_.before_call(loop_.scheduler());
  std::array<iovec, kMaxParts> vectors{};
  size_t count = 0;
  for (const ByteView part : parts) {
    if (part.empty()) continue;
    vectors[count++] = iovec{const_cast<uint8_t*>(part.data()), part.size()};
  }
  size_t first = 0;  // vectors[first..count) remain, vectors[first] possibly advanced past sent bytes
  while (first < count) {
    if (closed_) return closed_status("write");
    msghdr message{};
    message.msg_iov = &vectors[first];
    message.msg_iovlen = count - first;
    const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      if (err != EAGAIN && err != EWOULDBLOCK) return socket_error(err, "send to", peer_);
      writers_.wait();
      write_streak_.parked();
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    while (first < count && sent >= vectors[first].iov_len) sent -= vectors[first++].iov_len;
    if (first < count) {
      vectors[first].iov_base = static_cast<uint8_t*>(vectors[first].iov_base) + sent;
      vectors[first].iov_len -= sent;
    }
  }
  return Status();
}

void EpollStream::close() {
  if (closed_) return;
  closed_ = true;
  if (watch_token_ != 0) loop_.unwatch(watch_token_);
  ::close(fd_);
  fd_ = -1;
  // The woken fibers see closed_ before touching the fd.
  readers_.notify_all();
  writers_.notify_all();
}

Status EpollStream::finish_connect(const Address& target) {
  while (true) {
    if (closed_) return closed_status("connect");
    int err = 0;
    socklen_t length = sizeof(err);
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &length) != 0) err = errno;
    if (err != 0) return socket_error(err, "connect to", target);
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof(peer);
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0) break;
    if (errno != ENOTCONN) return socket_error(errno, "connect to", target);
    writers_.wait();  // EPOLLOUT or EPOLLERR ends the handshake
  }
  learn_addresses();
  return Status();
}

void EpollStream::learn_addresses() {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&storage), &length) == 0) local_ = to_address(storage);
  storage = sockaddr_storage{};
  length = sizeof(storage);
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&storage), &length) == 0) peer_ = to_address(storage);
}

class EpollListener final : public Listener {
 public:
  // Takes ownership of `fd`: a non-blocking socket that is bound and listening.
  static Result<std::unique_ptr<EpollListener>> adopt(EventLoop& loop, int fd, Address bound) {
    std::unique_ptr<EpollListener> listener(new EpollListener(loop, fd, std::move(bound)));
    Result<uint64_t> token = loop.watch(fd, kListenerEvents, [raw = listener.get()](uint32_t) {
      raw->acceptors_.notify_all();
    });
    if (!token.ok()) return token.status();
    listener->watch_token_ = *token;
    return listener;
  }

  ~EpollListener() override { close(); }

  Result<std::unique_ptr<Stream>> accept() override;
  Address address() const override { return address_; }
  void close() override;

 private:
  EpollListener(EventLoop& loop, int fd, Address bound)
      : loop_(loop), fd_(fd), address_(std::move(bound)), acceptors_(loop.scheduler()) {
    SLUICE_ASSERT(fd >= 0);
  }

  EventLoop& loop_;
  int fd_;
  uint64_t watch_token_ = 0;
  bool closed_ = false;
  Address address_;
  WaitQueue acceptors_;
  YieldStreak accept_streak_;
};

bool accept_should_retry(int err) {
  // accept(2): errors of the pending connection itself are worth only another try.
  switch (err) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH: return true;
    default: return false;
  }
}

Result<std::unique_ptr<Stream>> EpollListener::accept() {
  accept_streak_.before_call(loop_.scheduler());
  while (true) {
    if (closed_) return closed("accept on a closed listener " + address_.to_string());
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      set_nodelay(fd);
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<EpollStream> stream, EpollStream::adopt(loop_, fd));
      stream->learn_addresses();
      return std::unique_ptr<Stream>(std::move(stream));
    }
    const int err = errno;
    if (accept_should_retry(err)) continue;
    // EMFILE and friends: the caller decides whether to back off and retry.
    if (err != EAGAIN && err != EWOULDBLOCK) return socket_error(err, "accept on", address_);
    acceptors_.wait();
    accept_streak_.parked();
  }
}

void EpollListener::close() {
  if (closed_) return;
  closed_ = true;
  if (watch_token_ != 0) loop_.unwatch(watch_token_);
  ::close(fd_);
  fd_ = -1;
  acceptors_.notify_all();
}

Result<std::unique_ptr<Stream>> connect_one(EventLoop& loop, const SocketAddress& target,
                                            const Address& name) {
  UniqueFd fd(::socket(target.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return socket_error(errno, "socket for", name);
  set_nodelay(fd.get());
  if (::connect(fd.get(), target.get(), target.length) != 0 && errno != EINPROGRESS) {
    return socket_error(errno, "connect to", name);
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<EpollStream> stream, EpollStream::adopt(loop, fd.release()));
  SLUICE_TRY(stream->finish_connect(name));
  return std::unique_ptr<Stream>(std::move(stream));
}

}  // namespace

Result<std::unique_ptr<Listener>> EpollNetwork::listen(const Address& address) {
  SLUICE_ASSIGN_OR_RETURN(const std::vector<SocketAddress> targets,
                          resolve(loop_, address, /*passive=*/true));
  SLUICE_ASSERT(!targets.empty());
  const SocketAddress& target = targets.front();
  UniqueFd fd(::socket(target.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return socket_error(errno, "socket for", address);
  const int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    return socket_error(errno, "SO_REUSEADDR on", address);
  }
  if (::bind(fd.get(), target.get(), target.length) != 0) return socket_error(errno, "bind", address);
  if (::listen(fd.get(), SOMAXCONN) != 0) return socket_error(errno, "listen on", address);
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return socket_error(errno, "getsockname of", address);
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<EpollListener> listener,
                          EpollListener::adopt(loop_, fd.release(), to_address(bound)));
  return std::unique_ptr<Listener>(std::move(listener));
}

Result<std::unique_ptr<Stream>> EpollNetwork::connect(const Address& address) {
  SLUICE_ASSERT_MSG(loop_.scheduler().in_fiber(), "connect waits for the handshake: call it from a fiber");
  SLUICE_ASSIGN_OR_RETURN(const std::vector<SocketAddress> targets,
                          resolve(loop_, address, /*passive=*/false));
  std::optional<Status> first_error;
  for (const SocketAddress& target : targets) {
    Result<std::unique_ptr<Stream>> stream = connect_one(loop_, target, address);
    if (stream.ok()) return stream;
    if (!first_error) first_error = stream.status();  // the first address is the one the caller meant most
  }
  SLUICE_ASSERT(first_error.has_value());
  return *first_error;
}

}  // namespace sluice
