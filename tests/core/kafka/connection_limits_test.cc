// Stalled and greedy clients in virtual time (issue 20): connections.max.idle.ms closes a silent connection and
// one whose answers a client never reads, request.timeout.ms drops a request frame that stops arriving part way,
// max.connections.per.ip (and its overrides) closes a connection over its address's limit at once, and
// max.connections parks the accept loop until a connection closes. Clients are nodes of their own ("c1", "c2"),
// so that each has its own address.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "core/broker/node.h"
#include "core/kafka/broker.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/api_versions.h"
#include "sim/world/sim_network.h"
#include "sim/world/sim_node.h"
#include "sim/world/sim_world.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace std::chrono_literals;
using testing::KafkaClient;
using testing::kBrokerAddress;

// A broker node "n1" and client nodes, on a network whose send window is bounded (a client that reads nothing
// then stops the broker's writes, as a full socket buffer does).
class LimitsWorld {
 public:
  explicit LimitsWorld(BrokerConfig config, size_t send_window_bytes = 64 * 1024)
      : world_(7),
        network_(world_, SimNetworkConfig{.send_window_bytes = send_window_bytes}),
        config_(std::move(config)) {
    config_.advertised_host = kBrokerAddress.host;
    config_.advertised_port = kBrokerAddress.port;
    add("n1").boot([this](Env env) {
      broker::NodeOptions options;
      options.listen = kBrokerAddress;
      options.data_dir = "data";
      options.broker = config_;
      broker::Node node(env, std::move(options));
      const Status run = node.run([&](Broker& broker, const Address&) { broker_ = &broker; });
      EXPECT_TRUE(run.ok()) << run.to_string();
      broker_ = nullptr;
      stopped_ = true;
    });
    world_.run_until([&] { return broker_ != nullptr; }, world_.now() + 10s);
    EXPECT_NE(broker_, nullptr);
  }

  ~LimitsWorld() {
    if (broker_ != nullptr) broker_->stop();
    world_.run_until([&] { return stopped_; }, world_.now() + 10s);
    for (auto& node : nodes_) {
      if (node->up()) node->crash();
    }
    nodes_.clear();
  }

  // Runs `body` on a new client node named `name`; returns once every body started so far finished (true), or
  // when `limit` of virtual time passed (false).
  void client(const std::string& name, std::function<void(Env)> body) {
    ++running_;
    add(name).boot([this, body = std::move(body)](Env env) {
      body(env);
      --running_;
    });
  }
  bool run(Duration limit = 1h) {
    return world_.run_until([&] { return running_ == 0; }, world_.now() + limit);
  }

  Broker& broker() { return *broker_; }

 private:
  SimNode& add(const std::string& name) {
    nodes_.push_back(
        std::make_unique<SimNode>(world_, network_, static_cast<NodeId>(nodes_.size() + 1), name, LogLevel::kOff));
    return *nodes_.back();
  }

  SimWorld world_;
  SimNetwork network_;
  BrokerConfig config_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  Broker* broker_ = nullptr;
  bool stopped_ = false;
  int running_ = 0;
};

KafkaClient connect(Env env) {
  Result<std::unique_ptr<Stream>> stream = env.net.connect(kBrokerAddress);
  EXPECT_TRUE(stream.ok()) << stream.status().to_string();
  return KafkaClient(stream.ok() ? std::move(*stream) : nullptr);
}

bool answers(KafkaClient& client) {
  Result<protocol::ApiVersionsResponse> response =
      client.call<protocol::ApiVersionsResponse>(protocol::ApiVersionsRequest{}, 0);
  return response.ok() && response->error_code == 0;
}

// Reads until the broker closes the stream (bytes it sent before are skipped); the virtual time it closed.
Instant closed_at(Env env, Stream& stream) {
  std::vector<uint8_t> buffer(4096);
  while (true) {
    Result<size_t> n = stream.read_some(MutableByteView(buffer));
    if (!n.ok() || *n == 0) return env.clock.now();
  }
}

// Polls the broker's state from the client's node: the condition or the virtual deadline.
bool wait_for(Env env, const std::function<bool()>& condition, Duration limit = 30min) {
  const Instant deadline = env.clock.now() + limit;
  while (!condition()) {
    if (env.clock.now() > deadline) return false;
    env.scheduler.sleep_for(10ms);
  }
  return true;
}

