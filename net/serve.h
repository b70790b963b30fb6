// `sluice serve`: the Kafka broker (core/kafka) on real sockets and files. It opens the data directory, listens,
// and serves clients. SIGINT/SIGTERM stop it gracefully (stop accepting, close connections, flush every log and
// write the clean-shutdown markers, log "stopped", return 0); a second signal stops the loop at once.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/env/env.h"
#include "core/env/network.h"
#include "core/kafka/broker_config.h"

namespace sluice {

struct ServeOptions {
  std::string listen = "127.0.0.1:9092";
  std::string advertised;  // HOST:PORT clients are told to use; empty: the bound listen address
  std::string data_dir = "./sluice-data";
  LogLevel log_level = LogLevel::kInfo;
  kafka::BrokerConfig broker;
  // The settings `broker` was parsed from (file and --set), logged at start-up.
  std::map<std::string, std::string> settings;
};

// What the command line says. An unset flag falls back to the --config file (listeners, advertised.listeners,
// log.dirs/log.dir), then to ServeOptions' defaults; --set key=value overrides the file's key.
struct ServeFlags {
  std::optional<std::string> listen;
  std::optional<std::string> advertised;
  std::optional<std::string> data_dir;
  std::string config_file;            // empty: none
  std::vector<std::string> settings;  // --set, in order: a later one wins
  // Cluster mode: --node-id and --peers win over node.id (broker.id) and controller.quorum.voters.
  std::optional<int32_t> node_id;
  std::optional<std::string> peers;  // "1@127.0.0.1:9192,2@127.0.0.1:9193,...": every voter's raft address
  LogLevel log_level = LogLevel::kInfo;
};

// The options the flags, the file and the overrides make. Errors are the user's (a file that cannot be read, a
// malformed line, an unknown key, a bad value) and name the file line or the key.
Result<ServeOptions> resolve_serve_options(const ServeFlags& flags);

// Called once, in the main fiber, when the listener is bound (tests learn the port of "host:0" here).
using OnListening = std::function<void(Env& env, const Address& bound)>;

// Returns the process exit code: 0 after a graceful stop; 1 when the data directory or the listener cannot be
// set up, or when a second signal forced the stop; 2 for a malformed listen or advertised address (an advertised
// port 0 included) or any mutation (sluice.mutations: planted bugs, for the simulator only). Fatal errors are also
// printed to stderr, whatever the log level. When the bound host is 0.0.0.0 or :: and nothing is advertised,
// clients are told that address and the log warns, suggesting --advertised.
int run_serve(const ServeOptions& options, const OnListening& on_listening = {});

// `sluice serve`: resolve_serve_options, then run_serve. A configuration error is printed to stderr, exit code 2.
int run_serve_command(const ServeFlags& flags, const OnListening& on_listening = {});

}  // namespace sluice
