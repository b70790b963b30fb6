#include "sim/raft/raft_world.h"

#include <fmt/format.h>

#include <map>

#include "core/base/assert.h"
#include "core/env/sync.h"
#include "core/cluster/partition_raft_log.h"
#include "core/raft/file_group_storage.h"
#include "core/raft/host.h"
#include "core/raft/transport.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kProposeDeadline = 3s;
constexpr int64_t kPartitionSegmentBytes = 16 * 1024;

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
  std::vector<std::unique_ptr<storage::PartitionLog>> partition_logs;  // before storages: they refer to these
  std::vector<std::unique_ptr<raft::GroupStorage>> storages;
  for (int g = 1; g <= spec_.groups; ++g) {
    Result<std::unique_ptr<raft::GroupStorage>> opened = open_group_storage(env, n, g, partition_logs);
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
  options.raft.max_entries_per_append = static_cast<uint32_t>(spec_.max_entries_per_append);
  options.raft.max_inflight_appends = static_cast<uint32_t>(spec_.max_inflight_appends);
  raft::RaftHost host(
      env, n.id, options,
      [&transport](raft::NodeId to, std::vector<raft::Envelope> batch) { transport.send(to, std::move(batch)); },
      [this, &n, name, boot](raft::GroupId g, raft::Index index, const raft::Entry& entry) {
        raft_.applied.push_back({name, boot, g, index, entry.term, applied_payload(entry), world().now(), entry.count});
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
  std::vector<FiberRef> proposers;
  for (int i = 0; i < spec_.proposers; ++i) {
    proposers.push_back(env.scheduler.spawn("proposer", [this, env, &n] { propose_loop(env, n); }));
  }
  stop.wait();
  // A graceful stop: the proposers see the host gone and end, then the driver, then the transport.
  n.host = nullptr;
  host.stop();
  for (const FiberRef& proposer : proposers) env.scheduler.join(proposer);
  host_for_transport = nullptr;
  transport.stop();
  for (auto& log : partition_logs) {
    if (Status closed = log->close(); !closed.ok()) env.log.warn("closing {}: {}", log->dir(), closed.to_string());
  }
  history_.world({WorldEvent::Kind::kDown, world().now(), name, "stopped gracefully", 0});
}

// A group's storage on this node's disk: core/raft's own files, or a Kafka partition log as the raft log.
Result<std::unique_ptr<raft::GroupStorage>> RaftWorld::open_group_storage(
    Env env, Node& n, int group, std::vector<std::unique_ptr<storage::PartitionLog>>& partition_logs) {
  if (spec_.storage != "partition-log") {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<raft::FileGroupStorage> files,
                            raft::FileGroupStorage::open(env.fs, fmt::format("raft/group-{}", group)));
    return std::unique_ptr<raft::GroupStorage>(std::move(files));
  }
  storage::LogSettings settings;
  settings.segment_bytes = kPartitionSegmentBytes;  // small: truncations and reads cross segments
  settings.persisted = false;                       // the raft host decides when the log syncs
  settings.high_watermark_follows_log_end = false;
  settings.mutations = mutations_;
  const std::string dir = fmt::format("raft/partition-{}", group);
  SLUICE_TRY(create_dirs_durably(env.fs, dir));  // else a power loss may take the whole group away
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<storage::PartitionLog> log, storage::PartitionLog::open(env, dir, settings));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<cluster::PartitionGroupStorage> group_storage,
                          cluster::PartitionGroupStorage::open(env, *log, static_cast<int32_t>(n.id)));
  partition_logs.push_back(std::move(log));
  return std::unique_ptr<raft::GroupStorage>(std::move(group_storage));
}

// On partition logs a proposal is a batch of `count` records whose first value is the payload (its entry covers one
// index per record); elsewhere it is the payload itself, covering `count` indexes.
raft::Proposed RaftWorld::propose(Env env, raft::RaftHost& host, raft::GroupId group, const std::string& payload,
                                  raft::Index count) {
  const Instant deadline = env.clock.now() + kProposeDeadline;
  if (spec_.storage != "partition-log") {
    return host.propose(group, payload, count, deadline, raft::ProposeWait::kCommitted);
  }
  std::vector<storage::Record> batch_records;
  for (raft::Index i = 0; i < count; ++i) {
    storage::Record record;
    record.offset = static_cast<int64_t>(i);
    record.timestamp = to_unix_ms(env.clock.wall_now());
    record.value = to_bytes(i == 0 ? payload : fmt::format("{}#{}", payload, i));
    batch_records.push_back(std::move(record));
  }
  Result<Bytes> batch = storage::build_batch(batch_records);
  SLUICE_ASSERT(batch.ok());
  return host.propose(group, std::string(batch->begin(), batch->end()), count, deadline,
                      raft::ProposeWait::kCommitted);
}

// What the checkers compare: the payload proposed. A partition log's entry is a batch whose first record holds
// it; a control batch (the leader's no-op) reads as the empty no-op payload.
std::string RaftWorld::applied_payload(const raft::Entry& entry) const {
  if (spec_.storage != "partition-log" || entry.payload.empty()) return entry.payload;
  const ByteView bytes(reinterpret_cast<const uint8_t*>(entry.payload.data()), entry.payload.size());
  Result<storage::BatchHeader> header = storage::parse_batch_header(bytes);
  SLUICE_ASSERT(header.ok());
  if (header->control()) return "";
  Result<std::vector<storage::Record>> records = storage::decode_records(bytes);
  SLUICE_ASSERT(records.ok());
  SLUICE_ASSERT(!records->empty());
  SLUICE_ASSERT(static_cast<raft::Index>(records->size()) == entry.count);
  const std::optional<Bytes>& value = records->front().value;
  SLUICE_ASSERT(value.has_value());
  return std::string(value->begin(), value->end());
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
    const raft::Proposed outcome = propose(env, *host, group, raft_.proposals[id].payload, count);
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
        *why = fmt::format("group {} has no leader every node agrees on ({})", g, describe_group(group));
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
        *why = fmt::format("group {}: {} has not applied index {} ({})", g, n->sim->name(), committed->second,
                           describe_group(group));
        return false;
      }
    }
  }
  return true;
}

// Each node's view of `group`, for a liveness failure's message: what a stuck group looks like from every side.
std::string RaftWorld::describe_group(raft::GroupId group) const {
  std::string text;
  for (const auto& n : nodes_) {
    const std::optional<raft::GroupStatus> s = n->host != nullptr ? n->host->status(group) : std::nullopt;
    if (!s) {
      text += fmt::format("{}{}: down", text.empty() ? "" : "; ", n->sim->name());
      continue;
    }
    text += fmt::format("{}{}: {} term {} leader {} commit {} last {} durable {}", text.empty() ? "" : "; ",
                        n->sim->name(), raft::role_name(s->role), s->term, s->leader, s->commit_index, s->last_index,
                        s->durable_index);
    for (const raft::FollowerStatus& f : s->followers) {
      text += fmt::format(" [{} match {} next {} {} inflight {}]", f.id, f.match, f.next,
                          f.state == raft::ProgressState::kProbe ? "probe" : "replicate", f.inflight);
    }
  }
  return text;
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
    // A paused process still believes it leads, but serves nothing until it resumes and hears of the newer term.
    if (n->host == nullptr || n->sim->paused()) continue;
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
