#include "core/raft/transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/base/assert.h"
#include "core/env/sync.h"
#include "core/raft/wire.h"

namespace sluice::raft {
namespace {

// A bound on a queued envelope's bytes without encoding it: its fixed fields at their widest, plus the payloads.
size_t estimated_size(const Envelope& e) {
  size_t size = 2 + 10 * 11;
  for (const Entry& entry : e.message.entries) size += 20 + entry.payload.size();
  return size;
}

bool is_heartbeat(const Message& m) {
  return m.type == MessageType::kHeartbeat || m.type == MessageType::kHeartbeatResponse;
}

Status read_exactly(Stream& stream, MutableByteView out) {
  size_t done = 0;
  while (done < out.size()) {
    Result<size_t> n = stream.read_some(out.subspan(done));
    if (!n.ok()) return n.status();
    if (*n == 0) return Status(Code::kClosed, "the peer closed the connection");
    done += *n;
  }
  return Status();
}

// One live connection to a peer; both its fibers hold it, and it dies with the last.
struct Connection {
  explicit Connection(Scheduler& scheduler, std::unique_ptr<Stream> s) : stream(std::move(s)), wake(scheduler),
                                                                         broken(scheduler) {}
  std::unique_ptr<Stream> stream;
  Event wake;    // the writer: something was queued (or the connection broke)
  Event broken;  // set once, when either side fails or the transport stops
  bool closed = false;
};

struct Peer {
  NodeId id = kNoNode;
  Address address;
  std::shared_ptr<Connection> connection;  // null while there is none
  std::vector<Envelope> queue;
  size_t queued_bytes = 0;
};

}  // namespace

struct RaftTransport::State {
  State(Env& e, NodeId s, Address l, Deliver d, TransportOptions o)
      : env(e), self(s), listen(std::move(l)), deliver(std::move(d)), options(o), stop(e.scheduler) {}

  Env& env;
  NodeId self;
  Address listen;
  Deliver deliver;
  TransportOptions options;
  std::map<NodeId, Peer> peers;
  std::unique_ptr<Listener> listener;
  std::vector<FiberRef> fibers;
  // Accepted streams whose handshake is still being read: stop() closes them, or a dialer that fell silent before
  // its handshake (it crashed, or its bytes are held) would hold the stop forever.
  std::set<Stream*> handshaking;
  TransportStats stats;
  Event stop;
  bool started = false;
  bool stopped = false;

  void spawn(std::string name, std::function<void()> body) {
    // Finished fibers are forgotten as new ones come, so a flapping link does not grow the list without bound.
    std::erase_if(fibers, [](const FiberRef& f) { return f.done(); });
    fibers.push_back(env.scheduler.spawn(std::move(name), std::move(body)));
  }

  void break_connection(Peer& peer, const std::shared_ptr<Connection>& connection) {
    if (!connection->closed) {
      connection->closed = true;
      connection->stream->close();
      connection->broken.set();
      connection->wake.set();
    }
    if (peer.connection == connection) {
      peer.connection = nullptr;
      stats.messages_dropped += peer.queue.size();
      peer.queue.clear();
      peer.queued_bytes = 0;
    }
  }

  // A new connection to `peer` after its handshake: replaces any older one, and gets a writer and a reader.
  void attach(Peer& peer, std::unique_ptr<Stream> stream) {
    if (peer.connection) break_connection(peer, peer.connection);
    auto connection = std::make_shared<Connection>(env.scheduler, std::move(stream));
    peer.connection = connection;
    ++stats.connections_opened;
    const NodeId id = peer.id;
    spawn(fmt::format("raft-write-{}", id), [this, id, connection] { write_loop(peers.at(id), connection); });
    spawn(fmt::format("raft-read-{}", id), [this, id, connection] { read_loop(peers.at(id), connection); });
  }

