#include "sim/faults/injector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/assert.h"
#include "sim/world/sim_disk.h"
#include "sim/world/sim_network.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// The port the reconnect faults replay frames on: the raft transport's, in raft scenarios (sim/raft/raft_world.h) and
// in cluster ones (sim/scenario/run_world.h). Its frames are written one per write, which replaying keeps whole.
constexpr uint16_t kRaftTransportPort = 9192;

bool replays_frames(FaultKind kind) {
  return kind == FaultKind::kReconnectReorder || kind == FaultKind::kReconnectDuplicate;
}

// Room left on a "full" disk: a few sectors, so that metadata writes fail like data writes.
constexpr uint64_t kFullDiskSlackBytes = 0;

std::optional<DiskOp> disk_op(std::string_view name) {
  if (name == "read") return DiskOp::kRead;
  if (name == "write") return DiskOp::kWrite;
  if (name == "sync") return DiskOp::kSync;
  if (name == "metadata") return DiskOp::kMetadata;
  return std::nullopt;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Injector::Injector(FaultTarget& target, History& history) : target_(target), history_(history) {}

void Injector::record(WorldEvent::Kind kind, const std::string& node, std::string text, int64_t amount) {
  history_.world(WorldEvent{kind, target_.cluster().world().now(), node, std::move(text), amount});
}

void Injector::after(Duration delay, std::function<void()> action) {
  pending_.push_back(
      target_.cluster().world().schedule_after(delay, kWorldNode, EventKind::kFault, std::move(action)));
}

void Injector::schedule(const std::vector<Fault>& schedule, Instant start) {
  SimWorld& world = target_.cluster().world();
  for (const Fault& fault : schedule) {
    SLUICE_ASSERT_MSG(target_.broker_node(fault.node) != nullptr, "faults strike broker nodes");
    // Resending what a peer already read needs the chunks it read, kept from now on.
    if (fault.kind == FaultKind::kReconnectDuplicate) target_.cluster().network().keep_read_chunks(kRaftTransportPort);
    pending_.push_back(world.schedule_at(start + fault.at, kWorldNode, EventKind::kFault, [this, fault] {
      if (!healed_) apply(fault);
    }));
  }
}

void Injector::apply(const Fault& fault) {
  SimNode* node = target_.broker_node(fault.node);
  SLUICE_ASSERT(node != nullptr);
  switch (fault.kind) {
    case FaultKind::kCrash:
    case FaultKind::kPowerLoss:
    case FaultKind::kRestart:
    case FaultKind::kCorruptSegment: apply_down(fault, *node); return;
    case FaultKind::kPartition:
    case FaultKind::kPartitionOneWay:
    case FaultKind::kResetConnections:
    case FaultKind::kReconnectReorder:
    case FaultKind::kReconnectDuplicate:
    case FaultKind::kLatencySpike: apply_network(fault, *node); return;
    case FaultKind::kDiskFull:
    case FaultKind::kDiskErrors: apply_disk(fault, *node); return;
    case FaultKind::kReadCorruption:
      // No operator restart at the heal (unlike disk-errors): nothing on the disk is wrong, so nothing may stay
      // offline or lost because of it.
      ++applied_;
      record(WorldEvent::Kind::kFault, node->name(), to_toml(fault));
      node->disk().corrupt_next_reads(static_cast<uint32_t>(std::max<int64_t>(fault.amount, 1)), fault.path);
      return;
    case FaultKind::kCrashAtDiskOp: arm_death(fault, *node); return;
    case FaultKind::kDropAcks0Forwards: apply_drop_acks0(fault, *node); return;
    case FaultKind::kProcessPause: apply_pause(fault, *node); return;
    case FaultKind::kSlowDisk:
    case FaultKind::kStalledFsync: apply_slow_disk(fault, *node); return;
    case FaultKind::kSwizzleClog: apply_swizzle(fault, *node); return;
    case FaultKind::kClockJump:
      node->clock().jump_wall(std::chrono::milliseconds(fault.amount));
      ++applied_;
      record(WorldEvent::Kind::kClockJump, node->name(), to_toml(fault), fault.amount);
      return;
    case FaultKind::kTimerJitter: {
      if (node->clock().timer_jitter() > Duration::zero()) {
        ++skipped_;
        record(WorldEvent::Kind::kFault, node->name(), "skipped (timers already jittered): " + to_toml(fault));
        return;
      }
      ++applied_;
      record(WorldEvent::Kind::kFault, node->name(), to_toml(fault), fault.amount);
      node->clock().set_timer_jitter(std::chrono::milliseconds(std::max<int64_t>(fault.amount, 1)));
      after(fault.length, [this, node] {
        node->clock().set_timer_jitter(Duration::zero());
        record(WorldEvent::Kind::kFaultEnded, node->name(), "timers on time again");
      });
      return;
    }
    case FaultKind::kClockSkew: {
      // One drift at a time per node: a second one while the first runs is skipped, like a fault on a node down.
      if (node->clock().drift() != 0) {
        ++skipped_;
        record(WorldEvent::Kind::kFault, node->name(), "skipped (clock already drifting): " + to_toml(fault));
        return;
      }
      ++applied_;
      record(WorldEvent::Kind::kFault, node->name(), to_toml(fault), fault.amount);
      node->clock().set_drift(fault.amount);
      after(fault.length, [this, node] {
        node->clock().set_drift(0);
        record(WorldEvent::Kind::kFaultEnded, node->name(), "clock back to its rate");
      });
      return;
    }
  }
  SLUICE_UNREACHABLE();
}

void Injector::apply_down(const Fault& fault, SimNode& node) {
  NodeHolds& holds = holds_[node.name()];
  if (holds.down > 0 || !node.up()) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (node already down): " + to_toml(fault));
    return;
  }
  ++applied_;
  ++holds.down;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault));
  switch (fault.kind) {
    case FaultKind::kCrash: target_.take_down(node, false); break;
    case FaultKind::kPowerLoss: target_.take_down(node, true); break;
    case FaultKind::kRestart: target_.stop_gracefully(node); break;
    case FaultKind::kCorruptSegment:
      target_.take_down(node, false);
      corrupt_closed_segment(node, fault);
      break;
    default: SLUICE_UNREACHABLE();
  }
  SimNode* n = &node;
  after(fault.length, [this, n] { release_down(*n); });
}

