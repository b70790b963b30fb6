// Test harness for SimNetwork: a world, the fabric, and nodes (clock, scheduler, endpoint) created on demand.
//
// Destruction order is the point: the fixture's members are destroyed in reverse order, so the nodes' fibers
// are killed first, then the streams and listeners the tests parked in the fixture close, then the fabric
// goes, and the world last. Fibers therefore capture only `this` and shared_ptrs, never locals of a test
// body.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/network.h"
#include "core/env/scheduler.h"
#include "sim/world/sim_clock.h"
#include "sim/world/sim_network.h"
#include "sim/world/sim_world.h"

namespace sluice::simnet_test {

// One simulated node. crash() is a process death; boot() starts a new incarnation with a new scheduler.
struct TestNode {
  TestNode(SimWorld& node_world, SimNetwork& node_network, NodeId node_id)
      : world(node_world), fabric(node_network), id(node_id), clock(node_world, node_id) {
    boot();
  }
  ~TestNode() { shutdown(); }
  TestNode(const TestNode&) = delete;
  TestNode& operator=(const TestNode&) = delete;

  std::string host() const { return "n" + std::to_string(id); }

  void boot() {
    scheduler = std::make_unique<Scheduler>(clock, &world.schedule_rng());
    world.attach(id, *scheduler);
    network = &fabric.attach(id, host(), *scheduler);
    up = true;
  }
  // Fibers unwound, the node's pending events cancelled, its connections reset.
  void crash() {
    scheduler->kill_all();
    world.cancel_node_events(id);
    fabric.node_down(id);
    world.detach(id);
    up = false;
  }
  // Kills the fibers without telling the fabric (they unwind; streams on their stacks close in order).
  void shutdown() {
    if (!up) return;
    scheduler->kill_all();
    world.detach(id);
    up = false;
  }
  FiberRef spawn(std::string name, std::function<void()> body) {
    return scheduler->spawn(std::move(name), std::move(body));
  }

  SimWorld& world;
  SimNetwork& fabric;
  NodeId id;
  SimClock clock;
  std::unique_ptr<Scheduler> scheduler;
  Network* network = nullptr;
  bool up = false;
};

// What a reader fiber saw on a stream: the bytes, when they came, and how the stream ended.
struct Collected {
  std::string bytes;
  std::vector<Instant> arrivals;
  std::optional<Status> end;  // ok at end of stream, else the error
  bool eof = false;
};

inline Result<std::string> read_text(Stream& stream, size_t size) {
  std::string text(size, '\0');
  Status status = read_exact(stream, MutableByteView(reinterpret_cast<uint8_t*>(text.data()), text.size()));
  if (!status.ok()) return status;
  return text;
}

class SimNetworkTest : public ::testing::Test {
 protected:
  SimNetworkTest() : net_(std::make_unique<SimNetwork>(world_)) {}

  // Replaces the fabric. REQUIRES: no node yet.
  void configure(SimNetworkConfig config) {
    ASSERT_TRUE(nodes_.empty());
    net_ = std::make_unique<SimNetwork>(world_, config);
  }

  TestNode& node(NodeId id) {
    std::unique_ptr<TestNode>& slot = nodes_[id];
    if (slot == nullptr) slot = std::make_unique<TestNode>(world_, *net_, id);
    return *slot;
  }

  // Connects node `client` to a listener on `server` (kept in listener_); the streams land in the fixture.
  void connect_pair(NodeId client, NodeId server, uint16_t port = 9000) {
    auto listener = node(server).network->listen({node(server).host(), port});
    ASSERT_TRUE(listener.ok()) << listener.status().to_string();
    listener_ = std::move(*listener);
    client_stream_.reset();
    server_stream_.reset();
    node(server).spawn("accept", [this] {
      auto stream = listener_->accept();
      ASSERT_TRUE(stream.ok()) << stream.status().to_string();
      server_stream_ = std::move(*stream);
    });
    node(client).spawn("connect", [this, client, server, port] {
      auto stream = node(client).network->connect({node(server).host(), port});
      ASSERT_TRUE(stream.ok()) << stream.status().to_string();
      client_stream_ = std::move(*stream);
    });
    ASSERT_TRUE(world_.run_until([this] { return client_stream_ != nullptr && server_stream_ != nullptr; },
                                 world_.now() + std::chrono::seconds(1)));
  }

  // A fiber on `id` reading `stream` until it ends.
  void collect(NodeId id, Stream* stream, std::shared_ptr<Collected> into) {
    node(id).spawn("collect", [this, stream, into] {
      uint8_t buffer[61];
      for (;;) {
        Result<size_t> n = stream->read_some(buffer);
        if (!n.ok()) {
          into->end = n.status();
          return;
        }
        if (*n == 0) {
          into->eof = true;
          into->end = Status();
          return;
        }
        into->bytes.append(as_chars(ByteView(buffer, *n)));
        into->arrivals.push_back(world_.now());
      }
    });
  }

  SimWorld world_{20260101};
  std::unique_ptr<SimNetwork> net_;
  std::unique_ptr<Listener> listener_;
  std::unique_ptr<Stream> client_stream_;
  std::unique_ptr<Stream> server_stream_;
  std::map<NodeId, std::unique_ptr<TestNode>> nodes_;  // last: destroyed (fibers killed) first
};

}  // namespace sluice::simnet_test
