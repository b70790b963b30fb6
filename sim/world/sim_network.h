// SimNetwork: the simulated fabric between the nodes of one SimWorld. Each node attaches an endpoint (a
// Network) and gets TCP-like streams: reliable, ordered byte streams per direction, whose bytes arrive after
// a latency drawn from world.network_rng(), as world events (EventKind::kNetwork) tagged with the receiving
// node.
//
// Semantics (the contract the core is tested against):
//  - write_all never parks the fiber with the default unbounded window, and never yields: like a send into
//    a large kernel buffer. With send_window_bytes > 0 it parks while the bytes sent but not yet read by the
//    peer (in flight, held or unread) fill the window: TCP's flow control, a slow reader slows its writer.
//  - Each write is one chunk. A chunk never arrives before the previous chunk of its direction (arrival is
//    max(now + latency, previous arrival)); chunks due at one instant arrive in send order.
//  - connect: the SYN takes one latency to the server node. No listener on the port, or the node is down:
//    kConnectionRefused one round trip after the call. A listener: the server side joins its backlog when
//    the SYN arrives (accept returns it), and connect returns when the SYN-ACK arrives one latency later.
//    Unknown host (never attached): kNotFound at once. A partition that blocks the SYN's direction (at
//    connect time or while it flies), or that swallows the refusal: kTimedOut after connect_timeout (SYNs
//    and refusals are lost, not held). A partition of the reverse direction holds the SYN-ACK like data: the
//    server has accepted; if the client times out first, its side aborts and the server side gets an RST.
//  - partition(a, b) blocks both directions, partition_one_way(from, to) one. Bytes on a blocked direction
//    are held, in-flight ones included (their delivery is cancelled), and sent again in order with fresh
//    latencies on heal: TCP retransmission. A partition alone never breaks a connection.
//  - reset_connections(a, b) breaks every connection between a and b at once: both ends see
//    kConnectionReset on read and write; unread and in-flight bytes are dropped.
//  - close(): local reads and writes fail with kClosed at once (a parked reader or writer wakes); the peer
//    reads the bytes sent before, then end of stream (0). Data arriving at a closed side is dropped and
//    answered with one RST, so a peer that keeps writing soon sees kConnectionReset.
//  - node_down(n): n's listeners vanish (pending accepts fail with kClosed, later connects are refused).
//    Every connection with a side on n loses its in-flight bytes both ways; n's side is dead
//    (kConnectionReset to any fiber of n still around) and an RST travels to the peer, which sees
//    kConnectionReset one latency later (held, like data, while a partition blocks that direction).
//    attach() again after the restart.
//  - A harness that calls world.cancel_node_events(n) must call node_down(n) in the same driver step (before
//    the world steps again): deliveries cancelled behind the fabric's back would leave a gap in a stream.
//
// Ownership: SimNetwork outlives every Network, Stream and Listener it handed out. Streams and listeners
// belong to the node's fibers and may be destroyed at any time (their destructor closes them); connection
// state is shared, so nothing here points into them. Events scheduled here do nothing once the SimNetwork
// is gone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/clock.h"
#include "core/env/network.h"
#include "sim/world/sim_world.h"