TEST(ConnectionLimits, AnIdleConnectionIsClosedAfterConnectionsMaxIdleMsAndABusyOneIsNot) {
  BrokerConfig config;
  config.connections_max_idle = 10s;
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    KafkaClient idle = connect(env);
    KafkaClient busy = connect(env);
    ASSERT_TRUE(answers(idle));
    const Instant last_use = env.clock.now();
    Instant idle_closed;
    FiberRef watch = env.scheduler.spawn("watch", [&] { idle_closed = closed_at(env, idle.stream()); });
    for (int i = 0; i < 8; ++i) {  // 32 s of use, a request every 4 s: never idle for 10 s
      env.scheduler.sleep_for(4s);
      EXPECT_TRUE(answers(busy)) << "request " << i;  // (no ASSERT while the watch fiber uses this stack)
    }
    env.scheduler.join(watch);
    EXPECT_GE(idle_closed - last_use, 10s - 10ms);  // counted from the broker's last write, before it arrived
    EXPECT_LT(idle_closed - last_use, 11s);
    EXPECT_EQ(world.broker().idle_connections_closed(), 1U);
    EXPECT_EQ(world.broker().open_connections(), 1U);
  });
  ASSERT_TRUE(world.run());
}

TEST(ConnectionLimits, IdleExpiryIsOffAtMinusOne) {
  BrokerConfig config;
  config.connections_max_idle = std::nullopt;
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    KafkaClient client = connect(env);
    ASSERT_TRUE(answers(client));
    env.scheduler.sleep_for(2h);
    EXPECT_TRUE(answers(client));
    EXPECT_EQ(world.broker().idle_connections_closed(), 0U);
  });
  ASSERT_TRUE(world.run(3h));
}

// A frame that trickles in (a byte a second: never idle) is dropped request.timeout.ms after the broker started
// waiting for its rest; one whose rest comes within the bound is answered.
TEST(ConnectionLimits, ARequestFrameThatStopsArrivingIsDroppedAfterRequestTimeoutMs) {
  BrokerConfig config;
  config.request_timeout = 5s;
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    Result<Bytes> frame =
        protocol::encode_request_frame({protocol::ApiKey::kApiVersions, 0, 1, "slow"}, protocol::ApiVersionsRequest{});
    ASSERT_TRUE(frame.ok());
    KafkaClient slow = connect(env);  // the halves 3 s apart: within the bound
    ASSERT_TRUE(slow.send_raw(ByteView(*frame).first(6)).ok());
    env.scheduler.sleep_for(3s);
    ASSERT_TRUE(slow.send_raw(ByteView(*frame).subspan(6)).ok());
    Result<std::optional<Bytes>> answer = slow.receive_frame();
    ASSERT_TRUE(answer.ok() && answer->has_value()) << "a frame completed within request.timeout.ms is answered";

    KafkaClient trickle = connect(env);
    ASSERT_TRUE(answers(trickle));
    const Instant started = env.clock.now();
    Instant closed;
    FiberRef watch = env.scheduler.spawn("watch", [&] { closed = closed_at(env, trickle.stream()); });
    const uint8_t prefix[4] = {0, 0, 0, 100};  // a 100-byte frame, a byte a second
    for (uint8_t byte : prefix) {
      if (!trickle.send_raw(ByteView(&byte, 1)).ok()) break;
      env.scheduler.sleep_for(1s);
    }
    for (int i = 0; i < 100 && trickle.send_raw(ByteView(prefix, 1)).ok(); ++i) env.scheduler.sleep_for(1s);
    env.scheduler.join(watch);
    EXPECT_GE(closed - started, 5s);
    EXPECT_LT(closed - started, 7s);  // its first byte, then 5 s from the first wait for the rest
    EXPECT_EQ(world.broker().partial_requests_dropped(), 1U);
    EXPECT_EQ(world.broker().idle_connections_closed(), 0U);
  });
  ASSERT_TRUE(world.run());
}

