// The node side of SimNetwork: the endpoint (listen, connect), listeners and streams. Every wait goes through
// a WaitQueue of the node's scheduler, so a fiber killed while it waits unlinks itself and leaves nothing
// behind.
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "core/base/assert.h"
#include "sim/world/sim_network.h"
#include "sim/world/sim_network_state.h"

namespace sluice {

using simnet::ConnectAttempt;
using simnet::kClient;
using simnet::kServer;
using simnet::ListenerState;
using simnet::Side;
using simnet::SimEndpoint;

namespace simnet {

class SimStream final : public Stream {
 public:
  SimStream(SimNetwork& network, std::shared_ptr<Connection> conn, int side)
      : network_(network), conn_(std::move(conn)), side_(side) {
    SLUICE_ASSERT(conn_ != nullptr);
    SLUICE_ASSERT(conn_->side(side_).established);
  }
  ~SimStream() override { close(); }  // never blocks: a killed fiber's streams close as it unwinds
  SimStream(const SimStream&) = delete;
  SimStream& operator=(const SimStream&) = delete;

  Result<size_t> read_some(MutableByteView out) override { return network_.stream_read(conn_, side_, out); }
  std::optional<Bytes> read_whole_write() override { return network_.stream_take_write(conn_, side_); }
  Status write_all(ByteView data) override { return network_.stream_write(conn_, side_, data); }
  // Every request and response is a gathered write (header, body): concatenated once, it is the chunk itself.
  Status write_all_gathered(std::span<const ByteView> parts) override {
    return network_.stream_write_owned(conn_, side_, concat(parts));
  }
  // A broker's response, built behind room for its frame head: the buffer is the chunk (moved down when the head
  // took less than all the room).
  Status write_owned(Bytes frame, size_t from) override {
    SLUICE_ASSERT(from <= frame.size());
    frame.erase(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(from));
    return network_.stream_write_owned(conn_, side_, std::move(frame));
  }
  void close() override { network_.stream_close(conn_, side_); }
  Address peer() const override { return conn_->side(1 - side_).local; }
  Address local() const override { return conn_->side(side_).local; }

 private:
  SimNetwork& network_;
  std::shared_ptr<Connection> conn_;
  int side_;
};

class SimListener final : public Listener {
 public:
  SimListener(SimNetwork& network, std::shared_ptr<ListenerState> state)
      : network_(network), state_(std::move(state)) {
    SLUICE_ASSERT(state_ != nullptr);
  }
  ~SimListener() override { close(); }
  SimListener(const SimListener&) = delete;
  SimListener& operator=(const SimListener&) = delete;

  Result<std::unique_ptr<Stream>> accept() override { return network_.accept(*state_); }
  Address address() const override { return state_->address; }
  void close() override { network_.close_listener(*state_); }

