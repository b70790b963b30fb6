// RaftTransport: raft messages between the nodes of a cluster, for every raft group a node hosts, over the Env's
// network. One connection per peer pair (the lower node id dials; the higher accepts), every group multiplexed on
// it; each frame starts with a version byte (core/raft/wire.h; GroupId and Envelope are in envelope.h). Whatever
// was queued for a peer while its writer was busy leaves as one frame, so a tick that makes a thousand groups
// heartbeat sends one frame per peer, not a thousand (coalescing; stats() counts both).
//
// Delivery is best effort, as raft assumes: a broken connection loses what was queued or in flight, and a send
// to an unreachable peer is dropped (counted), never buffered without bound. Messages to one peer arrive in order
// while a connection lasts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/env/env.h"
#include "core/raft/envelope.h"

namespace sluice::raft {

struct TransportOptions {
  Duration connect_backoff = std::chrono::milliseconds(50);  // doubles per failed attempt
  Duration max_connect_backoff = std::chrono::seconds(1);
  size_t max_queued_bytes = 64 << 20;  // per peer; sends beyond it are dropped (raft retransmits)
  uint32_t max_frame_bytes = 64 << 20;  // a larger inbound frame breaks the connection
};

struct TransportStats {
  uint64_t frames_sent = 0;
  uint64_t messages_sent = 0;
  uint64_t heartbeats_sent = 0;  // kHeartbeat and kHeartbeatResponse messages among messages_sent
  uint64_t bytes_sent = 0;
  uint64_t frames_received = 0;
  uint64_t messages_received = 0;
  uint64_t messages_dropped = 0;  // no connection, queue over its bound, or lost with a broken connection
  uint64_t connections_opened = 0;
  uint64_t frames_refused = 0;  // bad version, bad length, undecodable body: the connection is broken
};

class RaftTransport {
 public:
  // Called on the transport's reader fiber with every message of one inbound frame, in order. `from` is the
  // peer the connection's handshake named.
  using Deliver = std::function<void(NodeId from, std::vector<Envelope>& batch)>;

  // `peers` maps every other node of the cluster to its raft address; `listen` is this node's.
  RaftTransport(Env& env, NodeId self, Address listen, std::map<NodeId, Address> peers, Deliver deliver,
                TransportOptions options = {});
  ~RaftTransport();  // stop()
  RaftTransport(const RaftTransport&) = delete;
  RaftTransport& operator=(const RaftTransport&) = delete;

  // Listens and starts a dialer for every peer with a higher id. From a fiber.
  Status start();
  // Closes the listener and every connection; fibers it spawned end. Idempotent; never blocks.
  void stop();

  // Queues `message` for `to` (message.to == to, a known peer). Never blocks.
  void send(NodeId to, GroupId group, Message message);
  // Queues a batch; the common case after one round of every group's Ready.
  void send(NodeId to, std::vector<Envelope> batch);

  bool connected(NodeId peer) const;
  const TransportStats& stats() const;
  NodeId self() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sluice::raft
