// HostWorld: RaftHosts on simulated nodes for the host tests. Each node's host drives its groups on the node's
// scheduler and clock, and messages travel as the world's events (3 ms each, dropped across a cut), so the tests
// exercise the driver (rounds, ticks, the Ready contract, proposals, hooks) without the transport. Each group's
// storage survives crashes (MemoryGroupStorage), can be made to fail, and counts the reads of its log.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/raft/host.h"
#include "sim/world/sim_cluster.h"

namespace sluice::raft::testing {

using namespace std::chrono_literals;

// A MemoryRaftLog that counts the reads made of it (the leader's appends, the host's apply).
class CountingLog final : public RaftLog {
 public:
  explicit CountingLog(RaftLog& inner) : inner_(inner) {}
  Index last_index() const override { return inner_.last_index(); }
  Term term_at(Index index) const override { return inner_.term_at(index); }
  Index entry_start(Index index) const override { return inner_.entry_start(index); }
  Index durable_index() const override { return inner_.durable_index(); }
  void append(Index at, std::span<const Entry> entries) override { inner_.append(at, entries); }
  void truncate_suffix(Index from) override { inner_.truncate_suffix(from); }
  std::vector<Entry> read(Index from, size_t max_count, uint64_t max_bytes) const override {
    ++reads;
    return inner_.read(from, max_count, max_bytes);
  }
  mutable uint64_t reads = 0;

 private:
  RaftLog& inner_;
};

// A storage whose disk can be made to fail, and whose log counts its reads.
class FailingStorage final : public GroupStorage {
 public:
  explicit FailingStorage(MemoryGroupStorage& inner) : inner_(inner), log_(inner.log()) {}
  RaftLog& log() override { return log_; }
  const CountingLog& counting_log() const { return log_; }
  HardState hard_state() const override { return inner_.hard_state(); }
  Status store_hard_state(const HardState& state) override {
    if (fail) return Status(Code::kIoError, "injected");
    return inner_.store_hard_state(state);
  }
  Status sync_log() override {
    if (fail) return Status(Code::kIoError, "injected");
    return inner_.sync_log();
  }
  bool fail = false;

 private:
  MemoryGroupStorage& inner_;
  CountingLog log_;
};

struct Applied {
  Index index = 0;
  Entry entry;
};

struct RoleChange {
  Role role = Role::kFollower;
  Term term = 0;
  NodeId leader = kNoNode;
  bool operator==(const RoleChange&) const = default;
};

class HostWorld {
 public:
  // `apply_entries`: GroupHooks::apply_entries of every group.
  HostWorld(size_t nodes, size_t groups, CommitMode mode = CommitMode::kPersisted, bool apply_entries = true)
      : apply_entries_(apply_entries), cluster_(7, LogLevel::kOff) {
    for (size_t i = 1; i <= nodes; ++i) membership_.voters.push_back(i);
    options_.raft.commit_mode = mode;
    for (size_t i = 0; i < nodes; ++i) {
      cluster_.add_node();
      auto state = std::make_unique<NodeState>();
      for (GroupId g = 1; g <= groups; ++g) {
        state->storage[g] = std::make_unique<MemoryGroupStorage>();
        state->failing[g] = std::make_unique<FailingStorage>(*state->storage[g]);
      }
      nodes_.push_back(std::move(state));
    }
    for (size_t i = 0; i < nodes; ++i) boot(i + 1);
  }

  // The nodes' fibers reference the node states: unwind them first.
  ~HostWorld() {
    for (NodeId id = 1; id <= nodes_.size(); ++id) {
      if (node(id).up()) node(id).crash();
    }
  }

  void boot(NodeId id) {
    SimNode& node = cluster_.node(id - 1);
    node.boot([this, id](Env env) { main(env, id); });
  }
  void crash(NodeId id, bool power_loss) {
    if (power_loss) {
      cluster_.node(id - 1).power_loss();
      for (auto& [g, storage] : nodes_[id - 1]->storage) storage->power_loss();
    } else {
      cluster_.node(id - 1).crash();
    }
  }

