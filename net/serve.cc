#include "net/serve.h"

#include <fmt/core.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "core/base/assert.h"
#include "core/base/limits.h"
#include "net/real_env.h"

namespace sluice {
namespace {

// At most this many names of the data directory go into the start-up line.
constexpr size_t kListedEntriesMax = 20;
// After a failed accept (out of fds, say), wait this long instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

struct Connection {
  std::unique_ptr<Stream> stream;
  FiberRef fiber;
};

// Shared by the main fiber, the connection fibers and the signal handler; outlives them all.
struct ServeState {
  Listener* listener = nullptr;  // set while accepting
  bool stopping = false;
  uint64_t next_connection_id = 1;
  std::map<uint64_t, Connection> connections;
};

void print_fatal(const std::string& message) {
  fmt::print(stderr, "sluice serve: {}\n", message);
  std::fflush(stderr);
}

void log_data_dir(Env& env, const std::string& dir, const std::vector<DirEntry>& entries) {
  if (entries.empty()) {
    env.log.info("data directory {} is empty", dir);
    return;
  }
  std::string names;
  for (size_t i = 0; i < entries.size() && i < kListedEntriesMax; ++i) {
    if (i > 0) names += ", ";
    names += entries[i].name + (entries[i].is_directory ? "/" : "");
  }
  if (entries.size() > kListedEntriesMax) names += ", ...";
  env.log.info("data directory {} holds {} entries: {}", dir, entries.size(), names);
}

// Reads and discards until end of stream, an error, or close() from the main fiber.
void serve_connection(Env& env, ServeState& state, uint64_t id) {
  // Erases the entry (and closes the stream) however the fiber ends, unwinding included.
  struct Forget {
    ServeState& state;
    uint64_t id;
    ~Forget() { state.connections.erase(id); }
  } forget{state, id};
  Stream& stream = *state.connections.at(id).stream;
  const std::string peer = stream.peer().to_string();
  std::vector<uint8_t> buffer(limits::kStreamReadChunkBytes);
  uint64_t received = 0;
  Status end;
  while (true) {
    Result<size_t> n = stream.read_some(buffer);
    if (!n.ok()) {
      end = n.status();
      break;
    }
    if (*n == 0) break;
    received += *n;
    env.log.debug("received {} bytes from {} ({} in total)", *n, peer, received);
  }
  if (end.ok() || end.code() == Code::kClosed) {
    env.log.info("connection from {} closed after {} bytes", peer, received);
  } else {
    env.log.info("connection from {} closed after {} bytes: {}", peer, received, end.to_string());
  }
}

void accept_loop(Env& env, ServeState& state, Listener& listener) {
  while (!state.stopping) {
    Result<std::unique_ptr<Stream>> accepted = listener.accept();
    if (!accepted.ok()) {
      if (accepted.status().code() == Code::kClosed) break;  // the signal handler closed it
      env.log.warn("accept failed: {}", accepted.status().to_string());
      env.scheduler.sleep_for(kAcceptBackoff);
      continue;
    }
    const uint64_t id = state.next_connection_id++;
    Connection& connection = state.connections[id];
    connection.stream = std::move(accepted).value();
    env.log.info("accepted connection from {}", connection.stream->peer().to_string());
    connection.fiber = env.scheduler.spawn("conn." + std::to_string(id), [&env, &state, id] {
      serve_connection(env, state, id);
    });
  }
}

// Closes every open connection and waits for their fibers to log the close and end.
void close_connections(Env& env, ServeState& state) {
  std::vector<FiberRef> fibers;
  for (auto& [id, connection] : state.connections) {
    connection.stream->close();
    fibers.push_back(connection.fiber);
  }
  for (const FiberRef& fiber : fibers) env.scheduler.join(fiber);
  SLUICE_ASSERT(state.connections.empty());
}

int serve_main(Env& env, const ServeOptions& options, const Address& address, ServeState& state,
               const OnListening& on_listening) {
  if (Status s = env.fs.create_dirs(options.data_dir); !s.ok()) {
    print_fatal("cannot create data directory " + options.data_dir + ": " + s.to_string());
    return 1;
  }
  Result<std::vector<DirEntry>> entries = env.fs.list(options.data_dir);
  if (!entries.ok()) {
    print_fatal("cannot read data directory " + options.data_dir + ": " + entries.status().to_string());
    return 1;
  }
  log_data_dir(env, options.data_dir, *entries);
  Result<std::unique_ptr<Listener>> listener = env.net.listen(address);
  if (!listener.ok()) {
    print_fatal("cannot listen on " + address.to_string() + ": " + listener.status().to_string());
    return 1;
  }
  env.log.info("listening on {}", (*listener)->address().to_string());
  if (on_listening) on_listening(env, (*listener)->address());
  state.listener = listener->get();
  accept_loop(env, state, **listener);
  state.listener = nullptr;
  (*listener)->close();
  close_connections(env, state);
  env.log.info("stopped");
  return 0;
}

}  // namespace

int run_serve(const ServeOptions& options, const OnListening& on_listening) {
  Result<Address> address = parse_address(options.listen);
  if (!address.ok()) {
    print_fatal("invalid listen address: " + address.status().message());
    return 2;
  }
  RealEnv real("serve", options.log_level);
  ServeState state;
  Status signals = real.loop().handle_signals([&real, &state](int signal_number) {
    if (state.stopping) {
      real.log().warn("signal {} again: stopping now", signal_number);
      real.stop();
      return;
    }
    const char* name = signal_number == SIGINT ? "SIGINT" : "SIGTERM";
    real.log().info("signal {} ({}): stopping", signal_number, name);
    state.stopping = true;
    if (state.listener != nullptr) state.listener->close();
  });
  if (!signals.ok()) {
    print_fatal("cannot handle signals: " + signals.to_string());
    return 1;
  }
  int exit_code = 1;
  const int run_result = real.run([&](Env& env) {
    exit_code = serve_main(env, options, *address, state, on_listening);
  });
  if (run_result != 0) {
    real.log().warn("stopped without waiting for connections");
    return 1;
  }
  return exit_code;
}

}  // namespace sluice
