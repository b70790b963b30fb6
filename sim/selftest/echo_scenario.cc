#include "sim/selftest/echo_scenario.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

#include "core/base/assert.h"
#include "sim/selftest/echo_service.h"
#include "sim/selftest/journal.h"
#include "sim/world/sim_cluster.h"
#include "sim/world/sim_disk.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kEchoPort = 7000;
constexpr const char* kJournalPath = "data/echo.journal";

// What the clients saw, kept outside the nodes so that it survives their crashes.
struct History {
  std::map<std::string, std::set<std::string>> acked_by_server;  // server name → acknowledged payloads
  uint64_t next_message = 0;  // message ids are unique across nodes and their restarts
  uint64_t acked = 0;
  uint64_t failed = 0;
  uint64_t torn_bytes = 0;
};

// Sends messages to random peers, one at a time, until the node dies.
void client_loop(Env env, const std::string& self, int nodes, History& history) {
  for (;;) {
    int peer = static_cast<int>(env.random.uniform(static_cast<uint64_t>(nodes - 1))) + 1;
    if ("n" + std::to_string(peer) == self) peer = nodes;
    const std::string server = "n" + std::to_string(peer);
    Result<std::unique_ptr<Stream>> stream = env.net.connect(Address{server, kEchoPort});
    for (int i = 0; stream.ok() && i < 20; ++i) {
      const std::string payload = self + "->" + server + "#" + std::to_string(++history.next_message);
      Result<Bytes> reply = EchoService::call(**stream, as_bytes(payload));
      if (!reply.ok()) {
        ++history.failed;  // partition, reset or crash: not acknowledged, so not promised
        break;
      }
      SLUICE_ASSERT(as_chars(*reply) == payload);
      history.acked_by_server[server].insert(payload);
      ++history.acked;
      env.scheduler.sleep_for(std::chrono::microseconds(env.random.uniform_range(0, 3000)));
    }
    if (!stream.ok()) ++history.failed;
    env.scheduler.sleep_for(std::chrono::milliseconds(env.random.uniform_range(20, 200)));
  }
}

SimNode::Main node_main(int nodes, History& history) {
  return [nodes, &history](Env env) {
    const std::string self = env.log.name();
    // The data directory's own entry must be durable too, or a power loss may take the journal with it.
    Status dirs = env.fs.create_dirs("data");
    if (dirs.ok()) dirs = env.fs.sync_dir(".");
    if (!dirs.ok()) {
      env.log.error("data directory: {}", dirs.to_string());
      return;
    }
    Result<std::unique_ptr<Journal>> journal = Journal::open(env.fs, kJournalPath);
    if (!journal.ok()) {
      env.log.error("journal: {}", journal.status().to_string());
      return;
    }
    history.torn_bytes += (*journal)->truncated_bytes();
    if ((*journal)->truncated_bytes() > 0) {
      env.log.info("journal recovery truncated a torn tail of {} bytes", (*journal)->truncated_bytes());
    }
    EchoService service(env, journal->get());
    Result<Address> bound = service.start(Address{self, kEchoPort});
    SLUICE_ASSERT_MSG(bound.ok(), "the echo port is free on a fresh node");
    client_loop(env, self, nodes, history);
  };
}

// A partition and a power loss at times drawn from the fault stream.
void schedule_faults(SimCluster& cluster, Duration run) {
  SimWorld& world = cluster.world();
  Random& faults = world.fault_rng();
  const auto at = [&](double low, double high) {
    const double fraction = low + (high - low) * faults.next_double();
    return world.now() + std::chrono::duration_cast<Duration>(run * fraction);
  };
  SimNode& a = cluster.node(0);
  SimNode& b = cluster.node(1);
  const Instant partition_at = at(0.2, 0.35);
  const Instant heal_at = partition_at + std::chrono::duration_cast<Duration>(run * 0.15);
  world.schedule_at(partition_at, kWorldNode, EventKind::kFault, [&cluster, &a, &b] {
    cluster.network().partition(a.id(), b.id());
  });
  world.schedule_at(heal_at, kWorldNode, EventKind::kFault, [&cluster] { cluster.network().heal(); });
  SimNode& victim = cluster.node(cluster.size() - 1);
  const Instant power_loss_at = at(0.5, 0.7);
  world.schedule_at(power_loss_at, kWorldNode, EventKind::kFault, [&victim] { victim.power_loss(); });
  world.schedule_at(power_loss_at + 500ms, kWorldNode, EventKind::kFault, [&victim] { victim.restart(); });
}

std::string replay_command(const EchoScenarioOptions& options) {
  return "sluice sim --selftest --seed " + std::to_string(options.seed) + " --nodes " + std::to_string(options.nodes) +
         " --seconds " + std::to_string(options.simulated_seconds);
}