  RaftHost* host(NodeId id) { return nodes_[id - 1]->host; }
  SimWorld& world() { return cluster_.world(); }
  SimNode& node(NodeId id) { return cluster_.node(id - 1); }
  const std::vector<Applied>& applied(NodeId id, GroupId g) { return nodes_[id - 1]->applied[g]; }
  // What the group's hooks reported in this boot.
  const std::vector<Index>& commits(NodeId id, GroupId g) { return nodes_[id - 1]->commits[g]; }
  const std::vector<RoleChange>& roles(NodeId id, GroupId g) { return nodes_[id - 1]->roles[g]; }
  FailingStorage& storage(NodeId id, GroupId g) { return *nodes_[id - 1]->failing[g]; }
  void cut(NodeId a, NodeId b) { cut_.insert({std::min(a, b), std::max(a, b)}); }
  void heal() { cut_.clear(); }

  // The leader of `g` every live node agrees on, or kNoNode.
  NodeId agreed_leader(GroupId g) {
    NodeId leader = kNoNode;
    for (NodeId id = 1; id <= nodes_.size(); ++id) {
      if (host(id) == nullptr) continue;
      const NodeId seen = host(id)->status(g)->leader;
      if (seen == kNoNode || (leader != kNoNode && seen != leader)) return kNoNode;
      leader = seen;
    }
    return leader != kNoNode && host(leader) != nullptr ? leader : kNoNode;
  }
  bool run_until(const std::function<bool()>& done, Duration limit = 30s) {
    return world().run_until(done, world().now() + limit);
  }

  // Proposes from a fiber of node `id`; the outcome lands in *out.
  void propose(NodeId id, GroupId g, std::string payload, Proposed* out, bool* done) {
    node(id).scheduler().spawn("proposer", [this, id, g, payload, out, done] {
      *out = host(id)->propose(g, payload, node(id).clock().now() + 5s);
      *done = true;
    });
  }
  // Runs `body` on a fiber of node `id` and the world until it returns (at most `limit`).
  bool on_fiber(NodeId id, std::function<void()> body, Duration limit = 30s) {
    bool done = false;
    node(id).scheduler().spawn("test", [body = std::move(body), &done] {
      body();
      done = true;
    });
    return run_until([&] { return done; }, limit);
  }
  Proposed propose_and_wait(NodeId id, GroupId g, std::string payload) {
    Proposed result;
    bool done = false;
    propose(id, g, std::move(payload), &result, &done);
    EXPECT_TRUE(run_until([&] { return done; }));
    return result;
  }

  HostOptions options_;

 private:
  struct NodeState {
    std::map<GroupId, std::unique_ptr<MemoryGroupStorage>> storage;  // survives crashes
    std::map<GroupId, std::unique_ptr<FailingStorage>> failing;
    std::map<GroupId, std::vector<Applied>> applied;  // this boot's
    std::map<GroupId, std::vector<Index>> commits;    // this boot's on_commit calls
    std::map<GroupId, std::vector<RoleChange>> roles;  // this boot's on_role_change calls
    RaftHost* host = nullptr;
  };

  void main(Env env, NodeId id) {
    NodeState& state = *nodes_[id - 1];
    state.applied.clear();
    state.commits.clear();
    state.roles.clear();
    RaftHost host(
        env, id, options_, [this, id](NodeId to, std::vector<Envelope> batch) { deliver(id, to, std::move(batch)); },
        [&state](GroupId g, Index index, const Entry& entry) { state.applied[g].push_back({index, entry}); });
    for (auto& [g, storage] : state.failing) {
      GroupHooks hooks;
      hooks.apply_entries = apply_entries_;
      hooks.on_commit = [&state, g](Index commit) { state.commits[g].push_back(commit); };
      hooks.on_role_change = [&state, g](Role role, Term term, NodeId leader) {
        state.roles[g].push_back(RoleChange{role, term, leader});
      };
      host.add_group(g, membership_, *storage, std::nullopt, std::move(hooks));
    }
    struct Forget {
      NodeState& state;
      ~Forget() { state.host = nullptr; }
    } forget{state};
    state.host = &host;
    host.start();
    Event forever(env.scheduler);
    forever.wait();
  }

  void deliver(NodeId from, NodeId to, std::vector<Envelope> batch) {
    if (cut_.contains({std::min(from, to), std::max(from, to)})) return;
    auto shared = std::make_shared<std::vector<Envelope>>(std::move(batch));
    world().schedule_after(3ms, static_cast<sluice::NodeId>(to), EventKind::kNetwork, [this, from, to, shared] {
      if (RaftHost* target = host(to)) target->receive(from, *shared);
    });
  }

  bool apply_entries_ = true;
  SimCluster cluster_;
  Membership membership_;
  std::vector<std::unique_ptr<NodeState>> nodes_;
  std::set<std::pair<NodeId, NodeId>> cut_;
};

}  // namespace sluice::raft::testing
