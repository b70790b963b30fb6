#include "sim/world/sim_node.h"

#include <algorithm>
#include <cstdio>

#include "core/base/assert.h"
#include "sim/world/sim_disk.h"
#include "sim/world/sim_file_system.h"
#include "sim/world/sim_network.h"

namespace sluice {
namespace {

// Random::fork stream of each node's disk faults; fixed forever, or old seeds stop replaying.
constexpr uint64_t kDiskStreamBase = 2000;
constexpr uint64_t kDiskLatencyStreamBase = 3000;
// The fork of the node's own Random that BUGGIFY draws from (so enabling it shifts none of the node's draws).
constexpr uint64_t kBuggifyStream = 0xb0661f7;

// Latencies of an NVMe-class device: writes land in the page cache, syncs reach the device.
Duration disk_latency(DiskOp op, Random& rng) {
  if (op == DiskOp::kSync) return std::chrono::microseconds(rng.uniform_range(50, 1000));
  return std::chrono::microseconds(rng.uniform_range(2, 40));
}

// A degraded device's heavy tail: most operations a little slower, a few up to `tail_max` (queueing behind a
// garbage-collecting SSD, a remapped sector, a noisy neighbour on shared storage).
Duration slow_disk_extra(Duration tail_max, Random& rng) {
  constexpr uint64_t kOneSlowOpIn = 16;
  constexpr int64_t kCommonFraction = 50;
  const int64_t max_us = std::max<int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(tail_max).count(), 1);
  if (rng.uniform(kOneSlowOpIn) == 0) return std::chrono::microseconds(rng.uniform_range(0, max_us));
  return std::chrono::microseconds(rng.uniform_range(0, max_us / kCommonFraction));
}

}  // namespace

SimNode::SimNode(SimWorld& world, SimNetwork& network, NodeId id, std::string name, LogLevel level)
    : world_(world),
      network_(network),
      id_(id),
      name_(std::move(name)),
      disk_(std::make_unique<SimDisk>(world.fault_rng().fork(kDiskStreamBase + id))),
      fs_(std::make_unique<SimFileSystem>(*disk_)),
      clock_(world, id),
      random_(world.node_seed(id)),
      disk_latency_rng_(world.fault_rng().fork(kDiskLatencyStreamBase + id)),
      log_(name_, level,
           [this] {
             char stamp[48];
             std::snprintf(stamp, sizeof(stamp), "[%.6f %s]", to_seconds(world_.now().time_since_epoch()),
                           name_.c_str());
             return std::string(stamp);
           }),
      scheduler_(clock_, &world.schedule_rng()) {
  SLUICE_ASSERT(id != kWorldNode);
  fs_->set_delay([this](DiskOp op) {
    // Outside fibers (a checker reading the disk of a node that is down) I/O takes no time.
    if (!scheduler_.in_fiber()) return;
    Duration latency = disk_latency(op, disk_latency_rng_);
    if (disk_tail_max_ > Duration::zero()) latency += slow_disk_extra(disk_tail_max_, disk_latency_rng_);
    if (op == DiskOp::kSync) latency = std::max(latency, sync_stall_);
    scheduler_.sleep_for(latency);
  });
}

SimNode::~SimNode() {
  if (up_) go_down();
}

Env SimNode::env() {
  SLUICE_ASSERT_MSG(net_ != nullptr, "the node has never been booted");
  Network& net = buggify_net_ != nullptr ? static_cast<Network&>(*buggify_net_) : *net_;
  return Env{clock_, *fs_, net, random_, scheduler_, log_, buggify_};
}

void SimNode::enable_buggify(uint64_t run_seed) {
  SLUICE_ASSERT_MSG(!up_, "BUGGIFY is switched on before a boot");
  buggify_.enable(run_seed, random_.fork(kBuggifyStream));
}

FileSystem& SimNode::fs() { return *fs_; }

void SimNode::boot(Main main) {
  SLUICE_ASSERT_MSG(!up_, "boot of a node that is up");
  SLUICE_ASSERT(main != nullptr);
  SLUICE_ASSERT(scheduler_.live_fibers() == 0);
  main_ = std::move(main);
  net_ = &network_.attach(id_, name_, scheduler_);
  if (buggify_.enabled() && buggify_net_ == nullptr) {
    buggify_net_ = std::make_unique<BuggifyNetwork>(*net_, buggify_, scheduler_);
  }
  world_.attach(id_, scheduler_);
  up_ = true;
  ++boots_;
  world_.trace(0xb007'0000'0000ULL ^ id_);
  log_.info("boot {}", boots_);
  scheduler_.spawn("main", [this] { main_(env()); });
}

// The order matters: unwind the fibers first (their destructors close files and streams), then drop the node's
// pending events, then reset its connections in the same step, so that no delivery is half cancelled.
void SimNode::go_down() {
  SLUICE_ASSERT(up_);
  scheduler_.kill_all();
  world_.cancel_node_events(id_);
  network_.node_down(id_);
  world_.detach(id_);
  up_ = false;
  SLUICE_ASSERT(scheduler_.live_fibers() == 0);
}

void SimNode::crash() {
  log_.info("crash");
  world_.trace(0xc4a5'0000'0000ULL ^ id_);
  go_down();
}

void SimNode::power_loss() {
  log_.info("power loss");
  world_.trace(0x9011'0000'0000ULL ^ id_);
  if (up_) go_down();
  disk_->power_loss(world_.fault_rng());
  SLUICE_VERIFY(disk_->consistent());
}

void SimNode::pause() {
  SLUICE_ASSERT_MSG(up_, "pause of a node that is down");
  log_.info("process paused");
  world_.pause_node(id_);
}

void SimNode::resume() {
  if (!paused()) return;
  world_.resume_node(id_);
  log_.info("process resumed");
}

bool SimNode::paused() const { return up_ && world_.paused(id_); }

void SimNode::set_disk_slowness(Duration tail_max, Duration sync_stall) {
  SLUICE_ASSERT(tail_max >= Duration::zero() && sync_stall >= Duration::zero());
  disk_tail_max_ = tail_max;
  sync_stall_ = sync_stall;
}

void SimNode::restart() {
  SLUICE_ASSERT(main_ != nullptr);
  Main main = main_;
  boot(std::move(main));
}

}  // namespace sluice
