// RaftTransport on the simulator's network: three nodes, each a transport whose deliveries land in a list.
#include "core/raft/transport.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "core/raft/wire.h"
#include "core/env/sync.h"
#include "sim/world/sim_cluster.h"

namespace sluice::raft {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kPort = 9192;

struct Delivered {
  NodeId from = kNoNode;
  Envelope envelope;
};

class TransportWorld {
 public:
  explicit TransportWorld(size_t nodes, TransportOptions options = {}) : cluster_(11, LogLevel::kOff) {
    for (size_t i = 0; i < nodes; ++i) cluster_.add_node();
    for (NodeId id = 1; id <= nodes; ++id) {
      states_.push_back(std::make_unique<State>());
      cluster_.node(id - 1).boot([this, id, nodes, options](Env env) {
        std::map<NodeId, Address> peers;
        for (NodeId other = 1; other <= nodes; ++other) {
          if (other != id) peers[other] = Address{fmt::format("n{}", other), kPort};
        }
        State& state = *states_[id - 1];
        RaftTransport transport(env, id, Address{fmt::format("n{}", id), kPort}, peers,
                                [&state](NodeId from, std::vector<Envelope>& batch) {
                                  for (Envelope& e : batch) state.delivered.push_back({from, std::move(e)});
                                },
                                options);
        struct Forget {
          State& state;
          ~Forget() { state.transport = nullptr; }
        } forget{state};
        ASSERT_TRUE(transport.start().ok());
        state.transport = &transport;
        Event forever(env.scheduler);
        forever.wait();
      });
    }
  }
  ~TransportWorld() {
    for (size_t i = 0; i < cluster_.size(); ++i) {
      if (cluster_.node(i).up()) cluster_.node(i).crash();
    }
  }

  RaftTransport& transport(NodeId id) { return *states_[id - 1]->transport; }
  std::vector<Delivered>& delivered(NodeId id) { return states_[id - 1]->delivered; }
  SimCluster& cluster() { return cluster_; }
  bool run_until(const std::function<bool()>& done, Duration limit = 10s) {
    return cluster_.world().run_until(done, cluster_.world().now() + limit);
  }
  bool all_connected() {
    for (NodeId a = 1; a <= states_.size(); ++a) {
      for (NodeId b = 1; b <= states_.size(); ++b) {
        if (a != b && (states_[a - 1]->transport == nullptr || !transport(a).connected(b))) return false;
      }
    }
    return true;
  }

 private:
  struct State {
    RaftTransport* transport = nullptr;
    std::vector<Delivered> delivered;
  };
  SimCluster cluster_;
  std::vector<std::unique_ptr<State>> states_;
};

Message heartbeat(NodeId from, NodeId to, Term term) {
  Message m;
  m.type = MessageType::kHeartbeat;
  m.from = from;
  m.to = to;
  m.term = term;
  return m;
}

TEST(RaftTransport, ConnectsEveryPairOnceAndDeliversInOrder) {
  TransportWorld w(3);
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  for (Term t = 1; t <= 50; ++t) w.transport(1).send(3, 9, heartbeat(1, 3, t));
  ASSERT_TRUE(w.run_until([&] { return w.delivered(3).size() == 50; }));
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(w.delivered(3)[i].from, 1u);
    EXPECT_EQ(w.delivered(3)[i].envelope.group, 9u);
    EXPECT_EQ(w.delivered(3)[i].envelope.message.term, i + 1);
  }
  // One connection per pair: each node opened one per peer.
  for (NodeId id = 1; id <= 3; ++id) EXPECT_EQ(w.transport(id).stats().connections_opened, 2u);
}

TEST(RaftTransport, AThousandGroupsHeartbeatsQueuedTogetherLeaveAsOneFrame) {
  TransportWorld w(2);
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  const uint64_t frames = w.transport(1).stats().frames_sent;
  std::vector<Envelope> batch;
  for (GroupId g = 1; g <= 1000; ++g) batch.push_back(Envelope{g, heartbeat(1, 2, 3)});
  w.transport(1).send(2, std::move(batch));
  ASSERT_TRUE(w.run_until([&] { return w.delivered(2).size() == 1000; }));
  EXPECT_EQ(w.transport(1).stats().frames_sent - frames, 1u);
  EXPECT_EQ(w.transport(1).stats().heartbeats_sent, 1000u);
  EXPECT_LT(w.transport(1).stats().bytes_sent, 1000u * 16);
}

TEST(RaftTransport, AResetConnectionIsRedialedAndLaterMessagesArrive) {
  TransportWorld w(2);
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  w.cluster().network().reset_connections(w.cluster().node(0).id(), w.cluster().node(1).id());
  ASSERT_TRUE(w.run_until([&] { return !w.transport(1).connected(2); }));
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  EXPECT_GE(w.transport(1).stats().connections_opened, 2u);
  w.transport(2).send(1, 4, heartbeat(2, 1, 8));
  ASSERT_TRUE(w.run_until([&] { return !w.delivered(1).empty(); }));
  EXPECT_EQ(w.delivered(1).back().envelope.message.term, 8u);
}