void Injector::arm_death(const Fault& fault, SimNode& node) {
  if (holds_[node.name()].down > 0 || !node.up()) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (node already down): " + to_toml(fault));
    return;
  }
  ++applied_;
  record(WorldEvent::Kind::kFault, node.name(), "armed: " + to_toml(fault));
  const std::optional<DiskOp> op = disk_op(fault.op);
  SLUICE_ASSERT(op.has_value());
  SimNode* n = &node;
  // The dying disk refuses everything from the fatal operation on; the crash itself runs as the next event at
  // this same instant, since the fiber that met the operation cannot be killed from inside its own call.
  node.disk().die_at(*op, static_cast<uint32_t>(std::max<int64_t>(fault.amount, 1)), fault.path,
                     [this, n, fault] { after(Duration::zero(), [this, n, fault] { die_now(fault, *n); }); });
}

void Injector::die_now(const Fault& fault, SimNode& node) {
  NodeHolds& holds = holds_[node.name()];
  if (holds.down > 0 || !node.up()) {  // another fault took it down first
    node.disk().end_dying();
    return;
  }
  ++holds.down;
  record(WorldEvent::Kind::kFault, node.name(), "died at a disk operation: " + to_toml(fault));
  target_.take_down(node, false);
  SLUICE_ASSERT(!node.up());
  node.disk().end_dying();
  SimNode* n = &node;
  after(fault.length, [this, n] { release_down(*n); });
}

