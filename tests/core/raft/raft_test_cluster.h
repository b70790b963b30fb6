// A raft group on a direct in-memory transport, driven step by step: each node is a Raft with a MemoryRaftLog and a
// "disk" hard state; messages wait in one queue until a test delivers, drops, duplicates or reorders them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "core/raft/raft.h"

namespace sluice::raft::testing {

struct TestNode {
  NodeId id = kNoNode;
  MemoryRaftLog log;
  HardState disk;  // the hard state as synced
  Random random{1};
  std::unique_ptr<Raft> raft;
  bool up = true;
  bool auto_sync = true;  // sync the log at every Ready (otherwise a test calls sync())
  bool unclean_start = false;  // the next start follows a power loss (Options::unclean_start)
};

struct ClusterConfig {
  size_t voters = 3;
  size_t learners = 0;  // ids voters+1 ...
  Options options;      // id is filled in per node
  uint64_t seed = 1;
};

class RaftTestCluster {
 public:
  explicit RaftTestCluster(ClusterConfig config) : config_(std::move(config)) {
    for (size_t i = 1; i <= config_.voters; ++i) membership_.voters.push_back(i);
    for (size_t i = 1; i <= config_.learners; ++i) membership_.learners.push_back(config_.voters + i);
    for (NodeId id : membership_.members()) {
      auto node = std::make_unique<TestNode>();
      node->id = id;
      node->random = Random(mix64(config_.seed * 1000 + id));
      nodes_[id] = std::move(node);
      start(id);
    }
  }

  Raft& raft(NodeId id) { return *nodes_.at(id)->raft; }
  TestNode& node(NodeId id) { return *nodes_.at(id); }
  std::vector<NodeId> ids() const {
    std::vector<NodeId> out;
    for (const auto& [id, node] : nodes_) out.push_back(id);
    return out;
  }
  std::deque<Message>& network() { return network_; }
  const Membership& membership() const { return membership_; }

  // Hands every Ready to its "driver": the hard state to disk, the log synced (when auto_sync), messages queued.
  void process(NodeId id) {
    TestNode& n = node(id);
    if (!n.up) return;
    for (int round = 0; round < 100; ++round) {
      Ready ready = n.raft->take_ready();
      bool progressed = !ready.messages.empty();
      for (Message& m : ready.messages) {
        if (!blocked(m.from, m.to)) network_.push_back(std::move(m));
      }
      if (ready.hard_state) {
        n.disk = *ready.hard_state;
        n.raft->on_hard_state_persisted(ready.hard_state_version);
        progressed = true;
      }
      if (ready.sync_log_through != 0 && n.auto_sync) {
        n.log.sync();
        n.raft->on_log_synced();
        progressed = true;
      }
      if (!progressed) return;
    }
    ADD_FAILURE() << "node " << id << " never settled";
  }
  void process_all() {
    for (NodeId id : ids()) process(id);
  }

  void sync(NodeId id) {
    TestNode& n = node(id);
    if (!n.up) return;
    n.log.sync();
    n.raft->on_log_synced();
    process(id);
  }

  void tick(NodeId id, int times = 1) {
    for (int i = 0; i < times; ++i) {
      if (!node(id).up) return;
      raft(id).tick();
      process(id);
    }
  }
  void tick_all(int times = 1) {
    for (int i = 0; i < times; ++i) {
      for (NodeId id : ids()) tick(id);
    }
  }

  // Delivers the message at `position` in the queue (to a node that is up; to one that is down it is lost).
  void deliver_at(size_t position) {
    ASSERT_LT(position, network_.size());
    Message m = network_[position];
    network_.erase(network_.begin() + static_cast<ptrdiff_t>(position));
    if (!nodes_.count(m.to) || !node(m.to).up || blocked(m.from, m.to)) return;
    raft(m.to).step(m);
    process(m.to);
  }
  // Delivers in order until the queue is empty (or `limit` messages), skipping those `drop` rejects.
  size_t deliver_all(const std::function<bool(const Message&)>& drop = nullptr, size_t limit = 100000) {
    size_t delivered = 0;
    while (!network_.empty() && delivered < limit) {
      if (drop && drop(network_.front())) {
        network_.pop_front();
        continue;
      }
      deliver_at(0);
      ++delivered;
    }
    return delivered;
  }
  // Removes every queued message the predicate selects and returns them (a test may deliver them later).
  std::vector<Message> take_if(const std::function<bool(const Message&)>& selects) {
    std::vector<Message> taken;
    std::deque<Message> kept;
    for (Message& m : network_) {
      if (selects(m)) {
        taken.push_back(std::move(m));
      } else {
        kept.push_back(std::move(m));
      }
    }
    network_ = std::move(kept);
    return taken;
  }

  // Puts messages back at the end of the queue.
  void inject(std::vector<Message> messages) {
    for (Message& m : messages) network_.push_back(std::move(m));
  }

  // Links: a cut pair drops messages both ways, at send and at delivery.
  void cut(NodeId a, NodeId b) {
    cut_.insert({a, b});
    cut_.insert({b, a});
  }
  void isolate(NodeId a) {
    for (NodeId b : ids()) {
      if (b != a) cut(a, b);
    }
  }
  void heal() { cut_.clear(); }
  bool blocked(NodeId from, NodeId to) const { return cut_.count({from, to}) != 0; }

  // A process crash keeps the log (page cache survives); a power loss keeps only what was synced.
  void crash(NodeId id, bool power_loss) {
    TestNode& n = node(id);
    n.up = false;
    n.raft.reset();
    if (power_loss) n.log.power_loss();
    n.unclean_start = power_loss;  // a process crash is unclean too, but loses nothing: tests model it as clean
  }
  void restart(NodeId id) {
    TestNode& n = node(id);
    ASSERT_FALSE(n.up);
    n.up = true;
    start(id);
  }

  // Makes `id` campaign and delivers everything; true when it became leader.
  bool elect(NodeId id) {
    raft(id).campaign();
    process(id);
    deliver_all();
    return raft(id).role() == Role::kLeader;
  }

  // The entry's first index (0 when refused).
  Index propose(NodeId id, const std::string& payload, Index count = 1) {
    const Index index = raft(id).propose(payload, count);
    process(id);
    return index;
  }

  // The leader among the nodes that are up with the highest term, if any.
  std::optional<NodeId> leader() {
    std::optional<NodeId> best;
    for (NodeId id : ids()) {
      if (!node(id).up || raft(id).role() != Role::kLeader) continue;
      if (!best || raft(id).term() > raft(*best).term()) best = id;
    }
    return best;
  }

  void set_membership_everywhere(const Membership& membership) {
    membership_ = membership;
    for (NodeId id : ids()) {
      if (node(id).up) {
        raft(id).set_membership(membership);
        process(id);
      }
    }
  }

 private:
  void start(NodeId id) {
    TestNode& n = node(id);
    Options options = config_.options;
    options.id = id;
    options.unclean_start = n.unclean_start;
    n.raft = std::make_unique<Raft>(options, membership_, n.log, n.disk, n.random);
    process(id);
  }

  ClusterConfig config_;
  Membership membership_;
  std::map<NodeId, std::unique_ptr<TestNode>> nodes_;
  std::deque<Message> network_;
  std::set<std::pair<NodeId, NodeId>> cut_;
};

}  // namespace sluice::raft::testing