TEST(RaftTransport, SendsWithoutAConnectionOrBeyondTheQueueBoundAreDroppedAndCounted) {
  TransportOptions options;
  options.max_queued_bytes = 2000;
  TransportWorld w(2, options);
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  Message big = heartbeat(1, 2, 1);
  big.type = MessageType::kAppend;
  big.entries.push_back(Entry{.term = 1, .payload = std::string(1500, 'x')});
  w.transport(1).send(2, 1, big);
  w.transport(1).send(2, 1, big);  // over the bound: dropped before the writer runs
  EXPECT_EQ(w.transport(1).stats().messages_dropped, 1u);
  ASSERT_TRUE(w.run_until([&] { return w.delivered(2).size() == 1; }));
  w.cluster().node(1).crash();
  ASSERT_TRUE(w.run_until([&] { return !w.transport(1).connected(2); }));
  w.transport(1).send(2, 1, heartbeat(1, 2, 2));
  EXPECT_EQ(w.transport(1).stats().messages_dropped, 2u);
}

TEST(RaftTransport, AMalformedFrameBreaksTheConnectionAndIsCounted) {
  TransportWorld w(2);
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  // A stranger dials node 2 and, after a valid handshake as node 1, sends garbage.
  SimNode& stranger = w.cluster().add_node("x1");
  bool sent = false;
  stranger.boot([&sent](Env env) {
    auto stream = env.net.connect(Address{"n2", kPort});
    ASSERT_TRUE(stream.ok());
    Bytes frame;
    encode_handshake(1, frame);
    frame.insert(frame.end(), {0, 0, 0, 3, kWireVersion, 77, 0});
    ASSERT_TRUE((*stream)->write_all(frame).ok());
    sent = true;
    Event forever(env.scheduler);
    forever.wait();
  });
  ASSERT_TRUE(w.run_until([&] { return sent && w.transport(2).stats().frames_refused == 1; }));
  // The real node 1 redials (its connection was replaced by the stranger's) and traffic flows again.
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  w.transport(1).send(2, 1, heartbeat(1, 2, 4));
  ASSERT_TRUE(w.run_until([&] { return !w.delivered(2).empty(); }));
  stranger.crash();
}

TEST(RaftTransport, AHandshakeFromAnUnknownOrHigherNodeIsRefused) {
  TransportWorld w(2);
  ASSERT_TRUE(w.run_until([&] { return w.all_connected(); }));
  SimNode& stranger = w.cluster().add_node("x1");
  bool done = false;
  stranger.boot([&done](Env env) {
    for (NodeId claimed : {NodeId{9}, NodeId{2}}) {  // unknown; and node 2 dialing itself
      auto stream = env.net.connect(Address{"n2", kPort});
      ASSERT_TRUE(stream.ok());
      Bytes frame;
      encode_handshake(claimed, frame);
      ASSERT_TRUE((*stream)->write_all(frame).ok());
      uint8_t byte = 0;
      Result<size_t> n = (*stream)->read_some(MutableByteView(&byte, 1));
      EXPECT_TRUE(!n.ok() || *n == 0);  // closed on us
    }
    done = true;
  });
  ASSERT_TRUE(w.run_until([&] { return done; }));
  EXPECT_EQ(w.transport(2).stats().frames_refused, 2u);
  EXPECT_TRUE(w.transport(1).connected(2));
}


// cluster_min_insync seed 100: a dialer that fell silent before its handshake (it crashed, or its bytes were held)
// kept the accepting node's handshake reader waiting, and the node's graceful stop, which joins every transport
// fiber, never ended. stop() closes the streams whose handshake is still being read.
TEST(RaftTransport, AStopEndsWhileADialerIsSilentBeforeItsHandshake) {
  SimCluster cluster(11, LogLevel::kOff);
  SimNode& node = cluster.add_node("n2");
  SimNode& silent = cluster.add_node("n1");
  bool connected = false;
  bool stopped = false;
  node.boot([&](Env env) {
    {
      RaftTransport transport(env, 2, Address{"n2", kPort}, {{1, Address{"n1", kPort}}},
                              [](NodeId, std::vector<Envelope>&) {});
      ASSERT_TRUE(transport.start().ok());
      while (!connected) env.scheduler.sleep_for(10ms);
      env.scheduler.sleep_for(100ms);  // the handshake reader is waiting now
      transport.stop();
    }  // the destructor joins every fiber of the transport
    stopped = true;
    Event forever(env.scheduler);
    forever.wait();
  });
  silent.boot([&](Env env) {
    auto stream = env.net.connect(Address{"n2", kPort});
    ASSERT_TRUE(stream.ok());
    connected = true;
    Event forever(env.scheduler);
    forever.wait();  // holds the connection open and never writes
  });
  ASSERT_TRUE(cluster.world().run_until([&] { return stopped; }, cluster.world().now() + 10s));
  node.crash();
  silent.crash();
}

}  // namespace
}  // namespace sluice::raft