void Injector::release_down(SimNode& node) {
  NodeHolds& holds = holds_[node.name()];
  SLUICE_ASSERT(holds.down > 0);
  if (--holds.down > 0 || healed_) return;
  record(WorldEvent::Kind::kFaultEnded, node.name(), "back up");
  target_.bring_up(node);
}

// A latent sector error in sealed data: one byte flipped in the middle of the first closed segment found (one that
// is not the last of its partition), synced, so that the next load finds damage below the recovery point.
void Injector::corrupt_closed_segment(SimNode& node, const Fault& fault) {
  FileSystem& fs = node.fs();
  Result<std::vector<DirEntry>> partitions = fs.list("data");
  if (!partitions.ok()) return;
  for (const DirEntry& dir : *partitions) {
    if (!dir.is_directory || (!fault.path.empty() && dir.name.rfind(fault.path, 0) != 0)) continue;
    Result<std::vector<DirEntry>> files = fs.list("data/" + dir.name);
    if (!files.ok()) continue;
    std::vector<std::string> logs;
    for (const DirEntry& f : *files) {
      if (ends_with(f.name, ".log")) logs.push_back(f.name);
    }
    std::sort(logs.begin(), logs.end());
    if (logs.size() < 2) continue;
    const std::string path = "data/" + dir.name + "/" + logs.front();
    Result<std::unique_ptr<File>> file = fs.open(path, OpenMode::kReadWrite);
    if (!file.ok()) continue;
    Result<uint64_t> size = (*file)->size();
    if (!size.ok() || *size < 256) continue;
    const uint64_t at = *size / 2;
    uint8_t byte = 0;
    if (!(*file)->pread(at, MutableByteView(&byte, 1)).ok()) continue;
    byte ^= 0x5a;
    if ((*file)->pwrite(at, ByteView(&byte, 1)).ok() && (*file)->sync().ok()) {
      record(WorldEvent::Kind::kFault, node.name(), fmt::format("corrupted byte {} of {}", at, path));
      (*file)->close().ignore();
      return;
    }
  }
  record(WorldEvent::Kind::kFault, node.name(), "corrupt-segment found no closed segment to damage");
}

std::vector<SimNode*> Injector::peers_of(const Fault& fault) {
  if (!fault.peer.empty()) {
    for (SimNode* n : target_.client_nodes()) {
      if (n->name() == fault.peer) return {n};
    }
    if (SimNode* b = target_.broker_node(fault.peer)) return {b};
    SLUICE_ASSERT_MSG(false, "a fault's peer is a node of the run");
  }
  // No peer: every other node of the run, clients and brokers (a single-broker run has only clients).
  std::vector<SimNode*> peers = target_.client_nodes();
  for (SimNode* b : target_.broker_nodes()) {
    if (b->name() != fault.node) peers.push_back(b);
  }
  return peers;
}

void Injector::apply_network(const Fault& fault, SimNode& node) {
  SimNetwork& net = target_.cluster().network();
  ++applied_;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault));
  if (fault.kind == FaultKind::kLatencySpike) {
    net.latency_spike(std::chrono::milliseconds(fault.amount), fault.length);
    return;
  }
  const std::vector<SimNode*> peers = peers_of(fault);
  for (SimNode* peer : peers) {
    if (fault.kind == FaultKind::kPartition) net.partition(node.id(), peer->id());
    if (fault.kind == FaultKind::kPartitionOneWay) net.partition_one_way(node.id(), peer->id());
    if (fault.kind == FaultKind::kResetConnections) net.reset_connections(node.id(), peer->id());
    if (replays_frames(fault.kind)) {
      net.reset_connections_replaying(node.id(), peer->id(), kRaftTransportPort,
                                      fault.kind == FaultKind::kReconnectDuplicate);
    }
  }
  if (fault.kind == FaultKind::kResetConnections || replays_frames(fault.kind)) return;
  const NodeId a = node.id();
  std::vector<NodeId> ids;
  for (SimNode* peer : peers) ids.push_back(peer->id());
  const std::string name = node.name();
  // heal(a, b) heals both directions; overlapping partitions of one pair end with the first to end.
  after(fault.length, [this, a, ids, name] {
    for (NodeId b : ids) target_.cluster().network().heal(a, b);
    record(WorldEvent::Kind::kFaultEnded, name, "partition healed");
  });
}