  void write_loop(Peer& peer, const std::shared_ptr<Connection>& connection) {
    Bytes frame;
    while (!connection->closed) {
      if (peer.queue.empty()) {
        connection->wake.reset();
        connection->wake.wait();
        continue;
      }
      SLUICE_ASSERT(peer.connection == connection);
      std::vector<Envelope> batch;
      batch.swap(peer.queue);
      peer.queued_bytes = 0;
      frame.clear();
      encode_batch(batch, frame);
      const Status written = connection->stream->write_all(frame);
      if (!written.ok()) {
        stats.messages_dropped += batch.size();
        break_connection(peer, connection);
        return;
      }
      ++stats.frames_sent;
      stats.messages_sent += batch.size();
      stats.bytes_sent += frame.size();
      for (const Envelope& e : batch) stats.heartbeats_sent += is_heartbeat(e.message) ? 1 : 0;
    }
  }

  // Reads one frame's body into `body`; an error breaks the connection (a bad frame is counted as refused).
  Result<Frame> read_frame(Stream& stream, Bytes& body) {
    uint8_t header[kFrameHeaderBytes];
    SLUICE_TRY(read_exactly(stream, MutableByteView(header, sizeof(header))));
    const uint32_t length = frame_length(ByteView(header, sizeof(header)));
    if (length < 2 || length > options.max_frame_bytes) {
      ++stats.frames_refused;
      return Status(Code::kCorruption, fmt::format("raft frame of {} bytes (at most {})", length,
                                                   options.max_frame_bytes));
    }
    body.resize(length);
    SLUICE_TRY(read_exactly(stream, body));
    Result<Frame> frame = decode_frame(body);
    if (!frame.ok()) ++stats.frames_refused;
    return frame;
  }

  void read_loop(Peer& peer, const std::shared_ptr<Connection>& connection) {
    Bytes body;
    while (!connection->closed) {
      Result<Frame> frame = read_frame(*connection->stream, body);
      if (!frame.ok() || frame->kind != FrameKind::kBatch) {
        if (frame.ok()) ++stats.frames_refused;  // a second handshake
        if (!frame.ok() && frame.status().code() == Code::kCorruption) {
          env.log.warn("raft transport: node {}: {}", peer.id, frame.status().message());
        }
        break_connection(peer, connection);
        return;
      }
      ++stats.frames_received;
      stats.messages_received += frame->batch.size();
      if (!stopped) deliver(peer.id, frame->batch);
    }
  }

  // The higher-id side: reads the dialer's handshake, then serves the connection.
  void accept_one(std::unique_ptr<Stream> stream) {
    if (stopped) return stream->close();
    // Forgotten however this ends (a killed node unwinds this fiber from inside the read); nothing suspends between
    // the read and the return, so the entry never outlives the stream.
    struct Handshaking {
      std::set<Stream*>& set;
      Stream* stream;
      ~Handshaking() { set.erase(stream); }
    } registered{handshaking, stream.get()};
    handshaking.insert(stream.get());
    Bytes body;
    Result<Frame> frame = read_frame(*stream, body);
    const bool known = frame.ok() && frame->kind == FrameKind::kHandshake && peers.contains(frame->handshake_from) &&
                       frame->handshake_from < self;
    if (!known) {
      if (frame.ok()) ++stats.frames_refused;
      stream->close();
      return;
    }
    if (stopped) return stream->close();
    attach(peers.at(frame->handshake_from), std::move(stream));
  }

  void accept_loop() {
    while (!stopped) {
      Result<std::unique_ptr<Stream>> stream = listener->accept();
      if (!stream.ok()) {
        if (stopped || stream.status().code() == Code::kClosed) return;
        stop.wait_for(options.connect_backoff);  // a transient accept failure: do not spin
        continue;
      }
      // The handshake is read on a fiber of its own, so that a silent dialer cannot hold the accept loop.
      auto holder = std::make_shared<std::unique_ptr<Stream>>(std::move(*stream));
      spawn("raft-accept", [this, holder] { accept_one(std::move(*holder)); });
    }
  }

