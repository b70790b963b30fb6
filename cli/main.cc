// The `sluice` command line: `sluice serve` and `sluice log` (the real world, net/) and `sluice sim` (the simulated
// world, sim/). It lives in cli/ because it depends on both worlds, which never depend on each other.
#include <CLI/CLI.hpp>

#include <malloc.h>

#include <cstdio>
#include <string>

#include "core/base/log.h"
#include "net/log_commands.h"
#include "net/serve.h"
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
  serve->add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
}

void add_sim(CLI::App& app, sluice::EchoScenarioOptions& options, std::string& log_level) {
  CLI::App* sim = app.add_subcommand(
      "sim", "Run the simulator's self-test (--selftest, today the default): three nodes exchange journaled "
             "echo messages over the simulated network while a partition and a power loss strike. The same "
             "--seed replays the run exactly (same trace hash).");
  sim->add_flag("--selftest", options.selftest, "Run the echo self-test scenario");
  sim->add_option("--seed,-s", options.seed, "Seed of the run")->capture_default_str();
  sim->add_option("--nodes,-n", options.nodes, "Number of nodes")->check(CLI::Range(2, 16))->capture_default_str();
  sim->add_option("--seconds", options.simulated_seconds, "Simulated seconds to run")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  sim->add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  sim->add_flag("--probes", options.list_probes, "List the probes (rare paths) the run reached and missed");
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

}  // namespace

int main(int argc, char** argv) {
  keep_large_buffers_in_the_heap();
  CLI::App app{"Sluice: a Kafka-compatible broker whose core also runs in a deterministic simulator."};
  app.require_subcommand(1);
  sluice::ServeFlags serve_flags;
  sluice::EchoScenarioOptions sim_options;
  std::string serve_level = "info";
  std::string sim_level = "warn";
  add_serve(app, serve_flags, serve_level);
  add_sim(app, sim_options, sim_level);
  LogOptions log_options;
  add_log(app, log_options);
  CLI11_PARSE(app, argc, argv);

  if (app.got_subcommand("serve")) {
    if (!resolve_level(serve_level, serve_flags.log_level)) return 2;
    return sluice::run_serve_command(serve_flags);
  }
  if (CLI::App* log = app.get_subcommand("log"); log->parsed()) {
    if (log->got_subcommand("inspect")) return sluice::run_log_inspect(log_options.dir, log_options.json);
    return sluice::run_log_repair(log_options.dir);
  }
  if (!resolve_level(sim_level, sim_options.log_level)) return 2;
  return sluice::run_echo_scenario_cli(sim_options);
}