namespace sluice {

class Scheduler;

namespace simnet {
enum class ChunkKind : uint8_t;
struct Chunk;
struct Connection;
struct ConnectAttempt;
struct ListenerState;
struct Pipe;
class SimEndpoint;
class SimListener;
class SimStream;
}  // namespace simnet

struct SimNetworkConfig {
  Duration latency_min = std::chrono::microseconds(100);
  Duration latency_max = std::chrono::milliseconds(2);
  Duration connect_timeout = std::chrono::seconds(1);
  size_t send_window_bytes = 0;           // 0: unbounded, write_all never parks
  uint16_t first_ephemeral_port = 40000;  // client ports and listen(port 0) count up from here
};

struct SimNetworkStats {
  uint64_t connects = 0;     // connect() calls
  uint64_t connections = 0;  // handshakes completed (connect returned a stream)
  uint64_t connects_refused = 0;
  uint64_t connects_timed_out = 0;
  uint64_t syns_lost = 0;  // SYNs and refusals swallowed by a partition
  uint64_t accepts = 0;
  uint64_t bytes_sent = 0;       // taken by write_all
  uint64_t bytes_delivered = 0;  // placed in a receiver's buffer
  uint64_t bytes_dropped = 0;    // lost to a reset or a crash, or sent to a closed side
  uint64_t bytes_held = 0;       // bytes that waited behind a partition (once per hold)
  uint64_t chunks_delivered = 0;
  uint64_t resets = 0;  // connection sides broken (each end counts once)
  uint64_t chunks_replayed = 0;  // sent again on a later connection by reset_connections_replaying
};

class SimNetwork {
 public:
  explicit SimNetwork(SimWorld& world, SimNetworkConfig config = {});
  ~SimNetwork();
  SimNetwork(const SimNetwork&) = delete;
  SimNetwork& operator=(const SimNetwork&) = delete;

  // Registers node `node` under `host` (its name, such as "n1") and returns its endpoint, valid as long as
  // the SimNetwork. Called again after node_down (a restart), possibly with a new scheduler: same endpoint,
  // new incarnation. REQUIRES: node != kWorldNode; the node is not up; no other node uses `host`.
  Network& attach(NodeId node, std::string host, Scheduler& scheduler);
  // The node crashed (see the header comment). Idempotent.
  void node_down(NodeId node);
  bool is_up(NodeId node) const;

  // ---- Faults ----
  void partition(NodeId a, NodeId b);
  void partition_one_way(NodeId from, NodeId to);
  void heal();
  void heal(NodeId a, NodeId b);  // both directions between a and b
  bool blocked(NodeId from, NodeId to) const { return blocked_.count({from, to}) != 0; }
  void reset_connections(NodeId a, NodeId b);
  // Duplication and reordering where a stream transport can meet them, at a connection's boundary. Breaks every
  // connection between a and b whose server listens on `port`, as reset_connections does, but the data chunks
  // still in flight or unread on them are kept (and with `resend_read`, the last chunks the receiver had read
  // whole, again): the next connection between the two on that port carries them after its sender's first two
  // chunks, as if the old connection's frames arrived late or a sender resent what it could not know arrived. A
  // chunk partly read is lost. Only for protocols written one whole frame per write (the raft transport), whose
  // framing this keeps. Kept chunks die with either node (node_down).
  void reset_connections_replaying(NodeId a, NodeId b, uint16_t port, bool resend_read);
  // Connections on `port`, open now or later, keep the last chunks each side read, for resend_read (a copy per
  // read chunk, so only on the ports a run will replay).
  void keep_read_chunks(uint16_t port);
  // Latency of the direction from → to, instead of the configured range. REQUIRES: min <= max.
  void set_link_latency(NodeId from, NodeId to, Duration min, Duration max);
  void clear_link_latency(NodeId from, NodeId to);
  // For `length` from now, every latency draw gets an extra uniform [0, extra_max] (a congested fabric).
  void latency_spike(Duration extra_max, Duration length);

  // ---- Reports ----
  const SimNetworkStats& stats() const { return stats_; }
  size_t held_bytes() const;        // bytes held behind partitions right now
  size_t open_connections() const;  // connections some stream, backlog or event still refers to

 private:
  friend class simnet::SimEndpoint;
  friend class simnet::SimListener;
  friend class simnet::SimStream;
  using ConnectionPtr = std::shared_ptr<simnet::Connection>;

