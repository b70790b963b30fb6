// Raft benchmark (issue 21), printed and never asserted; run it by hand:
//   build/release/raft_bench [scratch-dir]
// 1. One group of 3 nodes in the simulator, `persisted` and `replicated`, K closed-loop proposers on the leader:
//    commits per simulated second, p50/p99 commit latency in virtual time, and simulated seconds per wall second.
// 2. The same shape on loopback: three RaftHost+RaftTransport pairs in one RealEnv on 127.0.0.1:19192..19194,
//    FileGroupStorage in the scratch dir (real fdatasync), beside the scratch disk's 4 KiB append+fdatasync rate
//    measured in the same run (persisted commits/s is bounded by it; the table prints the ratio).
// 3. 1,000 idle groups across 3 simulated nodes (every node a voter of every group): raft messages and transport
//    frames per second, per node and summed, messages per frame (coalescing) and bytes per heartbeat.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/env/sync.h"
#include "core/raft/file_group_storage.h"
#include "core/raft/host.h"
#include "core/raft/transport.h"
#include "net/real_env.h"
#include "sim/world/sim_cluster.h"

namespace {

using namespace sluice;
using namespace std::chrono_literals;
using WallClock = std::chrono::steady_clock;
using raft::CommitMode;

constexpr size_t kNodes = 3;
constexpr uint16_t kSimPort = 9192;
constexpr uint16_t kLoopbackPort = 19192;
constexpr size_t kPayloadBytes = 128;
constexpr Duration kProposeDeadline = 5s;
constexpr Duration kSimLoad = 20s;       // simulated, per (mode, K)
constexpr Duration kLoopbackLoad = 4s;   // wall, per (mode, K)
constexpr Duration kFsyncAnchor = 2s;    // wall
constexpr size_t kIdleGroups = 1000;
constexpr Duration kIdleWindow = 10s;    // simulated
constexpr uint64_t kSeed = 21;
constexpr int kProposers[] = {1, 16};
constexpr CommitMode kModes[] = {CommitMode::kPersisted, CommitMode::kReplicated};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "raft_bench: %s\n", what.c_str());
  std::exit(1);
}

double secs(Duration d) { return std::chrono::duration<double>(d).count(); }
double wall_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}
const char* mode_name(CommitMode mode) { return mode == CommitMode::kPersisted ? "persisted" : "replicated"; }

std::map<raft::NodeId, Address> addresses(const std::string& host, uint16_t base_port, bool same_port) {
  std::map<raft::NodeId, Address> out;
  for (raft::NodeId id = 1; id <= kNodes; ++id) {
    out[id] = Address{host.empty() ? "n" + std::to_string(id) : host,
                      static_cast<uint16_t>(same_port ? base_port : base_port + id - 1)};
  }
  return out;
}

std::vector<std::unique_ptr<raft::GroupStorage>> open_storages(FileSystem& fs, const std::string& dir,
                                                                size_t groups) {
  std::vector<std::unique_ptr<raft::GroupStorage>> out;
  for (size_t g = 1; g <= groups; ++g) {
    auto opened = raft::FileGroupStorage::open(fs, dir + "/group-" + std::to_string(g));
    if (!opened.ok()) die("open storage: " + opened.status().message());
    out.push_back(std::move(*opened));
  }
  return out;
}

// One raft node as sim/raft/raft_world.cc wires it: its groups' storages, a transport and a host on one Env.
class BenchNode {
 public:
  BenchNode(Env env, raft::NodeId id, const std::map<raft::NodeId, Address>& cluster, CommitMode mode,
            std::vector<std::unique_ptr<raft::GroupStorage>> storages)
      : env_(env),
        storages_(std::move(storages)),
        transport_(env_, id, cluster.at(id), peers(cluster, id),
                   [this](raft::NodeId from, std::vector<raft::Envelope>& batch) {
                     if (receiving_) host_.receive(from, batch);
                   }),
        host_(
            env_, id, options(mode),
            [this](raft::NodeId to, std::vector<raft::Envelope> batch) { transport_.send(to, std::move(batch)); },
            [](raft::GroupId, raft::Index, const raft::Entry&) {},
            [this](raft::GroupId, raft::Term) { ++leaderships_; }) {
    raft::Membership membership;
    for (const auto& [node, address] : cluster) membership.voters.push_back(node);
    for (size_t g = 0; g < storages_.size(); ++g) host_.add_group(g + 1, membership, *storages_[g]);
  }
  ~BenchNode() {
    receiving_ = false;
    host_.stop();
    transport_.stop();
  }
  BenchNode(const BenchNode&) = delete;
  BenchNode& operator=(const BenchNode&) = delete;