// Every acknowledged message must be in its server's journal once every node has lost power.
void check_durability(SimCluster& cluster, const History& history, EchoScenarioResult& result) {
  for (size_t i = 0; i < cluster.size(); ++i) {
    SimNode& node = cluster.node(i);
    // Recover the journal as a restarted node would: a torn tail is truncated, the valid prefix kept.
    Result<std::unique_ptr<Journal>> journal = Journal::open(node.fs(), kJournalPath);
    std::set<std::string> found;
    if (journal.ok()) {
      for (const Bytes& record : (*journal)->records()) found.insert(std::string(as_chars(record)));
      result.torn_bytes_truncated += (*journal)->truncated_bytes();
    } else {
      result.violations.push_back(node.name() + "'s journal does not open: " + journal.status().to_string());
    }
    result.journal_records += found.size();
    auto acked = history.acked_by_server.find(node.name());
    if (acked == history.acked_by_server.end()) continue;
    for (const std::string& payload : acked->second) {
      if (!found.count(payload)) {
        result.violations.push_back("acknowledged message '" + payload + "' missing from " + node.name() +
                                    "'s journal after power loss");
      }
    }
  }
}

}  // namespace

EchoScenarioResult run_echo_scenario(const EchoScenarioOptions& options) {
  SLUICE_ASSERT(options.nodes >= 2);
  EchoScenarioResult result;
  result.seed = options.seed;
  History history;
  {
    SimCluster cluster(options.seed, options.log_level);
    AssertFailureHook previous =
        set_assert_failure_hook(simulation_failure_hook(cluster.world(), replay_command(options)));
    for (int i = 0; i < options.nodes; ++i) cluster.add_node();
    for (size_t i = 0; i < cluster.size(); ++i) cluster.node(i).boot(node_main(options.nodes, history));
    const Duration run = std::chrono::seconds(options.simulated_seconds);
    schedule_faults(cluster, run);
    SimWorld& world = cluster.world();
    world.run_until(world.now() + run);
    // The end of the run is a power loss everywhere: what was acknowledged must have been synced.
    for (size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).up()) cluster.node(i).power_loss();
    }
    check_durability(cluster, history, result);
    result.simulated_seconds = to_seconds(world.now().time_since_epoch());
    result.events = world.events_run();
    result.fiber_steps = world.fiber_steps();
    result.trace_hash = world.trace_hash();
    for (size_t i = 0; i < cluster.size(); ++i) {
      const SimDiskStats& disk = cluster.node(i).disk().stats();
      result.power_losses += disk.power_losses;
      result.torn_writes += disk.torn_writes;
      result.lost_writes += disk.lost_writes;
    }
    set_assert_failure_hook(std::move(previous));
  }
  result.messages_acked = history.acked;
  result.messages_failed = history.failed;
  result.torn_bytes_truncated += history.torn_bytes;
  return result;
}

namespace {

void print_probes() {
  std::printf("probes:\n");
  for (const ProbeSite& site : probe_sites()) {
    std::printf("  %-40s %8" PRIu64 " hits  %s:%d%s\n", site.name, site.hits, site.file, site.line,
                site.hits == 0 ? "  (never reached)" : "");
  }
}

}  // namespace

int run_echo_scenario_cli(const EchoScenarioOptions& options) {
  set_verify_enabled(true);
  reset_probe_hits();
  const std::string replay = replay_command(options);
  const auto wall_start = std::chrono::steady_clock::now();
  const EchoScenarioResult result = run_echo_scenario(options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  std::printf("seed: %" PRIu64 "\n", result.seed);
  std::printf("simulated time: %.3f s\n", result.simulated_seconds);
  std::printf("events: %" PRIu64 " (fiber steps: %" PRIu64 ")\n", result.events, result.fiber_steps);
  std::printf("trace hash: %016" PRIx64 "\n", result.trace_hash);
  std::printf("wall time: %.3f s\n", wall);
  std::printf("speed: %.1f simulated s per wall s, %.0f events per wall s\n", result.simulated_seconds / wall,
              static_cast<double>(result.events) / wall);
  std::printf("disks: %" PRIu64 " power losses, %" PRIu64 " un-synced writes lost, %" PRIu64 " torn\n",
              result.power_losses, result.lost_writes, result.torn_writes);
  std::printf("messages: %" PRIu64 " acknowledged, %" PRIu64 " failed calls, %" PRIu64
              " journal records after power loss, %" PRIu64 " torn bytes truncated by recovery\n",
              result.messages_acked, result.messages_failed, result.journal_records, result.torn_bytes_truncated);
  if (options.list_probes) print_probes();
  if (!result.violations.empty()) {
    for (const std::string& v : result.violations) std::printf("VIOLATION: %s\n", v.c_str());
    std::printf("FAILED; replay with: %s\n", replay.c_str());
    return 1;
  }
  std::printf("check: every acknowledged message survived power loss\n");
  return 0;
}

}  // namespace sluice
