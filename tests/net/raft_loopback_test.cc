// Raft on the real world: three hosts in one process, each with its transport on a loopback port and its groups in
// files (real fdatasync), elect, commit and apply the same entries: the code the simulator runs, on sockets.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "core/raft/file_group_storage.h"
#include "core/raft/host.h"
#include "core/raft/transport.h"
#include "net/real_env.h"
#include "tests/net/free_ports.h"
#include "tests/net/temp_dir.h"

namespace sluice::raft {
namespace {

using namespace std::chrono_literals;

constexpr size_t kNodes = 3;
constexpr GroupId kGroups = 2;

using net_test::free_ports;

struct LoopbackNode {
  std::vector<std::unique_ptr<FileGroupStorage>> storage;
  std::unique_ptr<RaftTransport> transport;
  std::unique_ptr<RaftHost> host;
  std::map<GroupId, std::vector<Entry>> applied;
};

TEST(RaftLoopback, ThreeHostsOnSocketsAndFilesCommitAndApplyTheSameEntries) {
  net_test::TempDir dir;
  RealEnv real("raft-loopback", LogLevel::kWarn);
  bool finished = false;
  real.run([&](Env& env) {
    const std::vector<uint16_t> ports = free_ports(env, kNodes);
    ASSERT_EQ(ports.size(), kNodes);
    Membership membership;
    for (NodeId id = 1; id <= kNodes; ++id) membership.voters.push_back(id);
    std::vector<std::unique_ptr<LoopbackNode>> nodes;
    for (NodeId id = 1; id <= kNodes; ++id) {
      auto node = std::make_unique<LoopbackNode>();
      std::map<NodeId, Address> peers;
      for (NodeId other = 1; other <= kNodes; ++other) {
        if (other != id) peers[other] = Address{"127.0.0.1", ports[other - 1]};
      }
      LoopbackNode* n = node.get();
      node->transport = std::make_unique<RaftTransport>(
          env, id, Address{"127.0.0.1", ports[id - 1]}, peers,
          [n](NodeId from, std::vector<Envelope>& batch) { n->host->receive(from, batch); });
      HostOptions options;
      options.tick = 20ms;
      node->host = std::make_unique<RaftHost>(
          env, id, options, [n](NodeId to, std::vector<Envelope> batch) { n->transport->send(to, std::move(batch)); },
          [n](GroupId g, Index index, const Entry& entry) {
            EXPECT_EQ(index, n->applied[g].size() + 1);
            n->applied[g].push_back(entry);
          });
      for (GroupId g = 1; g <= kGroups; ++g) {
        auto storage = FileGroupStorage::open(env.fs, dir / fmt::format("n{}/group-{}", id, g));
        ASSERT_TRUE(storage.ok()) << storage.status().to_string();
        node->host->add_group(g, membership, **storage);
        node->storage.push_back(std::move(*storage));
      }
      nodes.push_back(std::move(node));
    }
    for (auto& n : nodes) ASSERT_TRUE(n->transport->start().ok());
    for (auto& n : nodes) n->host->start();
    const Instant deadline = env.clock.now() + 20s;
    for (GroupId g = 1; g <= kGroups; ++g) {
      int committed = 0;
      while (committed < 30 && env.clock.now() < deadline) {
        const NodeId leader = nodes[0]->host->status(g)->leader;
        if (leader == kNoNode) {
          env.scheduler.sleep_for(20ms);
          continue;
        }
        const Proposed p = nodes[leader - 1]->host->propose(g, fmt::format("g{}-{}", g, committed),
                                                             env.clock.now() + 2s);
        if (p.outcome == ProposeOutcome::kCommitted) ++committed;
      }
      EXPECT_EQ(committed, 30) << "group " << g;
    }
    // Every node applies the same log of each group.
    const auto same = [&] {
      for (GroupId g = 1; g <= kGroups; ++g) {
        for (auto& n : nodes) {
          if (n->applied[g] != nodes[0]->applied[g] || n->applied[g].size() < 30) return false;
        }
      }
      return true;
    };
    while (!same() && env.clock.now() < deadline) env.scheduler.sleep_for(10ms);
    EXPECT_TRUE(same());
    for (auto& n : nodes) EXPECT_GE(n->transport->stats().frames_sent, 1u);
    for (auto& n : nodes) n->host->stop();
    for (auto& n : nodes) n->transport->stop();
    nodes.clear();  // hosts join their drivers, transports their fibers
    finished = true;
  });
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace sluice::raft