  void start() {
    if (Status s = transport_.start(); !s.ok()) die("transport start: " + s.message());
    receiving_ = true;
    host_.start();
  }
  raft::RaftHost& host() { return host_; }
  const raft::TransportStats& transport_stats() const { return transport_.stats(); }
  uint64_t leaderships() const { return leaderships_; }

 private:
  static std::map<raft::NodeId, Address> peers(std::map<raft::NodeId, Address> cluster, raft::NodeId self) {
    cluster.erase(self);
    return cluster;
  }
  static raft::HostOptions options(CommitMode mode) {
    raft::HostOptions o;  // the defaults: 100 ms ticks, elections after 10-20 silent ticks
    o.raft.commit_mode = mode;
    return o;
  }

  Env env_;  // the transport and the host keep a reference to it
  std::vector<std::unique_ptr<raft::GroupStorage>> storages_;
  bool receiving_ = false;
  uint64_t leaderships_ = 0;
  raft::RaftTransport transport_;
  raft::RaftHost host_;
};

// The node every running node names leader of `group`, or kNoNode.
raft::NodeId agreed_leader(const std::vector<BenchNode*>& nodes, raft::GroupId group) {
  raft::NodeId leader = raft::kNoNode;
  for (BenchNode* n : nodes) {
    if (n == nullptr) return raft::kNoNode;
    const raft::NodeId seen = n->host().status(group)->leader;
    if (seen == raft::kNoNode || (leader != raft::kNoNode && seen != leader)) return raft::kNoNode;
    leader = seen;
  }
  return leader;
}

uint64_t cluster_syncs(const std::vector<BenchNode*>& nodes) {
  uint64_t syncs = 0;
  for (BenchNode* n : nodes) syncs += n->host().stats().log_syncs;
  return syncs;
}

// What K closed-loop proposers measured on one leader.
struct Load {
  uint64_t commits = 0;
  uint64_t failures = 0;
  std::vector<Duration> latencies;
  Duration elapsed{};
  uint64_t leader_syncs = 0;
  uint64_t cluster_syncs = 0;  // log syncs of all three nodes
  int done = 0;
};

// Spawns `k` proposers on `env`: each proposes to group 1, waits for the outcome, and goes again until `end`.
std::vector<FiberRef> spawn_proposers(Env env, raft::RaftHost& host, int k, Instant end, Load& load) {
  std::vector<FiberRef> fibers;
  for (int i = 0; i < k; ++i) {
    fibers.push_back(env.scheduler.spawn("proposer", [env, &host, end, &load] {
      const std::string payload(kPayloadBytes, 'p');
      while (env.clock.now() < end) {
        const Instant start = env.clock.now();
        const raft::Proposed p = host.propose(1, payload, start + kProposeDeadline);
        if (p.outcome == raft::ProposeOutcome::kCommitted) {
          ++load.commits;
          load.latencies.push_back(env.clock.now() - start);
        } else {
          ++load.failures;
        }
      }
      ++load.done;
    }));
  }
  return fibers;
}

struct Row {
  std::string world;
  CommitMode mode = CommitMode::kPersisted;
  int k = 0;
  Load load;
  double speed = 0;  // simulated s per wall s; 0 on loopback
};