void Injector::apply_disk(const Fault& fault, SimNode& node) {
  SimDisk& disk = node.disk();
  NodeHolds& holds = holds_[node.name()];
  if (fault.kind == FaultKind::kDiskErrors) {
    ++applied_;
    record(WorldEvent::Kind::kFault, node.name(), to_toml(fault));
    const std::optional<DiskOp> op = disk_op(fault.op);
    SLUICE_ASSERT(op.has_value());
    holds.io_errors = true;
    disk.fail_next(*op, static_cast<uint32_t>(std::max<int64_t>(fault.amount, 1)), fault.path);
    return;
  }
  if (holds.disk_full) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (disk already full): " + to_toml(fault));
    return;
  }
  ++applied_;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault));
  holds.disk_full = true;
  holds.capacity_before = disk.capacity_bytes();
  disk.set_capacity_bytes(disk.used_bytes() + kFullDiskSlackBytes);
  SimNode* n = &node;
  after(fault.length, [this, n] {
    NodeHolds& h = holds_[n->name()];
    if (!h.disk_full) return;
    n->disk().set_capacity_bytes(h.capacity_before);
    h.disk_full = false;
    record(WorldEvent::Kind::kFaultEnded, n->name(), "disk space returned");
  });
}

// Overlapping drop faults on one node end with the last of them.
void Injector::apply_drop_acks0(const Fault& fault, SimNode& node) {
  NodeHolds& holds = holds_[node.name()];
  if (holds.drop_acks0 == 0 && !target_.set_drop_acks0_forwards(node, true)) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (no follower forwarding in this run): " + to_toml(fault));
    return;
  }
  ++applied_;
  ++holds.drop_acks0;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault));
  SimNode* n = &node;
  after(fault.length, [this, n] {
    NodeHolds& h = holds_[n->name()];
    SLUICE_ASSERT(h.drop_acks0 > 0);
    if (--h.drop_acks0 > 0) return;
    target_.set_drop_acks0_forwards(*n, false);
    record(WorldEvent::Kind::kFaultEnded, n->name(), "forwards acks=0 produces again");
  });
}

void Injector::apply_pause(const Fault& fault, SimNode& node) {
  if (!node.up() || node.paused()) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (node down or already paused): " + to_toml(fault));
    return;
  }
  ++applied_;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault));
  node.pause();
  SimNode* n = &node;
  const uint32_t boot = node.boots();
  after(fault.length, [this, n, boot] {
    if (n->boots() != boot || !n->paused()) return;  // a crash ended this pause first
    n->resume();
    record(WorldEvent::Kind::kFaultEnded, n->name(), "process resumed");
  });
}

// One slow-disk and one stalled-fsync at a time per node; the disk's slowness outlives process restarts (it is the
// device's) until the fault ends.
void Injector::apply_slow_disk(const Fault& fault, SimNode& node) {
  NodeHolds& holds = holds_[node.name()];
  const bool tail = fault.kind == FaultKind::kSlowDisk;
  bool& in_effect = tail ? holds.slow_disk : holds.stalled_fsync;
  if (in_effect) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (disk already slow): " + to_toml(fault));
    return;
  }
  ++applied_;
  in_effect = true;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault), fault.amount);
  const Duration amount = std::chrono::milliseconds(std::max<int64_t>(fault.amount, 0));  // python's inject: unchecked
  node.set_disk_slowness(tail ? amount : node.disk_tail_max(), tail ? node.sync_stall() : amount);
  SimNode* n = &node;
  after(fault.length, [this, n, tail] {
    NodeHolds& h = holds_[n->name()];
    (tail ? h.slow_disk : h.stalled_fsync) = false;
    n->set_disk_slowness(tail ? Duration::zero() : n->disk_tail_max(), tail ? n->sync_stall() : Duration::zero());
    record(WorldEvent::Kind::kFaultEnded, n->name(), tail ? "disk at its speed again" : "syncs at their speed again");
  });
}

