// A process pause (SimNode::pause, the process-pause fault) and a slow disk (SimNode::set_disk_slowness, the
// slow-disk and stalled-fsync faults), on bare simulated nodes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/world/sim_cluster.h"
#include "sim/world/sim_disk.h"
#include "sim/world/sim_node.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// A node that ticks every 100 ms on its own clock, recording the local time of each tick.
void boot_ticker(SimNode& node, std::vector<Instant>& ticks) {
  node.boot([&ticks](Env env) {
    for (;;) {
      env.scheduler.sleep_for(100ms);
      ticks.push_back(env.clock.now());
    }
  });
}

TEST(SimNodePause, NothingOfAPausedNodeRunsAndItsOverdueTimerFiresAtTheResume) {
  SimCluster cluster(5, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  std::vector<Instant> ticks;
  boot_ticker(node, ticks);
  SimWorld& world = cluster.world();
  world.run_for(1050ms);
  ASSERT_EQ(ticks.size(), 10u);
  node.pause();
  EXPECT_TRUE(node.paused());
  world.run_for(3s);
  EXPECT_EQ(ticks.size(), 10u) << "a paused process runs no fiber and fires no timer";
  const Instant resumed_at = world.now();
  node.resume();
  EXPECT_FALSE(node.paused());
  world.run_for(0s);  // what is due at the resume runs at once
  ASSERT_EQ(ticks.size(), 11u) << "the timer due during the pause fires once, late";
  EXPECT_EQ(ticks.back(), resumed_at) << "the node's clock jumped over the pause";
  world.run_for(1s);
  EXPECT_EQ(ticks.size(), 21u) << "then it ticks on as before";
  EXPECT_TRUE(node.up());
  EXPECT_EQ(node.boots(), 1u) << "a pause is not a restart";
}

TEST(SimNodePause, BytesSentToAPausedNodeWaitAndNoConnectionBreaks) {
  SimCluster cluster(9, LogLevel::kOff);
  SimNode& server = cluster.add_node();
  SimNode& client = cluster.add_node();
  std::vector<std::string> received;
  Status client_status;
  server.boot([&received](Env env) {
    auto listener = env.net.listen({"n1", 7000});
    ASSERT_TRUE(listener.ok());
    auto stream = (*listener)->accept();
    ASSERT_TRUE(stream.ok());
    char buffer[64];
    for (;;) {
      auto n = (*stream)->read_some(MutableByteView(reinterpret_cast<uint8_t*>(buffer), sizeof(buffer)));
      if (!n.ok() || *n == 0) return;
      received.emplace_back(buffer, *n);
    }
  });
  client.boot([&client_status](Env env) {
    auto stream = env.net.connect({"n1", 7000});
    ASSERT_TRUE(stream.ok());
    for (int i = 0; i < 30; ++i) {
      client_status = (*stream)->write_all(as_bytes("x"));
      if (!client_status.ok()) return;
      env.scheduler.sleep_for(100ms);
    }
    env.scheduler.sleep_for(1h);
  });
  SimWorld& world = cluster.world();
  world.run_for(1s);
  const size_t before = received.size();
  ASSERT_GT(before, 5u);
  server.pause();
  world.run_for(1500ms);
  EXPECT_EQ(received.size(), before) << "a paused process reads nothing";
  EXPECT_TRUE(client_status.ok()) << "peers see silence, not a reset";
  server.resume();
  world.run_for(2s);
  size_t bytes = 0;
  for (const std::string& r : received) bytes += r.size();
  EXPECT_EQ(bytes, 30u) << "every byte sent meanwhile arrives after the resume";
  EXPECT_TRUE(client_status.ok());
}

TEST(SimNodePause, ACrashEndsAPauseAndTheNodeBootsUnpaused) {
  SimCluster cluster(2, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  std::vector<Instant> ticks;
  boot_ticker(node, ticks);
  SimWorld& world = cluster.world();
  world.run_for(550ms);
  node.pause();
  world.run_for(1s);
  node.crash();
  EXPECT_FALSE(node.paused());
  node.resume();  // the fault's end after a crash: nothing to do
  ticks.clear();
  node.restart();
  world.run_for(1050ms);
  EXPECT_EQ(ticks.size(), 10u);
}

TEST(SimNodePause, SameSeedSamePausedRun) {
  auto run = [] {
    SimCluster cluster(11, LogLevel::kOff);
    SimNode& a = cluster.add_node();
    SimNode& b = cluster.add_node();
    std::vector<Instant> ta;
    std::vector<Instant> tb;
    boot_ticker(a, ta);
    boot_ticker(b, tb);
    cluster.world().run_for(333ms);
    a.pause();
    cluster.world().run_for(777ms);
    a.resume();
    cluster.world().run_for(1s);
    return cluster.world().trace_hash();
  };
  EXPECT_EQ(run(), run());
}

// The time one fiber's `count` syncs (or writes) of a small file take, on a disk with the given slowness.
Duration time_of_disk_ops(Duration tail_max, Duration sync_stall, bool syncs, int count) {
  SimCluster cluster(3, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  node.set_disk_slowness(tail_max, sync_stall);
  Duration took{};
  node.boot([&](Env env) {
    auto file = env.fs.open("f", OpenMode::kCreate);
    ASSERT_TRUE(file.ok());
    const Instant start = env.clock.now();
    for (int i = 0; i < count; ++i) {
      if (syncs) {
        ASSERT_TRUE((*file)->sync().ok());
      } else {
        ASSERT_TRUE((*file)->append(as_bytes("abc")).ok());
      }
    }
    took = env.clock.now() - start;
  });
  cluster.world().run_for(1h);
  return took;
}

TEST(SimNodeSlowDisk, AStalledFsyncTakesItsAmountPerSync) {
  const Duration normal = time_of_disk_ops(0s, 0s, true, 10);
  EXPECT_LT(normal, 20ms);
  const Duration stalled = time_of_disk_ops(0s, 500ms, true, 10);
  EXPECT_GE(stalled, 5s);
  EXPECT_LT(stalled, 5s + 20ms);
  EXPECT_LT(time_of_disk_ops(0s, 500ms, false, 10), 20ms) << "only syncs stall";
}

TEST(SimNodeSlowDisk, ASlowDiskHasAHeavyTail) {
  const Duration normal = time_of_disk_ops(0s, 0s, false, 1000);
  EXPECT_LT(normal, 50ms);
  // 1000 writes with a 1 s tail: about 62 slow ones averaging 0.5 s, the rest under 20 ms each (10 ms average).
  const Duration slow = time_of_disk_ops(1s, 0s, false, 1000);
  EXPECT_GT(slow, 20s);
  EXPECT_LT(slow, 70s);
  EXPECT_EQ(time_of_disk_ops(1s, 0s, false, 1000), slow) << "drawn from the seeded disk latency stream";
}

}  // namespace
}  // namespace sluice
