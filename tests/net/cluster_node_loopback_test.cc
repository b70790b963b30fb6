// ClusterNode on the real world: three nodes in one process, each with its transport on a loopback port and its
// metadata group in files (real fdatasync), register, apply a CreateTopic proposed on one of them and stop: the
// code the simulator runs, on sockets.
#include <fmt/format.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "core/cluster/cluster_node.h"
#include "core/cluster/metadata/placement.h"
#include "core/cluster/metadata/topic_identity.h"
#include "net/real_env.h"
#include "tests/net/free_ports.h"
#include "tests/net/temp_dir.h"

namespace sluice::cluster {
namespace {

using namespace std::chrono_literals;

constexpr raft::NodeId kNodes = 3;

using net_test::free_ports;

TEST(ClusterNodeLoopback, ThreeNodesOnSocketsAndFilesRegisterAndApplyTheSameTopic) {
  net_test::TempDir dir;
  RealEnv real("cluster-node-loopback", LogLevel::kWarn);
  bool finished = false;
  real.run([&](Env& env) {
    const std::vector<uint16_t> ports = free_ports(env, kNodes);
    ASSERT_EQ(ports.size(), kNodes);
    std::vector<std::unique_ptr<ClusterNode>> nodes;
    for (raft::NodeId id = 1; id <= kNodes; ++id) {
      ClusterNodeOptions options;
      options.node_id = id;
      for (raft::NodeId other = 1; other <= kNodes; ++other) {
        options.voters[other] = Address{"127.0.0.1", ports[other - 1]};
      }
      options.raft_address = options.voters[id];
      options.metadata_dir = dir / fmt::format("n{}/__cluster_metadata", id);
      options.host = "127.0.0.1";
      options.port = static_cast<int32_t>(9000 + id);
      options.host_options.tick = 20ms;
      options.retry_interval = 100ms;
      nodes.push_back(std::make_unique<ClusterNode>(env, options));
    }
    for (auto& n : nodes) ASSERT_TRUE(n->start().ok());
    const Instant deadline = env.clock.now() + 20s;
    const auto converged = [&] {
      for (auto& n : nodes) {
        if (!n->registered() || n->image().brokers().size() != kNodes) return false;
        if (n->image().applied_index() != nodes[0]->image().applied_index()) return false;
        if (n->image().digest() != nodes[0]->image().digest()) return false;
      }
      return true;
    };
    while (!converged() && env.clock.now() < deadline) env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(converged());
    // Proposed on node 2, whichever node leads.
    ClusterNode& proposer = *nodes[1];
    const std::vector<int32_t> brokers = proposer.image().broker_ids();
    auto placed = metadata::assign_replicas(brokers, 3, 3, env.random);
    ASSERT_TRUE(placed.ok());
    metadata::CreateTopic topic{
        "loopback", metadata::new_topic_id(env.random), {}, metadata::numbered_partitions(*placed, 0)};
    const Result<std::vector<Status>> outcome = proposer.propose(metadata::Batch{{topic}}, env.clock.now() + 10s);
    ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
    EXPECT_TRUE(outcome->front().ok()) << outcome->front().to_string();
    while (!converged() && env.clock.now() < deadline) env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(converged());
    for (auto& n : nodes) {
      ASSERT_NE(n->image().topic("loopback"), nullptr);
      EXPECT_EQ(n->image().topic("loopback")->id, topic.topic_id);
      EXPECT_EQ(n->image(), nodes[0]->image());
    }
    for (auto& n : nodes) n->stop();
    nodes.clear();  // each joins its fibers: registration, the host's driver, the transport's
    finished = true;
  });
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace sluice::cluster