// A client pipelines requests and never reads: once the window is full the broker's write makes no progress, its
// reader stops, and after connections.max.idle.ms the connection is closed (its slot freed); a well-behaved client
// beside it is answered throughout.
TEST(ConnectionLimits, AClientThatNeverReadsIsClosedAfterTheIdleBound) {
  BrokerConfig config;
  config.connections_max_idle = 20s;
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    KafkaClient greedy = connect(env);
    KafkaClient good = connect(env);
    Result<Bytes> frame = protocol::encode_request_frame({protocol::ApiKey::kApiVersions, 0, 1, "greedy"},
                                                         protocol::ApiVersionsRequest{});
    ASSERT_TRUE(frame.ok());
    Bytes requests;
    for (int i = 0; i < 1000; ++i) requests.insert(requests.end(), frame->begin(), frame->end());
    ASSERT_TRUE(greedy.send_raw(requests).ok());  // ~25 KB of requests; ~370 KB of answers nobody reads
    const Instant sent = env.clock.now();
    bool closed = false;
    FiberRef probe = env.scheduler.spawn("good", [&] {
      while (!closed) {
        EXPECT_TRUE(answers(good));
        env.scheduler.sleep_for(3s);
      }
    });
    const bool freed = wait_for(env, [&] { return world.broker().idle_connections_closed() == 1; });
    closed = true;
    env.scheduler.join(probe);
    ASSERT_TRUE(freed) << "the greedy connection still holds its slot";
    EXPECT_GE(env.clock.now() - sent, 20s);
    EXPECT_EQ(world.broker().open_connections(), 1U);
    EXPECT_TRUE(answers(good));
  });
  ASSERT_TRUE(world.run());
}

// max.connections.per.ip=2 with c2 overridden to 3: a connection over its address's limit is accepted and closed
// at once; closing one frees the address's slot.
TEST(ConnectionLimits, MaxConnectionsPerIpAndItsOverrides) {
  BrokerConfig config;
  config.max_connections_per_ip = 2;
  config.max_connections_per_ip_overrides = {{"c2", 3}};
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    std::vector<KafkaClient> mine;
    for (int i = 0; i < 2; ++i) {
      mine.push_back(connect(env));
      ASSERT_TRUE(answers(mine.back())) << i;
    }
    KafkaClient over = connect(env);  // the handshake completes; the broker closes it at once
    EXPECT_FALSE(answers(over));
    EXPECT_EQ(world.broker().connections_rejected_per_ip(), 1U);
    mine.front().stream().close();
    ASSERT_TRUE(wait_for(env, [&] { return world.broker().open_connections() == 1; }));
    KafkaClient again = connect(env);
    EXPECT_TRUE(answers(again));
  });
  ASSERT_TRUE(world.run());
  world.client("c2", [&](Env env) {
    std::vector<KafkaClient> theirs;
    for (int i = 0; i < 3; ++i) {
      theirs.push_back(connect(env));
      ASSERT_TRUE(answers(theirs.back())) << i;
    }
    KafkaClient over = connect(env);
    EXPECT_FALSE(answers(over));
    EXPECT_EQ(world.broker().connections_rejected_per_ip(), 2U);
  });
  ASSERT_TRUE(world.run());
}

TEST(ConnectionLimits, PerIpZeroAdmitsOnlyTheOverriddenHosts) {
  BrokerConfig config;
  config.max_connections_per_ip = 0;
  config.max_connections_per_ip_overrides = {{"c1", 1}};
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    KafkaClient first = connect(env);
    EXPECT_TRUE(answers(first));
    KafkaClient second = connect(env);
    EXPECT_FALSE(answers(second));
  });
  ASSERT_TRUE(world.run());
  world.client("c2", [&](Env env) {
    KafkaClient refused = connect(env);
    EXPECT_FALSE(answers(refused));
    EXPECT_EQ(world.broker().connections_rejected_per_ip(), 2U);
  });
  ASSERT_TRUE(world.run());
}

// max.connections=2: a third connection waits in the backlog, as behind Kafka's blocked acceptor, and its request
// is answered once one of the two closes.
TEST(ConnectionLimits, MaxConnectionsWaitsForASlotInsteadOfClosing) {
  BrokerConfig config;
  config.max_connections = 2;
  LimitsWorld world(config);
  world.client("c1", [&](Env env) {
    KafkaClient a = connect(env);
    KafkaClient b = connect(env);
    ASSERT_TRUE(answers(a));
    ASSERT_TRUE(answers(b));
    KafkaClient third = connect(env);
    bool answered = false;
    Instant answered_at;
    FiberRef waiting = env.scheduler.spawn("third", [&] {
      answered = answers(third);
      answered_at = env.clock.now();
    });
    env.scheduler.sleep_for(5s);
    EXPECT_FALSE(answered);
    EXPECT_EQ(world.broker().open_connections(), 2U);
    const Instant freed = env.clock.now();
    a.stream().close();
    env.scheduler.join(waiting);
    EXPECT_TRUE(answered);
    EXPECT_GE(answered_at, freed);
    EXPECT_TRUE(answers(b));
  });
  ASSERT_TRUE(world.run());
}

}  // namespace
}  // namespace sluice::kafka
