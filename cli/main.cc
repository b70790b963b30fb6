// The `sluice` command line: `sluice serve` and `sluice log` (the real world, net/) and `sluice sim` (the simulated
// world, sim/). It lives in cli/ because it depends on both worlds, which never depend on each other.
#include <CLI/CLI.hpp>

#include <malloc.h>

#include <cstdio>
#include <string>

#include "core/base/log.h"
#include "net/log_commands.h"
#include "net/quorum_command.h"
#include "net/serve.h"
#include "sim/scenario/commands.h"
#include "sim/selftest/echo_scenario.h"

namespace {

void add_serve(CLI::App& app, sluice::ServeFlags& flags, std::string& log_level) {
  const sluice::ServeOptions defaults;
  CLI::App* serve = app.add_subcommand(
      "serve", "Run the Kafka broker on real sockets and files. Alone: one node, " + defaults.data_dir + ", " +
                   defaults.listen + ". Settings come from the flags, then --set, then --config, then the defaults.");
  serve->add_option("--listen,-l", flags.listen,
                    "Address to listen on, HOST:PORT (default " + defaults.listen + "; listeners= in --config)");
  serve->add_option("--advertised", flags.advertised,
                    "HOST:PORT clients are told to connect to (default: the bound listen address; "
                    "advertised.listeners= in --config)");
  serve->add_option("--data-dir,-d", flags.data_dir,
                    "Data directory, created when missing (default " + defaults.data_dir + "; log.dirs= in --config)");
  serve->add_option("--config,-c", flags.config_file,
                    "Kafka-style properties file: key=value lines with Kafka's broker setting names (num.partitions, "
                    "log.retention.hours, listeners=PLAINTEXT://host:port, ...)");
  serve->add_option("--set", flags.settings, "key=value overriding the --config file; repeatable")
      ->allow_extra_args(false);
  serve->add_option("--node-id", flags.node_id, "Cluster mode: this node's id, one of --peers (node.id= in --config)");
  serve->add_option("--peers", flags.peers,
                    "Cluster mode: every node's raft address, this one's included: 1@127.0.0.1:9192,2@127.0.0.1:9193,"
                    "... (controller.quorum.voters= in --config)");
  serve->add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
}

struct SimFlags {
  sluice::EchoScenarioOptions selftest;
  sluice::sim::SimCommandOptions scenario;
  bool list_mutations = false;
  std::string log_level = "off";
};

void add_sim(CLI::App& app, SimFlags& flags) {
  CLI::App* sim = app.add_subcommand(
      "sim", "Run one scenario (scenarios/*.toml) in the deterministic simulator: the real broker on virtual time, "
             "disk and network, driven by Kafka clients under the scenario's faults, then every checker over the "
             "history. The same --seed replays the run exactly (same trace hash). Also: --selftest (the simulator's "
             "own echo scenario) and --list-mutations.");
  sim->add_option("--scenario,-f", flags.scenario.scenario, "Scenario file");
  sim->add_option("--seed,-s", flags.scenario.seed, "Seed of the run")->capture_default_str();
  sim->add_option("--mutation,-m", flags.scenario.mutations,
                  "Plant a known bug (repeatable, or comma-separated): proves the checkers catch it");
  sim->add_option("--trace", flags.scenario.trace_path, "Write the run's history as JSON lines to this file");
  sim->add_flag("--check-determinism", flags.scenario.check_determinism,
                "Run the seed twice in this process and name the first event where the runs differ");
  sim->add_flag("--quiet,-q", flags.scenario.quiet, "Print the report only, not the seed's configuration");
  sim->add_flag("--buggify", flags.scenario.buggify,
                "Switch BUGGIFY on (fault points in the broker that exercise legal but rare behaviour), whatever the "
                "scenario says");
  sim->add_flag("--list-mutations", flags.list_mutations, "List the mutations --mutation takes");
  sim->add_option("--log-level", flags.log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  sim->add_flag("--selftest", flags.selftest.selftest,
                "Run the simulator's self-test instead: nodes exchange journaled echo messages while a partition "
                "and a power loss strike");
  sim->add_option("--nodes,-n", flags.selftest.nodes, "--selftest: number of nodes")
      ->check(CLI::Range(2, 16))
      ->capture_default_str();
  sim->add_option("--seconds", flags.selftest.simulated_seconds, "--selftest: simulated seconds to run")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  sim->add_flag("--probes", flags.selftest.list_probes, "--selftest: list the probes the run reached and missed");
}

struct FuzzFlags {
  sluice::sim::FuzzCommandOptions options;
  std::string log_level = "off";
};

void add_fuzz(CLI::App& app, FuzzFlags& flags) {
  CLI::App* fuzz = app.add_subcommand(
      "fuzz", "Run many seeds of one or more scenarios (round robin) and report failures with their replay "
              "commands, the speed, and the probes no seed reached. Exits 1 on any failure.");
  fuzz->add_option("--scenario,-f", flags.options.scenarios, "Scenario file (repeatable)")->required();
  fuzz->add_option("--seeds,-n", flags.options.seeds, "How many seeds")->capture_default_str();
  fuzz->add_option("--first-seed", flags.options.first_seed, "The first seed")->capture_default_str();
  fuzz->add_option("--time-budget", flags.options.time_budget_seconds,
                   "Start no seed after this many wall-clock seconds (0: no budget)")
      ->capture_default_str();
  fuzz->add_option("--mutation,-m", flags.options.mutations, "Plant a known bug in every seed");
  fuzz->add_option("--buggify", flags.options.buggify_share,
                   "The share of seeds run with BUGGIFY on (0..1; 1: every seed, 0: only scenarios saying so)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  fuzz->add_flag("--prove-mutations", flags.options.prove_mutations,
                 "For each mutation a scenario's [checks] catches names: the first of --seeds that catches it, and "
                 "those seeds passing without it");
  fuzz->add_flag("--expect-failure", flags.options.expect_failure,
                 "Exit 0 only if some seed failed (a mutation must be caught)");
  fuzz->add_flag("--shrink", flags.options.shrink,
                 "Stop at the first failing seed and shrink it to a small scenario file that still fails the same way "
                 "(fewer faults and workloads, a shorter fault phase, default knobs), replayable with `sluice sim`. "
                 "Seeds run in child processes, so a core assertion is a failure too; coverage is not judged");
  fuzz->add_option("--shrink-out", flags.options.shrink_out, "Where --shrink writes the scenario file")
      ->capture_default_str();
  fuzz->add_option("--shrink-runs", flags.options.shrink_runs, "The most runs --shrink may spend")
      ->capture_default_str();
  fuzz->add_option("--trace-dir", flags.options.trace_dir, "Where failing seeds' histories go")
      ->capture_default_str();
  fuzz->add_option("--log-level", flags.log_level, "trace, debug, info, warn, error or off")->capture_default_str();
}

struct LogOptions {
  std::string dir;
  bool json = false;
};

void add_log(CLI::App& app, LogOptions& options) {
  CLI::App* log = app.add_subcommand("log", "Offline tools for a data directory or one partition directory.");
  log->require_subcommand(1);
  CLI::App* inspect = log->add_subcommand(
      "inspect", "Show segments (offsets, sizes, time ranges), log start, recovery point, damage, and when retention "
                 "will evict the oldest data and why it has not yet. Changes nothing.");
  inspect->add_option("dir", options.dir, "Data directory or partition directory")->required();
  inspect->add_flag("--json", options.json, "Machine-readable output");
  CLI::App* repair = log->add_subcommand(
      "repair", "Truncate a partition at its first damaged batch and delete every later segment (what a refused "
                "load asks for). Data after the damage is lost.");
  repair->add_option("dir", options.dir, "Partition directory")->required();
}

// As kafka-metadata-quorum.sh: `metadata-quorum --bootstrap-server HOST:PORT describe --status | --replication`.
void add_metadata_quorum(CLI::App& app, sluice::QuorumCommandOptions& options) {
  CLI::App* quorum = app.add_subcommand(
      "metadata-quorum", "Describe the cluster metadata quorum (DescribeQuorum), as kafka-metadata-quorum.sh does.");
  quorum->add_option("--bootstrap-server", options.bootstrap_server, "HOST:PORT of any node")->required();
  quorum->require_subcommand(1);
  CLI::App* describe = quorum->add_subcommand("describe", "Leader, epoch, high watermark, lag, voters and observers.");
  describe->add_flag("--status", options.status, "The quorum's status: leader, epoch, high watermark, lag, voters");
  describe->add_flag("--replication", options.replication,
                     "Each replica's log end offset, lag, last fetch and last caught-up times");
  describe->add_flag("--human-readable", options.human_readable, "With --replication: times as \"N ms ago\"");
}

bool resolve_level(const std::string& text, sluice::LogLevel& level) {
  auto parsed = sluice::parse_log_level(text);
  if (!parsed) {
    std::fprintf(stderr, "sluice: unknown log level '%s' (trace, debug, info, warn, error, off)\n", text.c_str());
    return false;
  }
  level = *parsed;
  return true;
}

// Produce frames and fetch buffers are usually larger than glibc's initial mmap threshold (128 KiB), so each one
// was a fresh mmap whose pages faulted in and were zeroed, then unmapped on free: measured, that was ~90 % of the
// broker's CPU per GB at 1 KiB records. Serving them from the heap, kept across requests, removes it.
void keep_large_buffers_in_the_heap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum on 64-bit
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int run_sim(SimFlags& flags) {
  if (flags.list_mutations) return sluice::sim::list_mutations_command();
  if (flags.selftest.selftest) {
    flags.selftest.seed = flags.scenario.seed;  // --seed is shared by both modes
    if (!resolve_level(flags.log_level == "off" ? "warn" : flags.log_level, flags.selftest.log_level)) return 2;
    return sluice::run_echo_scenario_cli(flags.selftest);
  }
  if (flags.scenario.scenario.empty()) {
    std::fprintf(stderr, "sluice sim: give --scenario FILE (see scenarios/), --selftest or --list-mutations\n");
    return 2;
  }
  if (!resolve_level(flags.log_level, flags.scenario.log_level)) return 2;
  return sluice::sim::run_sim_command(flags.scenario);
}

}  // namespace

int main(int argc, char** argv) {
  keep_large_buffers_in_the_heap();
  CLI::App app{"Sluice: a Kafka-compatible broker whose core also runs in a deterministic simulator."};
  app.require_subcommand(1);
  sluice::ServeFlags serve_flags;
  std::string serve_level = "info";
  add_serve(app, serve_flags, serve_level);
  SimFlags sim_flags;
  add_sim(app, sim_flags);
  FuzzFlags fuzz_flags;
  add_fuzz(app, fuzz_flags);
  LogOptions log_options;
  add_log(app, log_options);
  sluice::QuorumCommandOptions quorum_options;
  add_metadata_quorum(app, quorum_options);
  CLI11_PARSE(app, argc, argv);

  if (app.got_subcommand("metadata-quorum")) return sluice::run_metadata_quorum_describe(quorum_options);
  if (app.got_subcommand("serve")) {
    if (!resolve_level(serve_level, serve_flags.log_level)) return 2;
    return sluice::run_serve_command(serve_flags);
  }
  if (CLI::App* log = app.get_subcommand("log"); log->parsed()) {
    if (log->got_subcommand("inspect")) return sluice::run_log_inspect(log_options.dir, log_options.json);
    return sluice::run_log_repair(log_options.dir);
  }
  if (app.got_subcommand("fuzz")) {
    if (!resolve_level(fuzz_flags.log_level, fuzz_flags.options.log_level)) return 2;
    return sluice::sim::run_fuzz_command(fuzz_flags.options);
  }
  return run_sim(sim_flags);
}
