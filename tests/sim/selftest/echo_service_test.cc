#include "sim/selftest/echo_service.h"

#include <gtest/gtest.h>

#include "sim/world/sim_cluster.h"
#include "sim/world/sim_disk.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// The service acknowledges only what is durable: when the journal's sync fails, the client gets no echo.
TEST(EchoService, NeverAcknowledgesAMessageItCouldNotSync) {
  SimCluster cluster(5, LogLevel::kOff);
  SimNode& server = cluster.add_node();
  SimNode& client = cluster.add_node();
  server.boot([](Env env) {
    auto journal = Journal::open(env.fs, "j");
    ASSERT_TRUE(journal.ok());
    EchoService service(env, journal->get());
    ASSERT_TRUE(service.start(Address{"n1", 7000}).ok());
    env.scheduler.sleep_for(1h);
  });
  std::vector<std::string> outcomes;
  client.boot([&](Env env) {
    env.scheduler.sleep_for(10ms);
    for (int i = 0; i < 3; ++i) {
      if (i == 1) server.disk().fail_next(DiskOp::kSync, 1);
      auto stream = env.net.connect(Address{"n1", 7000});
      ASSERT_TRUE(stream.ok());
      Result<Bytes> reply = EchoService::call(**stream, as_bytes("m" + std::to_string(i)));
      outcomes.push_back(reply.ok() ? std::string(as_chars(*reply)) : "no ack");
    }
  });
  cluster.world().run_for(2s);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"m0", "no ack", "m2"}));
}

TEST(EchoService, StopClosesListenerAndConnections) {
  SimCluster cluster(6, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  Status read_after_stop;
  Status connect_after_stop;
  node.boot([&](Env env) {
    EchoService service(env, nullptr);
    ASSERT_TRUE(service.start(Address{"n1", 7000}).ok());
    auto stream = env.net.connect(Address{"n1", 7000});
    ASSERT_TRUE(stream.ok());
    ASSERT_TRUE(EchoService::call(**stream, as_bytes("x")).ok());
    service.stop();
    read_after_stop = EchoService::read_frame(**stream).status();
    connect_after_stop = env.net.connect(Address{"n1", 7000}).status();
  });
  cluster.world().run_for(1s);
  EXPECT_FALSE(read_after_stop.ok());
  EXPECT_EQ(connect_after_stop.code(), Code::kConnectionRefused);
}

}  // namespace
}  // namespace sluice
