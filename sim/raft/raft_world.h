// RaftWorld: the world of a raft scenario. Each node runs core/raft as a real node would: its groups' logs and hard
// states in files on the node's disk (FileGroupStorage), a RaftTransport on the node's network, one RaftHost, and a
// proposer fiber that proposes to the groups the node leads. Everything the checkers need goes to the RaftHistory;
// boots and stops go to the History the injector also writes. It is the injector's FaultTarget.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/mutations.h"
#include "core/base/result.h"
#include "core/raft/group_storage.h"
#include "core/raft/host.h"
#include "core/storage/partition_log.h"
#include "sim/faults/injector.h"
#include "sim/history/history.h"
#include "sim/raft/raft_history.h"
#include "sim/scenario/scenario.h"
#include "sim/world/sim_cluster.h"

namespace sluice::sim {

inline constexpr uint16_t kRaftPort = 9192;

class RaftWorld final : public FaultTarget {
 public:
  // The histories outlive the world. REQUIRES: scenario.raft.
  RaftWorld(const Scenario& scenario, uint64_t seed, LogLevel level, MutationSet mutations, History& history,
            RaftHistory& raft_history);
  ~RaftWorld() override;

  SimCluster& cluster() override { return cluster_; }
  SimWorld& world() { return cluster_.world(); }
  SimNode* broker_node(const std::string& name) override;
  std::vector<SimNode*> broker_nodes() override;
  std::vector<SimNode*> client_nodes() override { return {}; }
  void take_down(SimNode& node, bool power_loss) override;
  void stop_gracefully(SimNode& node) override;
  void bring_up(SimNode& node) override;

  // Every node's host runs.
  bool all_running() const;
  bool boot_failed() const { return boot_failures_ > 0; }
  // Proposers propose only while this holds.
  void set_proposing(bool on) { proposing_ = on; }
  size_t proposals_in_flight() const { return in_flight_; }
  // After the heal (RaftHistory::healed_at): every group has a leader all nodes agree on, a proposal made since
  // committed there, and every node applied through it. `why` says what is missing otherwise.
  bool converged(std::string* why) const;
  // Every node applied every entry answered committed.
  bool caught_up() const;
  // Records who leads each group now (between steps, outside any fiber: it changes nothing in the run).
  void sample_leaders();
  std::vector<std::string> running_nodes() const;

 private:
  struct Node;
  SimNode::Main main_for(Node& n);
  void run_node(Env env, Node& n);
  void propose_loop(Env env, Node& n);
  Result<std::unique_ptr<raft::GroupStorage>> open_group_storage(
      Env env, Node& n, int group, std::vector<std::unique_ptr<storage::PartitionLog>>& partition_logs);
  raft::Proposed propose(Env env, raft::RaftHost& host, raft::GroupId group, const std::string& payload,
                         raft::Index count);
  std::string applied_payload(const raft::Entry& entry) const;
  std::string describe_group(raft::GroupId group) const;

  Scenario scenario_;
  RaftSpec spec_;
  MutationSet mutations_;
  History& history_;
  RaftHistory& raft_;
  SimCluster cluster_;
  std::vector<std::unique_ptr<Node>> nodes_;
  size_t boot_failures_ = 0;
  bool proposing_ = true;
  size_t in_flight_ = 0;
  // The highest index answered committed per group, of all proposals and of those made after the heal: kept as
  // proposals complete, so the convergence checks between steps never scan the history.
  std::map<raft::GroupId, raft::Index> committed_;
  std::map<raft::GroupId, raft::Index> committed_after_heal_;
};

}  // namespace sluice::sim
