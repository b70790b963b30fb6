#include "sim/raft/raft_world.h"

#include <fmt/format.h>

#include <map>

#include "core/base/assert.h"
#include "core/env/sync.h"
#include "core/raft/file_group_storage.h"
#include "core/raft/host.h"
#include "core/raft/transport.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kProposeDeadline = 3s;

}  // namespace

struct RaftWorld::Node {
  SimNode* sim = nullptr;
  raft::NodeId id = raft::kNoNode;
  raft::RaftHost* host = nullptr;  // while its host runs
  Event* stop = nullptr;           // set to stop the node gracefully
  bool stopping = false;
  bool boot_when_down = false;
  std::map<raft::GroupId, raft::Index> applied;  // this boot's last applied index (an entry end) per group
  uint64_t next_payload = 0;
};

RaftWorld::RaftWorld(const Scenario& scenario, uint64_t seed, LogLevel level, MutationSet mutations, History& history,
                     RaftHistory& raft_history)
    : scenario_(scenario),
      spec_(*scenario.raft),
      mutations_(mutations),
      history_(history),
      raft_(raft_history),
      cluster_(seed, level) {
  SLUICE_ASSERT(scenario.raft.has_value());
  SLUICE_ASSERT(scenario.brokers >= 1);
  for (int i = 0; i < scenario.brokers; ++i) {
    auto n = std::make_unique<Node>();
    n->sim = &cluster_.add_node();
    n->id = static_cast<raft::NodeId>(i + 1);
    nodes_.push_back(std::move(n));
  }
  for (auto& n : nodes_) bring_up(*n->sim);
}

RaftWorld::~RaftWorld() {
  for (auto& n : nodes_) {
    if (n->sim->up()) n->sim->crash();
  }
}

SimNode* RaftWorld::broker_node(const std::string& name) {
  for (auto& n : nodes_) {
    if (n->sim->name() == name) return n->sim;
  }
  return nullptr;
}

std::vector<SimNode*> RaftWorld::broker_nodes() {
  std::vector<SimNode*> out;
  for (auto& n : nodes_) out.push_back(n->sim);
  return out;
}

bool RaftWorld::all_running() const {
  for (const auto& n : nodes_) {
    if (n->host == nullptr) return false;
  }
  return true;
}

std::vector<std::string> RaftWorld::running_nodes() const {
  std::vector<std::string> names;
  for (const auto& n : nodes_) {
    if (n->host != nullptr) names.push_back(n->sim->name());
  }
  return names;
}

SimNode::Main RaftWorld::main_for(Node& n) {
  return [this, &n](Env env) {
    struct Forget {
      Node& n;
      ~Forget() {
        n.host = nullptr;
        n.stop = nullptr;
        n.stopping = false;
      }
    } forget{n};
    run_node(env, n);
    // The node's last fiber ends here; mark it down from outside any fiber, so that it can boot again.
    world().schedule_after(Duration(0), kWorldNode, EventKind::kControl, [this, &n] {
      if (n.sim->up()) n.sim->crash();
      if (n.boot_when_down) {
        n.boot_when_down = false;
        bring_up(*n.sim);
      }
    });
  };
}

void RaftWorld::run_node(Env env, Node& n) {
  const std::string name = n.sim->name();
  const uint32_t boot = n.sim->boots();
  n.applied.clear();
  std::vector<std::unique_ptr<raft::FileGroupStorage>> storages;
  for (int g = 1; g <= spec_.groups; ++g) {
    Result<std::unique_ptr<raft::FileGroupStorage>> opened =
        raft::FileGroupStorage::open(env.fs, fmt::format("raft/group-{}", g));
    if (!opened.ok()) {
      ++boot_failures_;
      history_.world({WorldEvent::Kind::kBootFailed, world().now(), name, opened.status().message(), 0});
      return;
    }
    storages.push_back(std::move(*opened));
  }
  std::map<raft::NodeId, Address> peers;
  raft::Membership membership;
  for (const auto& other : nodes_) {
    membership.voters.push_back(other->id);
    if (other->id != n.id) peers[other->id] = Address{other->sim->name(), kRaftPort};
  }
  raft::RaftHost* host_for_transport = nullptr;
  raft::RaftTransport transport(env, n.id, Address{name, kRaftPort}, peers,
                                [&host_for_transport](raft::NodeId from, std::vector<raft::Envelope>& batch) {
                                  if (host_for_transport != nullptr) host_for_transport->receive(from, batch);
                                });
  raft::HostOptions options;
  options.tick = spec_.tick;
  options.raft.election_ticks = static_cast<uint32_t>(spec_.election_ticks);
  options.raft.commit_mode = spec_.durability == "replicated" ? raft::CommitMode::kReplicated
                                                              : raft::CommitMode::kPersisted;
  options.raft.mutations = mutations_;
  raft::RaftHost host(
      env, n.id, options,
      [&transport](raft::NodeId to, std::vector<raft::Envelope> batch) { transport.send(to, std::move(batch)); },
      [this, &n, name, boot](raft::GroupId g, raft::Index index, const raft::Entry& entry) {
        raft_.applied.push_back({name, boot, g, index, entry.term, entry.payload, world().now(), entry.count});
        n.applied[g] = index + entry.count - 1;
      },
      [this, name](raft::GroupId g, raft::Term term) { raft_.leaderships.push_back({name, g, term, world().now()}); });
  for (int g = 1; g <= spec_.groups; ++g) host.add_group(static_cast<raft::GroupId>(g), membership, *storages[g - 1]);
  if (Status started = transport.start(); !started.ok()) {
    ++boot_failures_;
    history_.world({WorldEvent::Kind::kBootFailed, world().now(), name, started.message(), 0});
    return;
  }
  host_for_transport = &host;
  host.start();
  Event stop(env.scheduler);
  n.stop = &stop;
  n.host = &host;
  history_.world({WorldEvent::Kind::kServing, world().now(), name, "", 0});
  FiberRef proposer = env.scheduler.spawn("proposer", [this, env, &n] { propose_loop(env, n); });
  stop.wait();
  // A graceful stop: the proposer sees the host gone and ends, then the driver, then the transport.
  n.host = nullptr;
  host.stop();
  env.scheduler.join(proposer);
  host_for_transport = nullptr;
  transport.stop();
  history_.world({WorldEvent::Kind::kDown, world().now(), name, "stopped gracefully", 0});
}

