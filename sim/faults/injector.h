// The fault injector: turns Fault values into world events against the broker nodes of a run, undoes each after
// its length, and heals everything at the end of the fault phase. It never makes the world unrecoverable: a node
// brought down always comes back (at the fault's end, or at the heal), a full disk gets its space back, a partition
// heals; only a corrupt-segment fault leaves damage behind, and only scenarios that expect a loud refusal use it.
//
// Overlaps are resolved, not stacked: a fault that would take down a node that is already down is skipped (and
// recorded as such); a node comes back when the last fault holding it down ends.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "sim/faults/fault.h"
#include "sim/history/history.h"
#include "sim/world/sim_cluster.h"

namespace sluice::sim {

// What the injector needs of the run: which nodes are brokers and clients, and the broker lifecycle (the run boots
// brokers through the one boot path and records what happens).
class FaultTarget {
 public:
  virtual ~FaultTarget() = default;
  virtual SimCluster& cluster() = 0;
  // The broker node named `name`, or null.
  virtual SimNode* broker_node(const std::string& name) = 0;
  virtual std::vector<SimNode*> broker_nodes() = 0;
  virtual std::vector<SimNode*> client_nodes() = 0;
  // Takes the broker down: a crash, or a power loss (un-synced data lost).
  virtual void take_down(SimNode& node, bool power_loss) = 0;
  // Asks the broker to stop gracefully; it is down once its Node::run returned (or at once if it is not serving).
  virtual void stop_gracefully(SimNode& node) = 0;
  // Boots a broker that is down; one still up in a graceful stop boots once the stop completes; a running one is
  // left alone.
  virtual void bring_up(SimNode& node) = 0;
  // Sets or clears the broker behaviour of an injected fault (drop-acks0-forwards) on `node`, kept across its
  // restarts until cleared. False when the run cannot express it (a single broker, a raft-only run).
  virtual bool set_drop_acks0_forwards(SimNode& node, bool drop) {
    (void)node;
    (void)drop;
    return false;
  }
};

// What every FaultTarget's take_down does: records the node going down (and the power loss), then kills it.
void take_node_down(History& history, Instant now, SimNode& node, bool power_loss);

class Injector {
 public:
  Injector(FaultTarget& target, History& history);

  // Schedules every fault of `schedule` (times relative to `start`). Faults naming a node that is not a broker are
  // refused by the scenario loader; here they are asserted.
  void schedule(const std::vector<Fault>& schedule, Instant start);
  // Undoes every fault still in effect and boots every broker that is down (the liveness phase begins). Faults not
  // yet begun are cancelled. Clock jumps stay: a wall clock does not jump back on its own. A broker that met
  // injected I/O errors is restarted, as an operator would: a failed write or sync takes its log offline until
  // then (fsyncgate: Kafka takes the log directory offline too).
  void heal_all();

  size_t faults_applied() const { return applied_; }
  size_t faults_skipped() const { return skipped_; }

 private:
  struct NodeHolds {
    int down = 0;          // faults holding the node down
    bool disk_full = false;
    uint64_t capacity_before = 0;
    bool io_errors = false;  // injected: a failed write or sync takes a log offline until a restart
    int drop_acks0 = 0;      // drop-acks0-forwards faults in effect
    bool slow_disk = false;  // slow-disk in effect
    bool stalled_fsync = false;
    bool clogged = false;    // swizzle-clog holds the node's links
  };

  void apply(const Fault& fault);
  void apply_down(const Fault& fault, SimNode& node);
  void apply_network(const Fault& fault, SimNode& node);
  void apply_disk(const Fault& fault, SimNode& node);
  void apply_drop_acks0(const Fault& fault, SimNode& node);
  void apply_pause(const Fault& fault, SimNode& node);
  void apply_slow_disk(const Fault& fault, SimNode& node);
  void apply_swizzle(const Fault& fault, SimNode& node);
  // swizzle-clog: holds or releases every link of `node` (a link to a node still clogged stays held).
  void clog(SimNode& node);
  void unclog(SimNode& node);
  void corrupt_closed_segment(SimNode& node, const Fault& fault);
  void release_down(SimNode& node);
  // crash-at-disk-op: arms the node's disk; die_now() takes the node down once the fatal operation came.
  void arm_death(const Fault& fault, SimNode& node);
  void die_now(const Fault& fault, SimNode& node);
  std::vector<SimNode*> peers_of(const Fault& fault);
  void record(WorldEvent::Kind kind, const std::string& node, std::string text, int64_t amount = 0);
  void after(Duration delay, std::function<void()> action);

  FaultTarget& target_;
  History& history_;
  std::map<std::string, NodeHolds> holds_;
  std::vector<EventId> pending_;  // scheduled begin and end events, cancelled by heal_all
  bool healed_ = false;
  Instant swizzling_until_{};  // one swizzle-clog at a time: a second one in the first's length is skipped
  size_t applied_ = 0;
  size_t skipped_ = 0;
};

// Draws a schedule from rates over [begin, end): per kind a Poisson process, lengths and amounts uniform in their
// ranges, targets uniform over `nodes`. Uses only `rng` (the world's fault stream), so the seed fixes the schedule.
std::vector<Fault> draw_schedule(const std::vector<FaultRate>& rates, const std::vector<std::string>& nodes,
                                 Duration begin, Duration end, Random& rng);

}  // namespace sluice::sim