 private:
  SimNetwork& network_;
  std::shared_ptr<ListenerState> state_;
};

Result<std::unique_ptr<Listener>> SimEndpoint::listen(const Address& address) {
  return network_.listen(*this, address);
}

Result<std::unique_ptr<Stream>> SimEndpoint::connect(const Address& address) {
  return network_.connect(*this, address);
}

}  // namespace simnet

namespace {

bool is_any_or_loopback(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "localhost" || host == "127.0.0.1";
}

// Copies unread bytes out of the inbox.
size_t take_from_inbox(Side& side, MutableByteView out) {
  size_t copied = 0;
  while (copied < out.size() && !side.inbox.empty()) {
    const Bytes& front = side.inbox.front();
    SLUICE_ASSERT(side.inbox_offset < front.size());
    const size_t n = std::min(out.size() - copied, front.size() - side.inbox_offset);
    std::memcpy(out.data() + copied, front.data() + side.inbox_offset, n);
    copied += n;
    side.inbox_offset += n;
    if (side.inbox_offset == front.size()) {
      if (side.keep_read) {
        side.read_recently.push_back(std::move(side.inbox.front()));
        if (side.read_recently.size() > simnet::kKeptReadChunks) side.read_recently.pop_front();
      }
      side.inbox.pop_front();
      side.inbox_offset = 0;
    }
  }
  SLUICE_ASSERT(copied <= side.inbox_bytes);
  side.inbox_bytes -= copied;
  SLUICE_ASSERT(side.inbox_bytes == 0 || !side.inbox.empty());
  return copied;
}

}  // namespace

// ---- Endpoint calls ----

Result<std::unique_ptr<Listener>> SimNetwork::listen(SimEndpoint& endpoint, const Address& address) {
  if (!endpoint.up) return closed("node " + endpoint.host + " is down");
  if (address.host != endpoint.host && !is_any_or_loopback(address.host)) {
    return invalid_argument("node " + endpoint.host + " cannot listen on " + address.to_string());
  }
  const uint16_t port = address.port != 0 ? address.port : allocate_port(endpoint, /*for_listener=*/true);
  if (listeners_.count({endpoint.node, port}) != 0) {
    return Status(Code::kAddressInUse, endpoint.host + ":" + std::to_string(port) + " is in use");
  }
  auto state =
      std::make_shared<ListenerState>(endpoint.node, Address{endpoint.host, port}, *endpoint.scheduler);
  listeners_.emplace(std::make_pair(endpoint.node, port), state);
  return std::unique_ptr<Listener>(std::make_unique<simnet::SimListener>(*this, std::move(state)));
}

Result<std::unique_ptr<Stream>> SimNetwork::connect(SimEndpoint& endpoint, const Address& address) {
  if (!endpoint.up) return connection_refused("node " + endpoint.host + " is down");
  SimEndpoint* server = resolve(endpoint, address.host);
  if (server == nullptr) return not_found("unknown host '" + address.host + "'");
  ++stats_.connects;
  auto attempt = std::make_shared<ConnectAttempt>(*endpoint.scheduler);
  attempt->client = endpoint.node;
  attempt->client_incarnation = endpoint.incarnation;
  attempt->client_scheduler = endpoint.scheduler;
  attempt->client_local = Address{endpoint.host, allocate_port(endpoint, /*for_listener=*/false)};
  attempt->server = server->node;
  attempt->server_address = Address{server->host, address.port};
  send_syn(attempt);

  // Gives up on the handshake however this call ends: timeout, or the fiber unwinding because it was killed.
  struct AbandonOnExit {
    SimNetwork* network;
    ConnectAttempt* attempt;
    ~AbandonOnExit() {
      if (!attempt->finished) network->abandon(*attempt);
    }
  } abandon_on_exit{this, attempt.get()};
  // The connecting node's own timer, on its own clock: a world-time deadline waited for on a clock that drifted
  // ahead (a clock-skew fault) had always passed, and the node could never connect again.
  const Instant deadline = endpoint.scheduler->clock().now() + config_.connect_timeout;
  while (!attempt->finished) {
    if (!attempt->waiters.wait_until(deadline)) break;
  }
  if (!attempt->finished) {
    ++stats_.connects_timed_out;
    SLUICE_PROBE("sim_network.connect_timed_out");
    return timed_out("connect to " + attempt->server_address.to_string() + " timed out");
  }
  if (!attempt->status.ok()) return attempt->status;
  SLUICE_ASSERT(attempt->conn != nullptr);
  SLUICE_ASSERT(attempt->conn->client.established);
  return std::unique_ptr<Stream>(std::make_unique<simnet::SimStream>(*this, attempt->conn, kClient));
}

void SimNetwork::abandon(ConnectAttempt& attempt) {
  SLUICE_ASSERT(!attempt.finished);
  SLUICE_ASSERT(!attempt.abandoned);
  attempt.abandoned = true;
  // The SYN reached a listener: the server side exists (maybe accepted already) and must learn of the abort.
  if (attempt.conn != nullptr) abort_side(attempt.conn, kClient);
  attempt.conn.reset();
}

SimEndpoint* SimNetwork::resolve(SimEndpoint& from, std::string_view host) {
  if (host == from.host || host == "localhost" || host == "127.0.0.1") return &from;
  auto found = hosts_.find(host);
  return found == hosts_.end() ? nullptr : endpoint(found->second);
}

uint16_t SimNetwork::allocate_port(SimEndpoint& endpoint, bool for_listener) {
  // Client ports only label the connection; a listener's port must be free.
  for (uint32_t tries = 0; tries <= std::numeric_limits<uint16_t>::max(); ++tries) {
    const uint16_t port = endpoint.next_port;
    endpoint.next_port = port == std::numeric_limits<uint16_t>::max() ? config_.first_ephemeral_port
                                                                      : static_cast<uint16_t>(port + 1);
    if (!for_listener || listeners_.count({endpoint.node, port}) == 0) return port;
  }
  SLUICE_UNREACHABLE();
}

// ---- Listeners ----

Result<std::unique_ptr<Stream>> SimNetwork::accept(ListenerState& listener) {
  for (;;) {
    if (listener.closed) return closed("listener " + listener.address.to_string() + " is closed");
    if (!listener.backlog.empty()) {
      ConnectionPtr conn = std::move(listener.backlog.front());
      listener.backlog.pop_front();
      SLUICE_ASSERT(conn->server.node == listener.node);
      SLUICE_ASSERT(conn->server.established);
      ++stats_.accepts;
      return std::unique_ptr<Stream>(std::make_unique<simnet::SimStream>(*this, std::move(conn), kServer));
    }
    listener.acceptors.wait();
  }
}

void SimNetwork::close_listener(ListenerState& listener) {
  if (listener.closed) return;
  listener.closed = true;
  auto found = listeners_.find({listener.node, listener.address.port});
  if (found != listeners_.end() && found->second.get() == &listener) listeners_.erase(found);
  // Connections nobody accepted are aborted, as a kernel does when the listening socket closes.
  std::deque<ConnectionPtr> backlog = std::move(listener.backlog);
  listener.backlog.clear();
  for (const ConnectionPtr& conn : backlog) abort_side(conn, kServer);
  listener.acceptors.notify_all();
}

// ---- Streams ----

Result<size_t> SimNetwork::stream_read(const ConnectionPtr& conn, int index, MutableByteView out) {
  Side& side = conn->side(index);
  for (;;) {
    if (side.closed) return closed("stream " + side.local.to_string() + " is closed");
    if (side.broken()) {
      return connection_reset("connection " + side.local.to_string() + " - " +
                              conn->side(1 - index).local.to_string() + " reset");
    }
    if (out.empty()) return size_t{0};
    if (side.inbox_bytes > 0) {
      const size_t n = take_from_inbox(side, out);
      SLUICE_ASSERT(n > 0);
      conn->side(1 - index).writers.notify_all();  // the peer's window has room again
      return n;
    }
    if (side.eof) return size_t{0};
    side.readers.wait();
  }
}

std::optional<Bytes> SimNetwork::stream_take_write(const ConnectionPtr& conn, int index) {
  Side& side = conn->side(index);
  for (;;) {
    if (side.closed || side.broken()) return std::nullopt;  // read_some says which
    if (side.inbox_bytes > 0) {
      // A chunk is one write (or a window's share of one): handed over whole unless part of it was read, or the
      // side keeps what it read (for replays).
      if (side.inbox_offset != 0 || side.keep_read) return std::nullopt;
      Bytes chunk = std::move(side.inbox.front());
      side.inbox.pop_front();
      SLUICE_ASSERT(!chunk.empty() && chunk.size() <= side.inbox_bytes);
      side.inbox_bytes -= chunk.size();
      conn->side(1 - index).writers.notify_all();  // the peer's window has room again, as after read_some
      return chunk;
    }
    if (side.eof) return std::nullopt;
    side.readers.wait();
  }
}

Status SimNetwork::stream_write(const ConnectionPtr& conn, int index, ByteView data) {
  return stream_write_owned(conn, index, Bytes(data.begin(), data.end()));
}

Status SimNetwork::stream_write_owned(const ConnectionPtr& conn, int index, Bytes data) {
  Side& side = conn->side(index);
  size_t done = 0;
  for (;;) {
    if (side.closed) return closed("stream " + side.local.to_string() + " is closed");
    if (side.broken()) {
      return connection_reset("connection " + side.local.to_string() + " - " +
                              conn->side(1 - index).local.to_string() + " reset");
    }
    SLUICE_ASSERT(side.established);
    if (done == data.size()) return Status();
    const size_t room = window_room(*conn, index);
    if (room == 0) {
      side.writers.wait();
      continue;
    }
    const size_t n = std::min(room, data.size() - done);
    if (done == 0 && n == data.size()) {
      send(conn, index, simnet::ChunkKind::kData, std::move(data));  // the whole write fits: no copy
      return Status();
    }
    const auto from = data.begin() + static_cast<std::ptrdiff_t>(done);
    send(conn, index, simnet::ChunkKind::kData, Bytes(from, from + static_cast<std::ptrdiff_t>(n)));
    done += n;
  }
}

size_t SimNetwork::window_room(simnet::Connection& conn, int index) const {
  if (config_.send_window_bytes == 0) return std::numeric_limits<size_t>::max();
  const size_t used = conn.side(index).out.bytes + conn.side(1 - index).inbox_bytes;
  return used >= config_.send_window_bytes ? 0 : config_.send_window_bytes - used;
}

void SimNetwork::stream_close(const ConnectionPtr& conn, int index) {
  Side& side = conn->side(index);
  if (side.closed) return;
  side.closed = true;
  stats_.bytes_dropped += side.inbox_bytes;
  side.inbox.clear();
  side.inbox_offset = 0;
  side.inbox_bytes = 0;
  if (!side.broken()) send(conn, index, simnet::ChunkKind::kFin);
  side.readers.notify_all();
  side.writers.notify_all();
  conn->side(1 - index).writers.notify_all();  // the unread bytes dropped here free the peer's window
}

}  // namespace sluice