void RaftWorld::propose_loop(Env env, Node& n) {
  const int64_t every_us = std::chrono::duration_cast<std::chrono::microseconds>(spec_.propose_every).count();
  while (n.host != nullptr) {
    // Jittered in [0.5, 1.5) of the interval, so nodes do not propose in lock step.
    env.scheduler.sleep_for(std::chrono::microseconds(every_us / 2 + env.random.uniform_range(0, every_us)));
    raft::RaftHost* host = n.host;
    if (host == nullptr || !proposing_) continue;
    const auto group = static_cast<raft::GroupId>(1 + env.random.uniform(static_cast<uint64_t>(spec_.groups)));
    const raft::Raft* state = host->raft(group);
    if (state == nullptr || state->role() != raft::Role::kLeader) continue;
    const size_t id = raft_.proposals.size();
    RaftProposal proposal;
    proposal.node = n.sim->name();
    proposal.group = group;
    proposal.payload = fmt::format("{}.{}.{}", n.sim->name(), n.sim->boots(), ++n.next_payload);
    proposal.invoked = world().now();
    raft_.proposals.push_back(std::move(proposal));
    ++in_flight_;
    struct InFlight {
      size_t& count;
      ~InFlight() { --count; }
    } in_flight{in_flight_};
    // A span is drawn only when the scenario asks for one, so that scenarios of count-1 entries keep their draws.
    const raft::Index count =
        spec_.max_count > 1 ? 1 + env.random.uniform(static_cast<uint64_t>(spec_.max_count)) : raft::Index{1};
    const raft::Proposed outcome = host->propose(group, raft_.proposals[id].payload, count,
                                                 env.clock.now() + kProposeDeadline, raft::ProposeWait::kCommitted);
    RaftProposal& p = raft_.proposals[id];
    p.outcome = outcome;
    p.done = true;
    p.completed = world().now();
    if (outcome.outcome == raft::ProposeOutcome::kCommitted) {
      committed_[group] = std::max(committed_[group], outcome.last_index);
      if (raft_.healed && p.invoked >= raft_.healed_at) {
        committed_after_heal_[group] = std::max(committed_after_heal_[group], outcome.last_index);
      }
    }
  }
}

// Between steps of the liveness and settle phases: nothing here may scan the history.
bool RaftWorld::converged(std::string* why) const {
  if (!all_running()) {
    *why = "a node's host is not running";
    return false;
  }
  for (int g = 1; g <= spec_.groups; ++g) {
    const auto group = static_cast<raft::GroupId>(g);
    raft::NodeId leader = raft::kNoNode;
    for (const auto& n : nodes_) {
      const raft::NodeId seen = n->host->raft(group)->leader();
      if (seen == raft::kNoNode || (leader != raft::kNoNode && seen != leader)) {
        *why = fmt::format("group {} has no leader every node agrees on", g);
        return false;
      }
      leader = seen;
    }
    auto committed = committed_after_heal_.find(group);
    if (committed == committed_after_heal_.end()) {
      *why = fmt::format("group {}: nothing proposed after the heal has committed", g);
      return false;
    }
    for (const auto& n : nodes_) {
      auto it = n->applied.find(group);
      if (it == n->applied.end() || it->second < committed->second) {
        *why = fmt::format("group {}: {} has not applied index {}", g, n->sim->name(), committed->second);
        return false;
      }
    }
  }
  return true;
}

bool RaftWorld::caught_up() const {
  for (const auto& n : nodes_) {
    if (n->host == nullptr) return false;
    for (const auto& [g, index] : committed_) {
      auto it = n->applied.find(g);
      if (it == n->applied.end() || it->second < index) return false;
    }
  }
  return true;
}

void RaftWorld::sample_leaders() {
  const Instant now = world().now();
  for (const auto& n : nodes_) {
    if (n->host == nullptr) continue;
    for (int g = 1; g <= spec_.groups; ++g) {
      const raft::Raft* state = n->host->raft(static_cast<raft::GroupId>(g));
      if (state != nullptr && state->role() == raft::Role::kLeader) {
        raft_.samples.push_back({now, static_cast<raft::GroupId>(g), n->sim->name(), state->term()});
      }
    }
  }
}

void RaftWorld::take_down(SimNode& node, bool power_loss) { take_node_down(history_, world().now(), node, power_loss); }

void RaftWorld::stop_gracefully(SimNode& node) {
  for (auto& n : nodes_) {
    if (n->sim != &node) continue;
    if (n->stop != nullptr && !n->stopping) {
      n->stopping = true;
      n->stop->set();
    } else if (node.up() && !n->stopping) {
      take_down(node, false);
    }
  }
}

void RaftWorld::bring_up(SimNode& node) {
  for (auto& n : nodes_) {
    if (n->sim != &node) continue;
    if (node.up()) {
      if (n->stopping) n->boot_when_down = true;
      continue;
    }
    history_.world({WorldEvent::Kind::kBoot, world().now(), node.name(), fmt::format("boot {}", node.boots() + 1), 0});
    node.boot(main_for(*n));
  }
}

}  // namespace sluice::sim
