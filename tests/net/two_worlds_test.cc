// One component, two worlds: the journaled EchoService (sim/selftest) runs the same scenario on the real Env
// (epoll sockets, POSIX files) and on a simulated node (SimNetwork, SimDisk), and must behave the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/env/sync.h"
#include "sim/selftest/echo_service.h"
#include "sim/selftest/journal.h"
#include "net/real_env.h"
#include "sim/world/sim_cluster.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

struct Transcript {
  std::vector<std::string> replies;            // in order, from one client
  std::vector<std::string> concurrent_replies;  // from two clients at once, sorted
  std::string oversized_frame;                 // what a client sending a too-large frame saw
  bool reconnect_after_bad_frame = false;
  uint64_t served = 0;
  std::vector<std::string> journal;            // the journal reopened after the service stopped
};

void send_sequence(Stream& stream, const std::string& prefix, int count, std::vector<std::string>& out) {
  for (int i = 0; i < count; ++i) {
    Result<Bytes> reply = EchoService::call(stream, as_bytes(prefix + std::to_string(i)));
    out.push_back(reply.ok() ? std::string(as_chars(*reply)) : "error: " + reply.status().to_string());
  }
}

void run_concurrent_clients(Env env, const Address& server, Transcript& t) {
  std::vector<FiberRef> clients;
  for (const char* name : {"a", "b"}) {
    clients.push_back(env.scheduler.spawn(name, [env, server, name, &t] {
      Result<std::unique_ptr<Stream>> stream = env.net.connect(server);
      ASSERT_TRUE(stream.ok()) << stream.status().to_string();
      send_sequence(**stream, std::string(name) + "-", 10, t.concurrent_replies);
    }));
  }
  for (const FiberRef& client : clients) env.scheduler.join(client);
  std::sort(t.concurrent_replies.begin(), t.concurrent_replies.end());
}

void send_oversized_frame(Env env, const Address& server, Transcript& t) {
  Result<std::unique_ptr<Stream>> stream = env.net.connect(server);
  ASSERT_TRUE(stream.ok());
  const uint32_t too_big = EchoService::kMaxMessageBytes + 1;
  const uint8_t header[4] = {static_cast<uint8_t>(too_big), static_cast<uint8_t>(too_big >> 8),
                             static_cast<uint8_t>(too_big >> 16), static_cast<uint8_t>(too_big >> 24)};
  ASSERT_TRUE((*stream)->write_all(ByteView(header)).ok());
  Result<Bytes> reply = EchoService::read_frame(**stream);
  t.oversized_frame = reply.ok() ? "answered" : "connection dropped";
}

Transcript exercise(Env env, const Address& listen_at, const std::string& dir) {
  Transcript t;
  const std::string path = join_path(dir, "echo.journal");
  {
    Result<std::unique_ptr<Journal>> journal = Journal::open(env.fs, path);
    EXPECT_TRUE(journal.ok()) << journal.status().to_string();
    if (!journal.ok()) return t;
    EchoService service(env, journal->get());
    Result<Address> bound = service.start(listen_at);
    EXPECT_TRUE(bound.ok()) << bound.status().to_string();
    if (!bound.ok()) return t;
    {
      Result<std::unique_ptr<Stream>> stream = env.net.connect(*bound);
      EXPECT_TRUE(stream.ok());
      if (stream.ok()) send_sequence(**stream, "message-", 5, t.replies);
    }
    run_concurrent_clients(env, *bound, t);
    send_oversized_frame(env, *bound, t);
    Result<std::unique_ptr<Stream>> again = env.net.connect(*bound);
    t.reconnect_after_bad_frame = again.ok() && EchoService::call(**again, as_bytes("after")).ok();
    t.served = service.messages_served();
    service.stop();
  }
  Result<std::unique_ptr<Journal>> reopened = Journal::open(env.fs, path);
  EXPECT_TRUE(reopened.ok());
  if (reopened.ok()) {
    for (const Bytes& record : (*reopened)->records()) t.journal.emplace_back(as_chars(record));
  }
  std::sort(t.journal.begin(), t.journal.end());
  return t;
}

Transcript run_simulated(uint64_t seed) {
  Transcript t;
  SimCluster cluster(seed, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  bool done = false;
  node.boot([&](Env env) {
    EXPECT_TRUE(env.fs.create_dirs("data").ok());
    t = exercise(env, Address{"n1", 7000}, "data");
    done = true;
  });
  EXPECT_TRUE(cluster.world().run_until([&] { return done; }, cluster.world().now() + 1min));
  return t;
}

Transcript run_real() {
  Transcript t;
  net_test::TempDir dir;
  RealEnv real("two-worlds", LogLevel::kOff);
  const int rc = real.run([&](Env& env) { t = exercise(env, Address{"127.0.0.1", 0}, dir.path()); });
  EXPECT_EQ(rc, 0);
  return t;
}

TEST(TwoWorlds, JournaledEchoServiceBehavesTheSameOnRealAndSimulatedEnv) {
  const Transcript simulated = run_simulated(11);
  const Transcript real = run_real();

  ASSERT_EQ(simulated.replies.size(), 5u);
  EXPECT_EQ(simulated.replies[0], "message-0");
  EXPECT_EQ(simulated.concurrent_replies.size(), 20u);
  EXPECT_EQ(simulated.oversized_frame, "connection dropped");
  EXPECT_TRUE(simulated.reconnect_after_bad_frame);
  EXPECT_EQ(simulated.served, 26u);
  EXPECT_EQ(simulated.journal.size(), 26u);

  EXPECT_EQ(real.replies, simulated.replies);
  EXPECT_EQ(real.concurrent_replies, simulated.concurrent_replies);
  EXPECT_EQ(real.oversized_frame, simulated.oversized_frame);
  EXPECT_EQ(real.reconnect_after_bad_frame, simulated.reconnect_after_bad_frame);
  EXPECT_EQ(real.served, simulated.served);
  EXPECT_EQ(real.journal, simulated.journal);
}

TEST(TwoWorlds, SimulatedRunIsTheSameForEverySeedInOutcome) {
  const Transcript reference = run_simulated(1);
  for (uint64_t seed = 2; seed <= 6; ++seed) {
    const Transcript other = run_simulated(seed);
    EXPECT_EQ(other.replies, reference.replies) << "seed " << seed;
    EXPECT_EQ(other.concurrent_replies, reference.concurrent_replies) << "seed " << seed;
    EXPECT_EQ(other.journal, reference.journal) << "seed " << seed;
  }
}

}  // namespace
}  // namespace sluice