void Injector::clog(SimNode& node) {
  holds_[node.name()].clogged = true;
  for (SimNode* peer : peers_of(Fault{.node = node.name()})) {
    target_.cluster().network().partition(node.id(), peer->id());
  }
  record(WorldEvent::Kind::kFault, node.name(), "links clogged (swizzle)");
}

void Injector::unclog(SimNode& node) {
  NodeHolds& holds = holds_[node.name()];
  if (!holds.clogged) return;
  holds.clogged = false;
  for (SimNode* peer : peers_of(Fault{.node = node.name()})) {
    auto other = holds_.find(peer->name());
    if (other == holds_.end() || !other->second.clogged) target_.cluster().network().heal(node.id(), peer->id());
  }
  record(WorldEvent::Kind::kFaultEnded, node.name(), "links released (swizzle)");
}

// Clogs `amount` brokers (from `node` on, by number) one at a time over the first half of `length`, releasing them
// in reverse order over the second half: the last clogged goes first, the first clogged is held the longest.
void Injector::apply_swizzle(const Fault& fault, SimNode& node) {
  const std::vector<SimNode*> brokers = target_.broker_nodes();
  const auto first = std::find(brokers.begin(), brokers.end(), &node);
  SLUICE_ASSERT(first != brokers.end());
  const size_t count = fault.amount > 0 ? std::min<size_t>(static_cast<size_t>(fault.amount), brokers.size())
                                        : (brokers.size() + 1) / 2;
  const Instant now = target_.cluster().world().now();
  if (now < swizzling_until_) {
    ++skipped_;
    record(WorldEvent::Kind::kFault, node.name(), "skipped (a swizzle is under way): " + to_toml(fault));
    return;
  }
  swizzling_until_ = now + fault.length;
  std::vector<SimNode*> chosen;
  for (size_t i = 0; i < count; ++i) {
    chosen.push_back(brokers[(static_cast<size_t>(first - brokers.begin()) + i) % brokers.size()]);
  }
  ++applied_;
  record(WorldEvent::Kind::kFault, node.name(), to_toml(fault), static_cast<int64_t>(count));
  const Duration step = fault.length / static_cast<int64_t>(2 * count);
  for (size_t i = 0; i < count; ++i) {
    SimNode* n = chosen[i];
    const auto clog_at = step * static_cast<int64_t>(i);
    const auto release_at = fault.length - step * static_cast<int64_t>(i);
    if (clog_at == Duration::zero()) {
      clog(*n);
    } else {
      after(clog_at, [this, n] { clog(*n); });
    }
    after(release_at, [this, n] { unclog(*n); });
  }
}

