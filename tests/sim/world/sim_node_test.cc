#include "sim/world/sim_node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/selftest/journal.h"
#include "sim/world/sim_cluster.h"
#include "sim/world/sim_disk.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(SimNode, LogLinesCarryVirtualTimeAndNodeName) {
  std::vector<std::string> lines;  // outlives the cluster, whose teardown still logs
  SimCluster cluster(1, LogLevel::kInfo);
  SimNode& node = cluster.add_node();
  node.log().set_capture([&](LogLevel, std::string_view line) { lines.emplace_back(line); });
  node.boot([](Env env) {
    env.scheduler.sleep_for(1500ms);
    env.log.info("hello");
  });
  cluster.world().run_for(2s);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "[1.500000 n1] hello");
}

TEST(SimNode, CrashKeepsUnsyncedDataPowerLossDropsIt) {
  SimCluster cluster(7, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  node.boot([](Env env) {
    auto file = env.fs.open("f", OpenMode::kCreate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(env.fs.sync_dir(".").ok());
    ASSERT_TRUE((*file)->append(as_bytes("synced")).ok());
    ASSERT_TRUE((*file)->sync().ok());
    ASSERT_TRUE((*file)->append(as_bytes(std::string(4096, 'u'))).ok());
    env.scheduler.sleep_for(1h);  // killed while holding the file
  });
  cluster.world().run_for(1s);
  node.crash();  // a process death: the page cache keeps the unsynced bytes
  EXPECT_FALSE(node.up());
  {
    auto file = node.fs().open("f", OpenMode::kRead);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(*(*file)->size(), 6u + 4096u);
  }
  node.power_loss();  // a machine death: only synced data is promised
  auto file = node.fs().open("f", OpenMode::kRead);
  ASSERT_TRUE(file.ok());
  const uint64_t size = *(*file)->size();
  EXPECT_GE(size, 6u);
  Bytes head(6);
  ASSERT_TRUE((*file)->pread(0, head).ok());
  EXPECT_EQ(as_chars(head), "synced");
  EXPECT_EQ(node.disk().stats().power_losses, 1u);
}

TEST(SimNode, RestartRunsMainAgainWithTheSameDisk) {
  SimCluster cluster(3, LogLevel::kOff);
  SimNode& node = cluster.add_node();
  std::vector<size_t> records_seen_at_boot;
  node.boot([&](Env env) {
    auto journal = Journal::open(env.fs, "j");
    ASSERT_TRUE(journal.ok());
    records_seen_at_boot.push_back((*journal)->records().size());
    ASSERT_TRUE((*journal)->append(as_bytes("boot")).ok());
    ASSERT_TRUE((*journal)->sync().ok());
    env.scheduler.sleep_for(1h);
  });
  cluster.world().run_for(1s);
  node.power_loss();
  node.restart();
  cluster.world().run_for(1s);
  node.crash();
  node.restart();
  cluster.world().run_for(1s);
  EXPECT_EQ(node.boots(), 3u);
  EXPECT_EQ(records_seen_at_boot, (std::vector<size_t>{0, 1, 2}));
}

// Faults draw from their own stream: a node's own random draws do not depend on how many faults were drawn.
TEST(SimNode, FaultDrawsDoNotShiftTheNodesRandomStream) {
  auto node_draws = [](int extra_fault_draws) {
    SimCluster cluster(99, LogLevel::kOff);
    SimNode& node = cluster.add_node();
    for (int i = 0; i < extra_fault_draws; ++i) cluster.world().fault_rng().next_u64();
    std::vector<uint64_t> draws;
    node.boot([&](Env env) {
      for (int i = 0; i < 8; ++i) draws.push_back(env.random.next_u64());
    });
    cluster.world().run_for(1s);
    return draws;
  };
  EXPECT_EQ(node_draws(0), node_draws(5));
  EXPECT_EQ(node_draws(0).size(), 8u);
}

TEST(SimNodeDeathTest, AssertionInsideASimulatedFiberPrintsTheReplayCommand) {
  EXPECT_DEATH(
      {
        SimCluster cluster(1234, LogLevel::kOff);
        SimNode& node = cluster.add_node();
        set_assert_failure_hook(simulation_failure_hook(cluster.world(), "sluice sim --seed 1234"));
        node.boot([](Env env) {
          env.scheduler.sleep_for(250ms);
          SLUICE_ASSERT(env.clock.now().time_since_epoch() < 100ms);
        });
        cluster.world().run_for(1s);
      },
      "assertion failed(.|\n)*seed 1234(.|\n)*0\\.250000(.|\n)*replay with:\n  sluice sim --seed 1234");
}

}  // namespace
}  // namespace sluice
