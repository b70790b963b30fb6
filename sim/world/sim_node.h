// SimNode: one simulated broker machine. It owns the node's clock, random stream, scheduler, logger, disk and
// network endpoint, and builds the Env its components receive. Nothing here is shared with another node.
//
// Lifecycle faults: crash() is a process death (fibers unwound, timers cancelled, connections reset; the OS page
// cache survives, so un-synced writes are still there), power_loss() is a machine death (as crash, and then the
// disk keeps only what was synced, with torn writes), restart() boots the same main function again.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/base/log.h"
#include "core/env/buggify.h"
#include "core/env/buggify_network.h"
#include "core/env/env.h"
#include "sim/world/sim_clock.h"
#include "sim/world/sim_world.h"

namespace sluice {

class SimDisk;
class SimFileSystem;
class SimNetwork;

class SimNode {
 public:
  using Main = std::function<void(Env)>;

  SimNode(SimWorld& world, SimNetwork& network, NodeId id, std::string name, LogLevel level);
  ~SimNode();
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  NodeId id() const { return id_; }
  const std::string& name() const { return name_; }
  bool up() const { return up_; }
  uint32_t boots() const { return boots_; }

  Env env();
  SimClock& clock() { return clock_; }
  Scheduler& scheduler() { return scheduler_; }
  Random& random() { return random_; }
  Buggify& buggify() { return buggify_; }
  Logger& log() { return log_; }
  SimDisk& disk() { return *disk_; }
  FileSystem& fs();

  // Switches BUGGIFY on for this node (core/env/buggify.h): `run_seed` picks the sites (the same for every node of a
  // run), a stream of the node's Random forked for BUGGIFY draws the firings, and the node's streams go through a
  // BuggifyNetwork. From the next boot on; REQUIRES: the node is down.
  void enable_buggify(uint64_t run_seed);

  // Starts the node: spawns `main` as its first fiber. REQUIRES: the node is down.
  void boot(Main main);
  void crash();
  void power_loss();
  // Boots again with the last main. REQUIRES: the node is down.
  void restart();

  // A process pause (SimWorld::pause_node): nothing of the node runs until resume(); a crash ends it too.
  // REQUIRES (pause): the node is up and not paused.
  void pause();
  void resume();
  bool paused() const;

  // A slow disk: every operation gets an extra latency from a heavy tail up to `tail_max` (one in 16 anywhere up to
  // it, the rest under a fiftieth of it), and every sync takes at least `sync_stall`; zero ends each. Drawn from the
  // node's disk latency stream only, so a run without them draws exactly as before.
  void set_disk_slowness(Duration tail_max, Duration sync_stall);
  Duration disk_tail_max() const { return disk_tail_max_; }
  Duration sync_stall() const { return sync_stall_; }

 private:
  void go_down();

  SimWorld& world_;
  SimNetwork& network_;
  NodeId id_;
  std::string name_;
  // Declared before the scheduler so that they outlive it: fibers unwound by its destructor close files.
  std::unique_ptr<SimDisk> disk_;
  std::unique_ptr<SimFileSystem> fs_;
  SimClock clock_;
  Random random_;
  Random disk_latency_rng_;
  Buggify buggify_;
  std::unique_ptr<BuggifyNetwork> buggify_net_;  // while BUGGIFY is on: wraps net_
  Duration disk_tail_max_{0};
  Duration sync_stall_{0};
  Logger log_;
  Scheduler scheduler_;
  Network* net_ = nullptr;  // owned by the SimNetwork, the same object across restarts
  Main main_;
  bool up_ = false;
  uint32_t boots_ = 0;
};

}  // namespace sluice