  // Endpoint calls (sim_network_endpoint.cc).
  Result<std::unique_ptr<Listener>> listen(simnet::SimEndpoint& endpoint, const Address& address);
  Result<std::unique_ptr<Stream>> connect(simnet::SimEndpoint& endpoint, const Address& address);
  Result<std::unique_ptr<Stream>> accept(simnet::ListenerState& listener);
  void close_listener(simnet::ListenerState& listener);
  Result<size_t> stream_read(const ConnectionPtr& conn, int side, MutableByteView out);
  std::optional<Bytes> stream_take_write(const ConnectionPtr& conn, int side);
  Status stream_write(const ConnectionPtr& conn, int side, ByteView data);
  // The same with bytes the caller gives up: a write that fits the window becomes its chunk without a copy.
  Status stream_write_owned(const ConnectionPtr& conn, int side, Bytes data);
  void stream_close(const ConnectionPtr& conn, int side);
  size_t window_room(simnet::Connection& conn, int side) const;
  uint16_t allocate_port(simnet::SimEndpoint& endpoint, bool for_listener);
  simnet::SimEndpoint* resolve(simnet::SimEndpoint& from, std::string_view host);
  void abandon(simnet::ConnectAttempt& attempt);

  // The handshake (sim_network.cc).
  void send_syn(const std::shared_ptr<simnet::ConnectAttempt>& attempt);
  void on_syn(const std::shared_ptr<simnet::ConnectAttempt>& attempt);
  void send_refusal(const std::shared_ptr<simnet::ConnectAttempt>& attempt);
  void on_refusal(const std::shared_ptr<simnet::ConnectAttempt>& attempt);
  void on_syn_ack(const ConnectionPtr& conn);
  void finish_attempt(simnet::ConnectAttempt& attempt, Status status);

  // Chunks and their delivery (sim_network.cc).
  void send(const ConnectionPtr& conn, int from, simnet::ChunkKind kind, Bytes data = {});
  void send_replays(const ConnectionPtr& conn, int from);
  void keep_for_replay(const ConnectionPtr& conn, int from, bool resend_read);
  void schedule_chunk(const ConnectionPtr& conn, int from, size_t index);
  void deliver(const ConnectionPtr& conn, int from, uint64_t seq);
  void receive(const ConnectionPtr& conn, int to, simnet::Chunk&& chunk);
  void hold(simnet::Pipe& pipe);
  void release(const ConnectionPtr& conn, int from);
  void drop(simnet::Pipe& pipe);
  void break_side(const ConnectionPtr& conn, int side);
  void abort_side(const ConnectionPtr& conn, int side);
  void crash_side(const ConnectionPtr& conn, int side);
  Duration draw_latency(NodeId from, NodeId to);
  void block(NodeId from, NodeId to);
  void unblock(NodeId from, NodeId to);
  template <typename F>
  void for_each_connection(F&& visit);
  void prune_registry();
  simnet::SimEndpoint* endpoint(NodeId node);

  SimWorld& world_;
  SimNetworkConfig config_;
  std::shared_ptr<const bool> alive_;  // events hold a weak_ptr: they do nothing once the fabric is gone
  std::map<NodeId, std::unique_ptr<simnet::SimEndpoint>> endpoints_;
  std::map<std::string, NodeId, std::less<>> hosts_;
  std::map<std::pair<NodeId, uint16_t>, std::shared_ptr<simnet::ListenerState>> listeners_;
  std::map<uint64_t, std::weak_ptr<simnet::Connection>> connections_;  // by id, for faults
  std::set<std::pair<NodeId, NodeId>> blocked_;                        // directed: (from, to)
  std::map<std::pair<NodeId, NodeId>, std::pair<Duration, Duration>> link_latency_;
  // Chunks kept by reset_connections_replaying, by (sender, receiver, server port), for the next connection.
  std::map<std::tuple<NodeId, NodeId, uint16_t>, std::deque<Bytes>> replays_;
  std::set<uint16_t> replay_ports_;  // ports whose connections keep the chunks their sides read
  Instant spike_until_{};
  Duration spike_extra_{0};
  uint64_t next_connection_id_ = 1;
  SimNetworkStats stats_;
};

}  // namespace sluice