Duration percentile(std::vector<Duration>& v, double q) {
  if (v.empty()) return Duration(0);
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// ---- The simulator ----

// Three simulated nodes, each running a BenchNode with `groups` groups in files on its own disk.
class SimRaft {
 public:
  SimRaft(CommitMode mode, size_t groups) : cluster_(kSeed, LogLevel::kOff), nodes_(kNodes, nullptr) {
    const auto members = addresses("", kSimPort, true);
    for (size_t i = 0; i < kNodes; ++i) cluster_.add_node();
    for (size_t i = 0; i < kNodes; ++i) {
      cluster_.node(i).boot([this, i, members, mode, groups](Env env) {
        BenchNode node(env, i + 1, members, mode, open_storages(env.fs, "raft", groups));
        struct Forget {
          BenchNode*& slot;
          ~Forget() { slot = nullptr; }
        } forget{nodes_[i]};
        node.start();
        nodes_[i] = &node;
        Event forever(env.scheduler);
        forever.wait();
      });
    }
  }
  ~SimRaft() {
    for (size_t i = 0; i < kNodes; ++i) {
      if (cluster_.node(i).up()) cluster_.node(i).crash();
    }
  }
  SimRaft(const SimRaft&) = delete;
  SimRaft& operator=(const SimRaft&) = delete;

  SimWorld& world() { return cluster_.world(); }
  SimNode& sim(raft::NodeId id) { return cluster_.node(id - 1); }
  BenchNode& node(raft::NodeId id) { return *nodes_[id - 1]; }
  const std::vector<BenchNode*>& nodes() const { return nodes_; }

  // Runs until groups 1..groups each have an agreed leader, checking every half simulated second.
  bool run_until_elected(size_t groups, Duration limit) {
    const Instant deadline = world().now() + limit;
    while (world().now() < deadline) {
      world().run_for(500ms);
      size_t elected = 0;
      while (elected < groups && agreed_leader(nodes_, elected + 1) != raft::kNoNode) ++elected;
      if (elected == groups) return true;
    }
    return false;
  }

 private:
  SimCluster cluster_;
  std::vector<BenchNode*> nodes_;
};

Row sim_load(SimRaft& sim, CommitMode mode, int k) {
  const raft::NodeId leader = agreed_leader(sim.nodes(), 1);
  Row row{"sim", mode, k, {}, 0};
  BenchNode& node = sim.node(leader);
  const uint64_t syncs = node.host().stats().log_syncs;
  const uint64_t all_syncs = cluster_syncs(sim.nodes());
  const Instant start = sim.world().now();
  const auto wall_start = WallClock::now();
  spawn_proposers(sim.sim(leader).env(), node.host(), k, start + kSimLoad, row.load);
  if (!sim.world().run_until([&] { return row.load.done == k; }, start + kSimLoad + 2 * kProposeDeadline)) {
    die("simulated proposers did not finish");
  }
  row.load.elapsed = sim.world().now() - start;
  row.speed = secs(row.load.elapsed) / wall_since(wall_start);
  row.load.leader_syncs = node.host().stats().log_syncs - syncs;
  row.load.cluster_syncs = cluster_syncs(sim.nodes()) - all_syncs;
  return row;
}

void bench_sim(std::vector<Row>& rows) {
  for (const CommitMode mode : kModes) {
    SimRaft sim(mode, 1);
    if (!sim.run_until_elected(1, 30s)) die("simulated group elected no leader");
    for (const int k : kProposers) rows.push_back(sim_load(sim, mode, k));
  }
}

// ---- Loopback ----

struct FsyncAnchor {
  double rate = 0;  // per second
  Duration p50{};
  Duration p99{};
};

// 4 KiB append + fdatasync in a loop for kFsyncAnchor by `writers` fibers, each on its own file, through the same
// FileSystem the raft logs use (its worker threads run the fdatasyncs in parallel).
FsyncAnchor fsync_anchor(Env& env, const std::string& dir, int writers) {
  std::vector<Duration> latencies;
  std::vector<FiberRef> fibers;
  const auto start = WallClock::now();
  for (int w = 0; w < writers; ++w) {
    fibers.push_back(env.scheduler.spawn("fsync", [&env, &latencies, start, path = dir + "/fsync-" +
                                                                                 std::to_string(w) + ".dat"] {
      auto file = env.fs.open(path, OpenMode::kCreateTruncate);
      if (!file.ok()) die("anchor file: " + file.status().message());
      const Bytes block(4096, 1);
      while (WallClock::now() - start < kFsyncAnchor) {
        const Instant t = env.clock.now();
        (void)(*file)->append(block);
        if (Status s = (*file)->sync(); !s.ok()) die("anchor fdatasync: " + s.message());
        latencies.push_back(env.clock.now() - t);
      }
      (void)(*file)->close();
      (void)env.fs.remove(path);
    }));
  }
  for (const FiberRef& f : fibers) env.scheduler.join(f);
  const double rate = static_cast<double>(latencies.size()) / wall_since(start);
  return FsyncAnchor{rate, percentile(latencies, 0.5), percentile(latencies, 0.99)};
}

double load_average() {
  double load = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  return load;
}

void bench_loopback(Env& env, const std::string& dir, std::vector<Row>& rows) {
  const auto members = addresses("127.0.0.1", kLoopbackPort, false);
  for (const CommitMode mode : kModes) {
    std::vector<std::unique_ptr<BenchNode>> owned;
    std::vector<BenchNode*> nodes;
    for (raft::NodeId id = 1; id <= kNodes; ++id) {
      const std::string node_dir = dir + "/" + mode_name(mode) + "/n" + std::to_string(id);
      owned.push_back(std::make_unique<BenchNode>(env, id, members, mode, open_storages(env.fs, node_dir, 1)));
      nodes.push_back(owned.back().get());
    }
    for (auto& n : owned) n->start();
    const Instant give_up = env.clock.now() + 30s;
    while (agreed_leader(nodes, 1) == raft::kNoNode) {
      if (env.clock.now() > give_up) die("loopback group elected no leader");
      env.scheduler.sleep_for(10ms);
    }
    BenchNode& leader = *nodes[agreed_leader(nodes, 1) - 1];
    for (const int k : kProposers) {
      Row row{"loopback", mode, k, {}, 0};
      const uint64_t syncs = leader.host().stats().log_syncs;
      const uint64_t all_syncs = cluster_syncs(nodes);
      const Instant start = env.clock.now();
      for (const FiberRef& f : spawn_proposers(env, leader.host(), k, start + kLoopbackLoad, row.load)) {
        env.scheduler.join(f);
      }
      row.load.elapsed = env.clock.now() - start;
      row.load.leader_syncs = leader.host().stats().log_syncs - syncs;
      row.load.cluster_syncs = cluster_syncs(nodes) - all_syncs;
      rows.push_back(std::move(row));
    }
    nodes.clear();
    owned.clear();  // hosts and transports stop; the ports are free for the next mode
  }
}

struct Anchors {
  FsyncAnchor before;    // one writer, before the loopback rows
  FsyncAnchor after;     // one writer, after them
  FsyncAnchor parallel;  // three writers at once (the cluster's shape), after them
};

void print_load(std::vector<Row>& rows, const Anchors& anchors) {
  const FsyncAnchor& before = anchors.before;
  const FsyncAnchor& after = anchors.after;
  const double fsyncs = (before.rate + after.rate) / 2;
  std::printf("\none group of 3 nodes, %zu B payloads, K closed-loop proposers on the leader "
              "(sim: %.0f simulated s; loopback: %.0f wall s)\n",
              kPayloadBytes, secs(kSimLoad), secs(kLoopbackLoad));
  std::printf("%-9s %-10s %3s %8s %9s %8s %8s %11s %10s %8s %9s %9s\n", "world", "mode", "K", "commits",
              "commits/s", "p50 ms", "p99 ms", "commits/", "log syncs/s", "sim s /", "commits/s", "commits/s");
  std::printf("%-9s %-10s %3s %8s %9s %8s %8s %11s %10s %8s %9s %9s\n", "", "", "", "", "", "", "", "leader sync",
              "3 nodes", "wall s", "/fsync 1w", "/fsync 3w");
  for (Row& r : rows) {
    const double rate = static_cast<double>(r.load.commits) / secs(r.load.elapsed);
    const double per_sync = r.load.leader_syncs == 0
                                ? 0
                                : static_cast<double>(r.load.commits) / static_cast<double>(r.load.leader_syncs);
    char speed[32] = "-";
    char ratio[32] = "-";
    char ratio3[32] = "-";
    if (r.speed > 0) std::snprintf(speed, sizeof(speed), "%.2f", r.speed);
    if (r.world == "loopback") {
      std::snprintf(ratio, sizeof(ratio), "%.3f", rate / fsyncs);
      std::snprintf(ratio3, sizeof(ratio3), "%.3f", rate / anchors.parallel.rate);
    }
    std::printf("%-9s %-10s %3d %8lu %9.0f %8.3f %8.3f %11.2f %10.0f %8s %9s %9s", r.world.c_str(), mode_name(r.mode),
                r.k, static_cast<unsigned long>(r.load.commits), rate, secs(percentile(r.load.latencies, 0.5)) * 1e3,
                secs(percentile(r.load.latencies, 0.99)) * 1e3, per_sync,
                static_cast<double>(r.load.cluster_syncs) / secs(r.load.elapsed), speed, ratio, ratio3);
    if (r.load.failures > 0) std::printf("  (%lu not committed)", static_cast<unsigned long>(r.load.failures));
    std::printf("\n");
  }
  for (const auto& [when, a] : {std::pair{"before", before}, std::pair{"after", after}}) {
    std::printf("anchor %-6s the loopback rows: 4 KiB append+fdatasync, one writer: %.0f /s "
                "(p50 %.3f ms, p99 %.3f ms)\n", when, a.rate, secs(a.p50) * 1e3, secs(a.p99) * 1e3);
  }
  std::printf("anchor, 3 writers at once on 3 files: %.0f /s in all (p50 %.3f ms, p99 %.3f ms)\n",
              anchors.parallel.rate, secs(anchors.parallel.p50) * 1e3, secs(anchors.parallel.p99) * 1e3);
  std::printf("/fsync 1w divides by the mean of the two one-writer anchors (%.0f /s); /fsync 3w by the 3-writer one\n",
              fsyncs);
}

// ---- Idle groups ----

struct IdleNode {
  raft::TransportStats transport;
  raft::HostStats host;
  uint64_t leaderships = 0;
};

IdleNode snapshot(BenchNode& n) { return IdleNode{n.transport_stats(), n.host().stats(), n.leaderships()}; }

size_t groups_led(BenchNode& n, raft::NodeId id, size_t groups) {
  size_t led = 0;
  for (raft::GroupId g = 1; g <= groups; ++g) led += n.host().status(g)->leader == id ? 1 : 0;
  return led;
}

double ratio(uint64_t a, uint64_t b) { return b == 0 ? 0 : static_cast<double>(a) / static_cast<double>(b); }

void print_idle_row(const std::string& who, size_t led, const IdleNode& d, double window) {
  const auto per_s = [window](uint64_t v) { return static_cast<double>(v) / window; };
  const raft::TransportStats& t = d.transport;
  std::printf("%-6s %6zu %12.0f %12.0f %10.1f %12.0f %9.2f %10.2f %10.0f\n", who.c_str(), led,
              per_s(t.messages_sent), per_s(t.heartbeats_sent), per_s(t.frames_sent),
              ratio(t.messages_sent, t.frames_sent), ratio(t.frames_sent, d.host.ticks),
              ratio(t.bytes_sent, t.messages_sent), per_s(t.bytes_sent));
}

IdleNode delta(const IdleNode& after, const IdleNode& before) {
  IdleNode d;
  d.transport.messages_sent = after.transport.messages_sent - before.transport.messages_sent;
  d.transport.heartbeats_sent = after.transport.heartbeats_sent - before.transport.heartbeats_sent;
  d.transport.frames_sent = after.transport.frames_sent - before.transport.frames_sent;
  d.transport.bytes_sent = after.transport.bytes_sent - before.transport.bytes_sent;
  d.host.ticks = after.host.ticks - before.host.ticks;
  d.leaderships = after.leaderships - before.leaderships;
  return d;
}

void bench_idle() {
  const auto wall_start = WallClock::now();
  SimRaft sim(CommitMode::kPersisted, kIdleGroups);
  if (!sim.run_until_elected(kIdleGroups, 120s)) die("idle groups did not all elect a leader");
  const double election_wall = wall_since(wall_start);
  const double elected_at = secs(sim.world().now().time_since_epoch());
  std::vector<IdleNode> before;
  for (raft::NodeId id = 1; id <= kNodes; ++id) before.push_back(snapshot(sim.node(id)));
  const auto window_start = WallClock::now();
  sim.world().run_for(kIdleWindow);
  const double window_wall = wall_since(window_start);
  std::printf("\n%zu idle groups, 3 nodes, every node a voter of each; all elected after %.1f simulated s "
              "(%.1f wall s); window %.0f simulated s in %.1f wall s (%.2f sim s / wall s)\n",
              kIdleGroups, elected_at, election_wall, secs(kIdleWindow), window_wall, secs(kIdleWindow) / window_wall);
  std::printf("%-6s %6s %12s %12s %10s %12s %9s %10s %10s\n", "node", "leads", "messages/s", "heartbeats/s",
              "frames/s", "msgs/frame", "frames/", "bytes/msg", "bytes/s");
  std::printf("%-6s %6s %12s %12s %10s %12s %9s %10s %10s\n", "", "", "", "", "", "", "tick", "", "");
  IdleNode sum;
  uint64_t elections = 0;
  const double window = secs(kIdleWindow);
  for (raft::NodeId id = 1; id <= kNodes; ++id) {
    const IdleNode d = delta(snapshot(sim.node(id)), before[id - 1]);
    print_idle_row("n" + std::to_string(id), groups_led(sim.node(id), id, kIdleGroups), d, window);
    sum.transport.messages_sent += d.transport.messages_sent;
    sum.transport.heartbeats_sent += d.transport.heartbeats_sent;
    sum.transport.frames_sent += d.transport.frames_sent;
    sum.transport.bytes_sent += d.transport.bytes_sent;
    sum.host.ticks += d.host.ticks;
    elections += d.leaderships;
  }
  print_idle_row("all", kIdleGroups, sum, window);
  const double frames_per_tick = ratio(sum.transport.frames_sent, sum.host.ticks) * kNodes;
  std::printf("frames per tick summed over nodes: %.1f = %.2f x the node count (%zu), %.4f x the group count (%zu); "
              "leaders elected inside the window: %lu\n",
              frames_per_tick, frames_per_tick / kNodes, kNodes, frames_per_tick / kIdleGroups, kIdleGroups,
              static_cast<unsigned long>(elections));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/sluice-raft-bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto start = WallClock::now();
  std::vector<Row> rows;
  bench_sim(rows);
  Anchors anchors;
  const double load_before = load_average();
  RealEnv real("raft_bench", LogLevel::kError);
  real.run([&](Env& env) {
    anchors.before = fsync_anchor(env, dir, 1);
    bench_loopback(env, dir, rows);
    anchors.after = fsync_anchor(env, dir, 1);
    anchors.parallel = fsync_anchor(env, dir, 3);
  });
  print_load(rows, anchors);
  std::printf("load average (1 min) before / after the loopback rows: %.2f / %.2f on %u CPUs\n", load_before,
              load_average(), std::thread::hardware_concurrency());
  bench_idle();
  std::printf("\ntotal %.0f wall s\n", wall_since(start));
  std::filesystem::remove_all(dir);
  return 0;
}