  // The lower-id side: keeps one connection to `peer` open, retrying with exponential backoff.
  void dial_loop(Peer& peer) {
    Duration backoff = options.connect_backoff;
    while (!stopped) {
      Result<std::unique_ptr<Stream>> stream = env.net.connect(peer.address);
      Bytes handshake;
      encode_handshake(self, handshake);
      if (stream.ok() && !stopped && (*stream)->write_all(handshake).ok()) {
        attach(peer, std::move(*stream));
        backoff = options.connect_backoff;
        const std::shared_ptr<Connection> connection = peer.connection;
        while (!stopped && !connection->broken.is_set()) connection->broken.wait();
        if (stopped) return;
      } else if (stream.ok()) {
        (*stream)->close();
      }
      stop.wait_for(backoff);
      backoff = std::min(backoff * 2, options.max_connect_backoff);
    }
  }
};

RaftTransport::RaftTransport(Env& env, NodeId self, Address listen, std::map<NodeId, Address> peers, Deliver deliver,
                             TransportOptions options)
    : state_(std::make_unique<State>(env, self, std::move(listen), std::move(deliver), options)) {
  SLUICE_ASSERT(self != kNoNode);
  SLUICE_ASSERT(state_->deliver != nullptr);
  SLUICE_ASSERT(options.connect_backoff > Duration(0));
  SLUICE_ASSERT(options.max_connect_backoff >= options.connect_backoff);
  for (auto& [id, address] : peers) {
    SLUICE_ASSERT_MSG(id != self && id != kNoNode, "peers are the other nodes");
    Peer& peer = state_->peers[id];
    peer.id = id;
    peer.address = address;
  }
}

RaftTransport::~RaftTransport() {
  stop();
  Scheduler& scheduler = state_->env.scheduler;
  if (!scheduler.in_fiber()) return;  // a killed node: its fibers unwind on their own, newest first
  // A node killed while this waits (a crash during a graceful stop) unwinds its fibers newest first, so ours are
  // done by the time FiberKilled reaches this join; a destructor must not let it escape.
  try {
    for (const FiberRef& fiber : state_->fibers) {
      if (!fiber.done()) scheduler.join(fiber);
    }
  } catch (const FiberKilled&) {
    for (const FiberRef& fiber : state_->fibers) SLUICE_ASSERT(fiber.done());
  }
}

Status RaftTransport::start() {
  State& s = *state_;
  SLUICE_ASSERT_MSG(!s.started, "a transport starts once");
  s.started = true;
  Result<std::unique_ptr<Listener>> listener = s.env.net.listen(s.listen);
  if (!listener.ok()) {
    return Status(listener.status().code(),
                  fmt::format("raft transport: listen on {}: {}", s.listen.to_string(), listener.status().message()));
  }
  s.listener = std::move(*listener);
  s.spawn("raft-accept-loop", [&s] { s.accept_loop(); });
  for (auto& [id, peer] : s.peers) {
    if (id > s.self) s.spawn(fmt::format("raft-dial-{}", id), [&s, &peer] { s.dial_loop(peer); });
  }
  return Status();
}

void RaftTransport::stop() {
  State& s = *state_;
  if (s.stopped) return;
  s.stopped = true;
  s.stop.set();
  if (s.listener) s.listener->close();
  for (Stream* stream : s.handshaking) stream->close();
  for (auto& [id, peer] : s.peers) {
    if (peer.connection) s.break_connection(peer, peer.connection);
  }
}

void RaftTransport::send(NodeId to, GroupId group, Message message) {
  std::vector<Envelope> batch;
  batch.push_back(Envelope{group, std::move(message)});
  send(to, std::move(batch));
}

void RaftTransport::send(NodeId to, std::vector<Envelope> batch) {
  State& s = *state_;
  auto it = s.peers.find(to);
  SLUICE_ASSERT_MSG(it != s.peers.end(), "a send to a node that is not a peer");
  Peer& peer = it->second;
  if (s.stopped || !peer.connection) {
    s.stats.messages_dropped += batch.size();
    return;
  }
  for (Envelope& e : batch) {
    SLUICE_ASSERT(e.message.to == to);
    const size_t size = estimated_size(e);
    if (peer.queued_bytes + size > s.options.max_queued_bytes) {
      ++s.stats.messages_dropped;
      continue;
    }
    peer.queued_bytes += size;
    peer.queue.push_back(std::move(e));
  }
  peer.connection->wake.set();
}

bool RaftTransport::connected(NodeId peer) const {
  auto it = state_->peers.find(peer);
  return it != state_->peers.end() && it->second.connection != nullptr;
}

const TransportStats& RaftTransport::stats() const { return state_->stats; }

NodeId RaftTransport::self() const { return state_->self; }

}  // namespace sluice::raft
