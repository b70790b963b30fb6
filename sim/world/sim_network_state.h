// SimNetwork's shared connection state (internal to sim/sim_network*.cc).
//
// A connection is one shared object with two sides, each owned by the node it lives on: the SimStream objects
// on the nodes, the listener backlog, the connect attempt and every pending delivery event hold it by
// shared_ptr, and the fabric only keeps a weak registry. So a stream may be destroyed while bytes are still
// in flight, and a crashed node's streams may be destroyed before or after SimNetwork::node_down, without
// dangling pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "core/base/assert.h"
#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/env/network.h"
#include "core/env/scheduler.h"
#include "sim/world/sim_network.h"
#include "sim/world/sim_world.h"

namespace sluice::simnet {

inline constexpr int kClient = 0;  // the side that called connect
inline constexpr int kServer = 1;  // the side that a listener accepted
// The chunks a side keeps of what it read whole, for SimNetwork::reset_connections_replaying's resend_read.
inline constexpr size_t kKeptReadChunks = 2;
// A replayed connection's sender writes this many chunks of its own before the kept ones (a handshake and a frame).
inline constexpr uint64_t kChunksBeforeReplay = 2;

enum class ChunkKind : uint8_t {
  kData,    // bytes of one write_all (or of one window's worth of it)
  kFin,     // the sender closed: the receiver reads end of stream after the data before it
  kSynAck,  // the server accepted: the client's connect returns
  kRst,     // the sender's end is gone: the receiver's reads and writes fail with kConnectionReset
};

struct Chunk {
  uint64_t seq = 0;
  ChunkKind kind = ChunkKind::kData;
  Bytes data;
  EventId event = 0;  // the pending delivery; 0 while held behind a partition
};

// One direction of a connection: what one side sent that the other has not received yet (the send queue plus
// the wire). Chunks arrive in seq order; a partition holds all of them, as TCP would keep retransmitting
// them.
struct Pipe {
  std::deque<Chunk> chunks;
  uint64_t next_seq = 1;       // of the next chunk sent
  uint64_t delivered_seq = 0;  // of the last chunk received or dropped
  Instant last_due{};  // arrival time of the last scheduled chunk: no later chunk may arrive before it
  size_t bytes = 0;    // data bytes in `chunks`
  size_t held = 0;     // chunks without a pending event: all of them while the direction is blocked
};

struct ConnectAttempt;

// One end of a connection, living on node `node`. Its wait queues belong to that node's scheduler: only that
// node's fibers read and write it.
struct Side {
  Side(NodeId side_node, Address side_local, Scheduler& scheduler)
      : node(side_node), local(std::move(side_local)), readers(scheduler), writers(scheduler) {}

  NodeId node;
  Address local;
  Pipe out;                  // what this side sent towards the other
  std::deque<Bytes> inbox;   // received, not yet read
  size_t inbox_offset = 0;   // bytes of inbox.front() already read
  size_t inbox_bytes = 0;    // unread bytes in inbox
  bool established = false;  // the server at once, the client when the SYN-ACK arrives
  bool eof = false;          // the peer's FIN arrived
  bool closed = false;       // close() on this side
  bool reset = false;        // broken: an RST arrived, a fault reset it, or this side aborted it
  bool dead = false;         // this side's node went down
  bool rst_sent = false;     // answered data arriving after close() with an RST (once)
  // Replay faults (SimNetwork::reset_connections_replaying): on their port, the last chunks this side read whole,
  // and the data chunks this side sent; elsewhere nothing is kept.
  bool keep_read = false;
  std::deque<Bytes> read_recently;
  uint64_t data_chunks_sent = 0;
  WaitQueue readers;
  WaitQueue writers;  // writers waiting for send window (only with a bounded window)

  bool broken() const { return reset || dead; }
};

struct Connection {
  Connection(uint64_t connection_id, NodeId client_node, Address client_local, Scheduler& client_scheduler,
             NodeId server_node, Address server_local, Scheduler& server_scheduler)
      : id(connection_id),
        client(client_node, std::move(client_local), client_scheduler),
        server(server_node, std::move(server_local), server_scheduler) {}

  uint64_t id;
  Side client;
  Side server;
  std::weak_ptr<ConnectAttempt> attempt;  // until the client's connect returned or gave up
  // The SimNetwork is gone: the deliveries still pending do nothing. Their events check it here, holding the
  // connection anyway, instead of each holding a weak_ptr to the fabric (two more atomic counts per chunk).
  bool orphaned = false;

  Side& side(int index) {
    SLUICE_ASSERT(index == kClient || index == kServer);
    return index == kClient ? client : server;
  }
  const Side& side(int index) const {
    SLUICE_ASSERT(index == kClient || index == kServer);
    return index == kClient ? client : server;
  }
};

// A connect() in progress. Lives on the connecting fiber's stack (by shared_ptr) and in the SYN's event.
struct ConnectAttempt {
  ConnectAttempt(Scheduler& scheduler) : waiters(scheduler) {}  // NOLINT: only built by make_shared

  NodeId client = 0;
  uint64_t client_incarnation = 0;
  Scheduler* client_scheduler = nullptr;
  Address client_local;
  NodeId server = 0;
  Address server_address;
  bool finished = false;   // status (and conn when ok) is final
  bool abandoned = false;  // the connecting fiber gave up (timeout) or was killed
  Status status;
  std::shared_ptr<Connection> conn;  // set when the SYN reached a listener
  WaitQueue waiters;
};

struct ListenerState {
  ListenerState(NodeId listener_node, Address bound, Scheduler& scheduler)
      : node(listener_node), address(std::move(bound)), acceptors(scheduler) {}

  NodeId node;
  Address address;
  std::deque<std::shared_ptr<Connection>> backlog;  // server sides not yet accepted
  bool closed = false;
  WaitQueue acceptors;
};

// A node's Network. One per node for the SimNetwork's life, so the reference attach() returned stays valid
// across restarts; the fields are the fabric's bookkeeping.
class SimEndpoint final : public Network {
 public:
  SimEndpoint(SimNetwork& network, NodeId endpoint_node, uint16_t first_port)
      : network_(network), node(endpoint_node), next_port(first_port) {}

  Result<std::unique_ptr<Listener>> listen(const Address& address) override;
  Result<std::unique_ptr<Stream>> connect(const Address& address) override;

 private:
  SimNetwork& network_;

 public:
  const NodeId node;
  std::string host;
  Scheduler* scheduler = nullptr;  // of the current incarnation
  bool up = false;
  uint64_t incarnation = 0;  // counts attaches; a connect attempt of an earlier one is void
  uint16_t next_port;        // the next ephemeral port to try
};

}  // namespace sluice::simnet
