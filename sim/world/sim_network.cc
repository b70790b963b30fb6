// The fabric: endpoints, faults, the handshake, and the delivery of chunks. The node-side objects (endpoint,
// stream, listener) are in sim_network_endpoint.cc.
#include "sim/world/sim_network.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/base/assert.h"
#include "sim/world/sim_network_state.h"

namespace sluice {

using simnet::Chunk;
using simnet::ChunkKind;
using simnet::ConnectAttempt;
using simnet::kClient;
using simnet::kServer;
using simnet::ListenerState;
using simnet::Pipe;
using simnet::Side;
using simnet::SimEndpoint;

namespace {

// Prunes the weak connection registry every so many new connections, so that it stays bounded without faults.
constexpr uint64_t kPruneEvery = 256;

// A world event that does nothing once the SimNetwork that scheduled it is gone.
template <typename F>
auto guarded(const std::shared_ptr<const bool>& alive, F action) {
  return [alive = std::weak_ptr<const bool>(alive), action = std::move(action)] {
    if (!alive.expired()) action();
  };
}

}  // namespace

SimNetwork::SimNetwork(SimWorld& world, SimNetworkConfig config)
    : world_(world), config_(config), alive_(std::make_shared<const bool>(true)) {
  SLUICE_ASSERT(config_.latency_min.count() >= 0);
  SLUICE_ASSERT(config_.latency_min <= config_.latency_max);
  SLUICE_ASSERT(config_.connect_timeout.count() > 0);
  SLUICE_ASSERT(config_.first_ephemeral_port > 0);
}

SimNetwork::~SimNetwork() {
  for (const auto& [id, weak] : connections_) {
    if (const ConnectionPtr conn = weak.lock()) conn->orphaned = true;
  }
}

// ---- Nodes ----

Network& SimNetwork::attach(NodeId node, std::string host, Scheduler& scheduler) {
  SLUICE_ASSERT(node != kWorldNode);
  SLUICE_ASSERT(!host.empty());
  auto named = hosts_.find(host);
  SLUICE_ASSERT_MSG(named == hosts_.end() || named->second == node, "two nodes with one host name");
  std::unique_ptr<SimEndpoint>& slot = endpoints_[node];
  if (slot == nullptr) slot = std::make_unique<SimEndpoint>(*this, node, config_.first_ephemeral_port);
  SimEndpoint& endpoint = *slot;
  SLUICE_ASSERT_MSG(!endpoint.up, "node attached twice without node_down");
  if (!endpoint.host.empty() && endpoint.host != host) hosts_.erase(endpoint.host);
  hosts_[host] = node;
  endpoint.host = std::move(host);
  endpoint.scheduler = &scheduler;
  endpoint.up = true;
  ++endpoint.incarnation;
  return endpoint;
}

void SimNetwork::node_down(NodeId node) {
  SimEndpoint* down = endpoint(node);
  if (down == nullptr || !down->up) return;
  down->up = false;
  // Connections first: the backlog of a listener may be what keeps a connection alive.
  for_each_connection([&](const ConnectionPtr& conn) {
    for (int index : {kClient, kServer}) {
      if (conn->side(index).node == node) crash_side(conn, index);
    }
  });
  std::vector<std::shared_ptr<ListenerState>> vanished;
  for (const auto& [key, listener] : listeners_) {
    if (key.first == node) vanished.push_back(listener);
  }
  for (const std::shared_ptr<ListenerState>& listener : vanished) close_listener(*listener);
  std::erase_if(replays_, [node](const auto& entry) {
    return std::get<0>(entry.first) == node || std::get<1>(entry.first) == node;
  });
  SLUICE_ASSERT(std::none_of(listeners_.begin(), listeners_.end(),
                             [node](const auto& entry) { return entry.first.first == node; }));
}

bool SimNetwork::is_up(NodeId node) const {
  auto found = endpoints_.find(node);
  return found != endpoints_.end() && found->second->up;
}

SimEndpoint* SimNetwork::endpoint(NodeId node) {
  auto found = endpoints_.find(node);
  return found == endpoints_.end() ? nullptr : found->second.get();
}

// ---- Faults ----

void SimNetwork::partition(NodeId a, NodeId b) {
  block(a, b);
  block(b, a);
}

void SimNetwork::partition_one_way(NodeId from, NodeId to) { block(from, to); }

void SimNetwork::heal() {
  const std::set<std::pair<NodeId, NodeId>> was_blocked = blocked_;
  for (const auto& [from, to] : was_blocked) unblock(from, to);
  SLUICE_ASSERT(blocked_.empty());
}

void SimNetwork::heal(NodeId a, NodeId b) {
  unblock(a, b);
  unblock(b, a);
}

void SimNetwork::block(NodeId from, NodeId to) {
  if (from == to) return;  // a node always reaches itself
  if (!blocked_.insert({from, to}).second) return;
  for_each_connection([&](const ConnectionPtr& conn) {
    for (int index : {kClient, kServer}) {
      if (conn->side(index).node == from && conn->side(1 - index).node == to) hold(conn->side(index).out);
    }
  });
}

void SimNetwork::unblock(NodeId from, NodeId to) {
  if (blocked_.erase({from, to}) == 0) return;
  for_each_connection([&](const ConnectionPtr& conn) {
    for (int index : {kClient, kServer}) {
      if (conn->side(index).node == from && conn->side(1 - index).node == to) release(conn, index);
    }
  });
}

void SimNetwork::reset_connections(NodeId a, NodeId b) {
  for_each_connection([&](const ConnectionPtr& conn) {
    const NodeId client = conn->client.node;
    const NodeId server = conn->server.node;
    if ((client == a && server == b) || (client == b && server == a)) {
      break_side(conn, kClient);
      break_side(conn, kServer);
    }
  });
}

void SimNetwork::reset_connections_replaying(NodeId a, NodeId b, uint16_t port, bool resend_read) {
  for_each_connection([&](const ConnectionPtr& conn) {
    const NodeId client = conn->client.node;
    const NodeId server = conn->server.node;
    const bool between = (client == a && server == b) || (client == b && server == a);
    if (!between || conn->server.local.port != port) return;
    if (conn->client.broken() || conn->server.broken()) return;
    keep_for_replay(conn, kClient, resend_read);
    keep_for_replay(conn, kServer, resend_read);
    break_side(conn, kClient);
    break_side(conn, kServer);
  });
}

void SimNetwork::keep_read_chunks(uint16_t port) {
  replay_ports_.insert(port);
  for_each_connection([&](const ConnectionPtr& conn) {
    if (conn->server.local.port == port) conn->client.keep_read = conn->server.keep_read = true;
  });
}

// What `from` sent that the other side has not read whole (and, with resend_read, the last it read whole), in send
// order, for the next connection between the two nodes on this port.
void SimNetwork::keep_for_replay(const ConnectionPtr& conn, int from, bool resend_read) {
  const Side& sender = conn->side(from);
  const Side& receiver = conn->side(1 - from);
  std::deque<Bytes>& kept = replays_[{sender.node, receiver.node, conn->server.local.port}];
  if (resend_read) kept.insert(kept.end(), receiver.read_recently.begin(), receiver.read_recently.end());
  // A chunk partly read cannot be sent again without breaking the framing: it is lost, as a reset loses it.
  for (size_t i = receiver.inbox_offset == 0 ? 0 : 1; i < receiver.inbox.size(); ++i) {
    kept.push_back(receiver.inbox[i]);
  }
  for (const Chunk& chunk : sender.out.chunks) {
    if (chunk.kind == ChunkKind::kData) kept.push_back(chunk.data);
  }
  if (!kept.empty()) SLUICE_PROBE("sim_network.chunks_kept_for_replay");
}

// After the sender's first chunks on a new connection, the chunks an earlier one between the same nodes kept.
void SimNetwork::send_replays(const ConnectionPtr& conn, int from) {
  Side& side = conn->side(from);
  if (side.data_chunks_sent != simnet::kChunksBeforeReplay || replays_.empty()) return;
  auto found = replays_.find({side.node, conn->side(1 - from).node, conn->server.local.port});
  if (found == replays_.end()) return;
  std::deque<Bytes> kept = std::move(found->second);
  replays_.erase(found);
  for (Bytes& chunk : kept) {
    ++stats_.chunks_replayed;
    send(conn, from, ChunkKind::kData, std::move(chunk));
  }
}

void SimNetwork::set_link_latency(NodeId from, NodeId to, Duration min, Duration max) {
  SLUICE_ASSERT(min.count() >= 0);
  SLUICE_ASSERT(min <= max);
  link_latency_[{from, to}] = {min, max};
}

void SimNetwork::clear_link_latency(NodeId from, NodeId to) { link_latency_.erase({from, to}); }

void SimNetwork::latency_spike(Duration extra_max, Duration length) {
  SLUICE_ASSERT(extra_max.count() >= 0);
  SLUICE_ASSERT(length.count() >= 0);
  spike_extra_ = extra_max;
  spike_until_ = world_.now() + length;
}

Duration SimNetwork::draw_latency(NodeId from, NodeId to) {
  Duration low = config_.latency_min;
  Duration high = config_.latency_max;
  if (auto link = link_latency_.find({from, to}); link != link_latency_.end()) {
    low = link->second.first;
    high = link->second.second;
  }
  Duration latency(world_.network_rng().uniform_range(low.count(), high.count()));
  if (world_.now() < spike_until_) {
    latency += Duration(world_.network_rng().uniform_range(0, spike_extra_.count()));
  }
  SLUICE_ASSERT(latency >= low);
  return latency;
}

// ---- Reports ----

size_t SimNetwork::held_bytes() const {
  size_t held = 0;
  for (const auto& [id, weak] : connections_) {
    const ConnectionPtr conn = weak.lock();
    if (conn == nullptr) continue;
    for (int index : {kClient, kServer}) {
      const Pipe& pipe = conn->side(index).out;
      if (pipe.held > 0) held += pipe.bytes;
    }
  }
  return held;
}

size_t SimNetwork::open_connections() const {
  return static_cast<size_t>(std::count_if(connections_.begin(), connections_.end(),
                                           [](const auto& entry) { return !entry.second.expired(); }));
}

template <typename F>
void SimNetwork::for_each_connection(F&& visit) {
  // By id, so that faults touch connections (and draw latencies) in a replayable order.
  for (auto it = connections_.begin(); it != connections_.end();) {
    const ConnectionPtr conn = it->second.lock();
    if (conn == nullptr) {
      it = connections_.erase(it);
      continue;
    }
    ++it;
    visit(conn);
  }
}

void SimNetwork::prune_registry() {
  std::erase_if(connections_, [](const auto& entry) { return entry.second.expired(); });
}

// ---- The handshake ----

void SimNetwork::send_syn(const std::shared_ptr<ConnectAttempt>& attempt) {
  if (blocked(attempt->client, attempt->server)) {
    ++stats_.syns_lost;
    return;
  }
  const Instant due = world_.now() + draw_latency(attempt->client, attempt->server);
  world_.schedule_at(due, attempt->server, EventKind::kNetwork,
                     guarded(alive_, [this, attempt] { on_syn(attempt); }));
}

void SimNetwork::on_syn(const std::shared_ptr<ConnectAttempt>& attempt) {
  if (attempt->abandoned) return;  // nobody would take the SYN-ACK
  SimEndpoint* client = endpoint(attempt->client);
  SLUICE_ASSERT(client != nullptr);
  if (!client->up || client->incarnation != attempt->client_incarnation) return;  // the client node died
  if (blocked(attempt->client, attempt->server)) {
    ++stats_.syns_lost;  // the partition came while the SYN flew
    return;
  }
  SimEndpoint* server = endpoint(attempt->server);
  auto found = listeners_.find({attempt->server, attempt->server_address.port});
  if (server == nullptr || !server->up || found == listeners_.end()) {
    send_refusal(attempt);
    return;
  }
  ListenerState& listener = *found->second;
  SLUICE_ASSERT(!listener.closed);
  SLUICE_ASSERT(listener.node == server->node);
  auto conn = std::make_shared<simnet::Connection>(
      next_connection_id_++, attempt->client, attempt->client_local, *attempt->client_scheduler,
      listener.node, listener.address, listener.acceptors.scheduler());
  conn->server.established = true;
  if (replay_ports_.contains(listener.address.port)) conn->client.keep_read = conn->server.keep_read = true;
  conn->attempt = attempt;
  attempt->conn = conn;
  connections_.emplace(conn->id, conn);
  if (conn->id % kPruneEvery == 0) prune_registry();
  listener.backlog.push_back(conn);
  listener.acceptors.notify_one();
  send(conn, kServer, ChunkKind::kSynAck);
}

void SimNetwork::send_refusal(const std::shared_ptr<ConnectAttempt>& attempt) {
  if (blocked(attempt->server, attempt->client)) {
    ++stats_.syns_lost;
    return;
  }
  const Instant due = world_.now() + draw_latency(attempt->server, attempt->client);
  world_.schedule_at(due, attempt->client, EventKind::kNetwork,
                     guarded(alive_, [this, attempt] { on_refusal(attempt); }));
}

void SimNetwork::on_refusal(const std::shared_ptr<ConnectAttempt>& attempt) {
  if (attempt->finished || attempt->abandoned) return;
  if (blocked(attempt->server, attempt->client)) {
    ++stats_.syns_lost;  // the partition came while the refusal flew
    return;
  }
  finish_attempt(*attempt, connection_refused("nobody listens on " + attempt->server_address.to_string()));
}

void SimNetwork::on_syn_ack(const ConnectionPtr& conn) {
  Side& client = conn->client;
  SLUICE_ASSERT(!client.established);
  SLUICE_ASSERT(!client.broken());
  // An abandoned attempt aborted the client side, so the SYN-ACK was dropped before it came here.
  const std::shared_ptr<ConnectAttempt> attempt = conn->attempt.lock();
  SLUICE_ASSERT(attempt != nullptr);
  SLUICE_ASSERT(!attempt->abandoned);
  SLUICE_ASSERT(attempt->conn == conn);
  client.established = true;
  conn->attempt.reset();
  ++stats_.connections;
  finish_attempt(*attempt, Status());
}

void SimNetwork::finish_attempt(ConnectAttempt& attempt, Status status) {
  SLUICE_ASSERT(!attempt.finished);
  SLUICE_ASSERT(!attempt.abandoned);
  if (status.code() == Code::kConnectionRefused) ++stats_.connects_refused;
  attempt.finished = true;
  attempt.status = std::move(status);
  attempt.waiters.notify_all();
}

// ---- Chunks ----

void SimNetwork::send(const ConnectionPtr& conn, int from, ChunkKind kind, Bytes data) {
  SLUICE_ASSERT(kind != ChunkKind::kData || !data.empty());
  Side& side = conn->side(from);
  Pipe& pipe = side.out;
  const size_t size = data.size();
  pipe.chunks.push_back(Chunk{.seq = pipe.next_seq++, .kind = kind, .data = std::move(data), .event = 0});
  pipe.bytes += size;
  stats_.bytes_sent += size;
  if (kind == ChunkKind::kData) ++side.data_chunks_sent;
  if (blocked(side.node, conn->side(1 - from).node)) {
    ++pipe.held;
    stats_.bytes_held += size;
    SLUICE_PROBE("sim_network.bytes_held_by_partition");
    SLUICE_ASSERT(pipe.held == pipe.chunks.size());
  } else {
    SLUICE_ASSERT(pipe.held == 0);
    schedule_chunk(conn, from, pipe.chunks.size() - 1);
  }
  // Replays are kept only by a fault (reset_connections_replaying): mostly there are none, and no call.
  if (kind == ChunkKind::kData && !replays_.empty()) send_replays(conn, from);
}

void SimNetwork::schedule_chunk(const ConnectionPtr& conn, int from, size_t index) {
  Pipe& pipe = conn->side(from).out;
  SLUICE_ASSERT(index < pipe.chunks.size());
  Chunk& chunk = pipe.chunks[index];
  SLUICE_ASSERT(chunk.event == 0);
  SLUICE_ASSERT(index == 0 || pipe.chunks[index - 1].seq + 1 == chunk.seq);
  const NodeId to = conn->side(1 - from).node;
  Instant due = world_.now() + draw_latency(conn->side(from).node, to);
  due = std::max(due, pipe.last_due);  // never overtake the previous chunk of this direction
  pipe.last_due = due;
  chunk.event = world_.schedule_at(due, to, EventKind::kNetwork, [this, conn, from, seq = chunk.seq] {
    if (!conn->orphaned) deliver(conn, from, seq);
  });
  SLUICE_ASSERT(chunk.event != 0);
}

void SimNetwork::deliver(const ConnectionPtr& conn, int from, uint64_t seq) {
  Pipe& pipe = conn->side(from).out;
  SLUICE_ASSERT(!pipe.chunks.empty());
  SLUICE_ASSERT_MSG(pipe.chunks.front().seq == seq, "chunks of one direction arrive in send order");
  SLUICE_ASSERT(seq == pipe.delivered_seq + 1);
  SLUICE_ASSERT(pipe.chunks.front().event != 0);
  SLUICE_ASSERT(pipe.held == 0);
  SLUICE_ASSERT(!blocked(conn->side(from).node, conn->side(1 - from).node));
  Chunk chunk = std::move(pipe.chunks.front());
  pipe.chunks.pop_front();
  SLUICE_ASSERT(pipe.bytes >= chunk.data.size());
  pipe.bytes -= chunk.data.size();
  pipe.delivered_seq = seq;
  ++stats_.chunks_delivered;
  receive(conn, 1 - from, std::move(chunk));
}

void SimNetwork::receive(const ConnectionPtr& conn, int to, Chunk&& chunk) {
  Side& side = conn->side(to);
  if (side.broken()) {
    stats_.bytes_dropped += chunk.data.size();
    return;
  }
  switch (chunk.kind) {
    case ChunkKind::kRst:
      break_side(conn, to);
      return;
    case ChunkKind::kSynAck:
      SLUICE_ASSERT(to == kClient);
      on_syn_ack(conn);
      return;
    case ChunkKind::kFin:
      SLUICE_ASSERT(side.established);
      SLUICE_ASSERT_MSG(!side.eof, "one FIN per direction");
      side.eof = true;
      side.readers.notify_all();
      return;
    case ChunkKind::kData:
      SLUICE_ASSERT(side.established);
      SLUICE_ASSERT_MSG(!side.eof, "no data after the FIN");
      if (side.closed) {
        // A closed socket answers data with an RST, so that a peer that keeps writing learns it.
        stats_.bytes_dropped += chunk.data.size();
        if (!side.rst_sent) {
          side.rst_sent = true;
          send(conn, to, ChunkKind::kRst);
        }
        return;
      }
      stats_.bytes_delivered += chunk.data.size();
      side.inbox_bytes += chunk.data.size();
      side.inbox.push_back(std::move(chunk.data));
      side.readers.notify_all();
      return;
  }
  SLUICE_UNREACHABLE();
}

void SimNetwork::hold(Pipe& pipe) {
  for (Chunk& chunk : pipe.chunks) {
    if (chunk.event == 0) continue;
    // False when a crash cancelled the node's events first; node_down then drops the pipe.
    (void)world_.cancel(chunk.event);
    chunk.event = 0;
    ++pipe.held;
    stats_.bytes_held += chunk.data.size();
  }
  SLUICE_ASSERT(pipe.held == pipe.chunks.size());
  pipe.last_due = Instant{};  // nothing of this direction is scheduled any more
}

void SimNetwork::release(const ConnectionPtr& conn, int from) {
  Pipe& pipe = conn->side(from).out;
  SLUICE_ASSERT(pipe.held == pipe.chunks.size());
  for (size_t index = 0; index < pipe.chunks.size(); ++index) schedule_chunk(conn, from, index);
  pipe.held = 0;
}

void SimNetwork::drop(Pipe& pipe) {
  for (Chunk& chunk : pipe.chunks) {
    if (chunk.event != 0) (void)world_.cancel(chunk.event);
  }
  stats_.bytes_dropped += pipe.bytes;
  pipe.chunks.clear();
  pipe.delivered_seq = pipe.next_seq - 1;
  pipe.bytes = 0;
  pipe.held = 0;
  pipe.last_due = Instant{};
}

void SimNetwork::break_side(const ConnectionPtr& conn, int index) {
  Side& side = conn->side(index);
  if (side.broken()) return;
  side.reset = true;
  ++stats_.resets;
  SLUICE_PROBE("sim_network.connection_reset");
  drop(side.out);  // nothing this side sent can be delivered to an end that is gone
  stats_.bytes_dropped += side.inbox_bytes;
  side.inbox.clear();
  side.inbox_offset = 0;
  side.inbox_bytes = 0;
  side.readers.notify_all();
  side.writers.notify_all();
  if (index == kClient && !side.established) {
    // An RST in answer to the SYN: the connect fails.
    const std::shared_ptr<ConnectAttempt> attempt = conn->attempt.lock();
    if (attempt != nullptr && !attempt->finished && !attempt->abandoned) {
      finish_attempt(*attempt, connection_refused("connection to " + attempt->server_address.to_string() +
                                                  " reset during the handshake"));
    }
  }
}

void SimNetwork::abort_side(const ConnectionPtr& conn, int index) {
  if (conn->side(index).broken()) return;
  break_side(conn, index);
  if (!conn->side(1 - index).broken()) send(conn, index, ChunkKind::kRst);
}

void SimNetwork::crash_side(const ConnectionPtr& conn, int index) {
  Side& side = conn->side(index);
  Side& peer = conn->side(1 - index);
  if (side.dead) {
    // Dead since an earlier crash of its node, and the peer may have written since (it has not heard the RST):
    // this crash cancelled those deliveries with the node's events, so the pipe must forget them too.
    drop(peer.out);
    peer.writers.notify_all();
    return;
  }
  const bool was_broken = side.broken();
  side.dead = true;
  if (!was_broken) ++stats_.resets;
  drop(side.out);
  drop(peer.out);  // deliveries to the dead side
  stats_.bytes_dropped += side.inbox_bytes;
  side.inbox.clear();
  side.inbox_offset = 0;
  side.inbox_bytes = 0;
  side.readers.notify_all();
  side.writers.notify_all();
  // The dead node's kernel answers for it: the peer learns after one latency (or after the heal).
  if (!was_broken && !peer.broken() && peer.node != side.node) send(conn, index, ChunkKind::kRst);
}

}  // namespace sluice
