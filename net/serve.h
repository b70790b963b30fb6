// `sluice serve`: runs a node on real sockets and files. Until the Kafka API exists it is a plain TCP sink:
// it opens the data directory, listens, and gives each connection a fiber that reads and discards bytes.
// SIGINT/SIGTERM stop it gracefully (stop accepting, close connections, log "stopped", return 0); a second
// signal stops the loop at once.
#pragma once

#include <functional>
#include <string>

#include "core/base/log.h"
#include "core/env/env.h"
#include "core/env/network.h"

namespace sluice {

struct ServeOptions {
  std::string listen = "127.0.0.1:9092";
  std::string data_dir = "./sluice-data";
  LogLevel log_level = LogLevel::kInfo;
};

// Called once, in the main fiber, when the listener is bound (tests learn the port of "host:0" here).
using OnListening = std::function<void(Env& env, const Address& bound)>;

// Returns the process exit code: 0 after a graceful stop; 1 when the data directory or the listener cannot be
// set up, or when a second signal forced the stop; 2 for a malformed listen address. Fatal errors are also
// printed to stderr, whatever the log level.
int run_serve(const ServeOptions& options, const OnListening& on_listening = {});

}  // namespace sluice