void Injector::heal_all() {
  SimWorld& world = target_.cluster().world();
  for (EventId id : pending_) world.cancel(id);
  pending_.clear();
  healed_ = true;
  SimNetwork& net = target_.cluster().network();
  net.heal();
  for (auto& [name, holds] : holds_) {
    SimNode* node = target_.broker_node(name);
    SLUICE_ASSERT(node != nullptr);
    if (holds.disk_full) {
      node->disk().set_capacity_bytes(holds.capacity_before);
      holds.disk_full = false;
    }
    holds.down = 0;
    if (holds.io_errors && node->up()) {
      record(WorldEvent::Kind::kFaultEnded, name, "restarted by the operator after injected I/O errors");
      target_.take_down(*node, false);
    }
    holds.io_errors = false;
    holds.clogged = false;
    holds.slow_disk = holds.stalled_fsync = false;
    if (holds.drop_acks0 > 0) {
      target_.set_drop_acks0_forwards(*node, false);
      holds.drop_acks0 = 0;
    }
  }
  for (SimNode* node : target_.broker_nodes()) {
    node->disk().clear_faults();
    node->set_disk_slowness(Duration::zero(), Duration::zero());
    if (node->paused()) node->resume();  // before bring_up: a paused process is up, and goes on from where it was
    if (node->clock().drift() != 0) node->clock().set_drift(0);  // a clock jump stays; a drift ends
    // Its undo was among the pending events cancelled above: left on, every disk wait of the node stays late.
    if (node->clock().timer_jitter() > Duration::zero()) node->clock().set_timer_jitter(Duration::zero());
    // Also a node still up in a graceful stop (a restart whose release_down was just cancelled above): bring_up
    // boots it once the stop completes. Skipping it left the node down for good once its stop ended after the heal.
    target_.bring_up(*node);
  }
  record(WorldEvent::Kind::kHealed, "", "every fault healed; liveness phase");
}

void take_node_down(History& history, Instant now, SimNode& node, bool power_loss) {
  if (!node.up()) return;
  history.world({WorldEvent::Kind::kDown, now, node.name(), power_loss ? "power loss" : "crash", 0});
  if (power_loss) {
    history.world({WorldEvent::Kind::kPowerLoss, now, node.name(), "", 0});
    node.power_loss();
  } else {
    node.crash();
  }
}

std::vector<Fault> draw_schedule(const std::vector<FaultRate>& rates, const std::vector<std::string>& nodes,
                                 Duration begin, Duration end, Random& rng) {
  std::vector<Fault> schedule;
  if (nodes.empty() || end <= begin) return schedule;
  for (const FaultRate& rate : rates) {
    if (rate.per_minute <= 0) continue;
    const double mean_gap_s = 60.0 / rate.per_minute;
    double t = to_seconds(begin);
    for (;;) {
      // Exponential gaps: a Poisson process of the given rate.
      t += -std::log(1.0 - rng.next_double()) * mean_gap_s;
      if (t >= to_seconds(end)) break;
      Fault fault;
      fault.at = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(t));
      fault.at = std::chrono::duration_cast<std::chrono::milliseconds>(fault.at);  // printable exactly
      fault.kind = rate.kind;
      fault.node = nodes[rng.uniform(nodes.size())];
      // Between brokers, half of the partitions cut one peer (a one-way cut of one link is the case check-quorum and
      // pre-vote exist for); the rest cut the node off from everyone. One node: its clients, drawing nothing.
      const bool partition = rate.kind == FaultKind::kPartition || rate.kind == FaultKind::kPartitionOneWay;
      if (partition && nodes.size() > 1 && rng.uniform(2) == 1) {
        std::string peer = nodes[rng.uniform(nodes.size() - 1)];
        if (peer == fault.node) peer = nodes.back();
        fault.peer = peer;
      }
      if (fault_has_length(rate.kind)) {
        const int64_t lo = std::chrono::duration_cast<std::chrono::milliseconds>(rate.length_min).count();
        const int64_t hi = std::chrono::duration_cast<std::chrono::milliseconds>(rate.length_max).count();
        fault.length = std::chrono::milliseconds(rng.uniform_range(lo, std::max(lo, hi)));
      }
      fault.amount = rate.amount_max > rate.amount_min ? rng.uniform_range(rate.amount_min, rate.amount_max)
                                                       : (rate.amount_min != 0 ? rate.amount_min
                                                                               : default_fault_amount(rate.kind));
      fault.op = default_fault_op(rate.kind);
      schedule.push_back(std::move(fault));
    }
  }
  std::stable_sort(schedule.begin(), schedule.end(), [](const Fault& a, const Fault& b) { return a.at < b.at; });
  return schedule;
}

}  // namespace sluice::sim
