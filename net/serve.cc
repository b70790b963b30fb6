#include "net/serve.h"

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "core/broker/node.h"
#include "core/kafka/broker.h"
#include "core/kafka/properties.h"
#include "net/open_file_limit.h"
#include "net/real_env.h"

namespace sluice {
namespace {

// Shared by the main fiber and the signal handler; outlives both.
struct ServeState {
  broker::Node* node = nullptr;  // set while running
  bool stopping = false;
};

void print_fatal(const std::string& message) {
  fmt::print(stderr, "sluice serve: {}\n", message);
  std::fflush(stderr);
}

int serve_main(Env& env, const ServeOptions& options, const Address& address,
               const std::optional<Address>& advertised, ServeState& state, const OnListening& on_listening) {
  broker::NodeOptions node_options{.listen = address,
                                   .advertised = advertised,
                                   .data_dir = options.data_dir,
                                   .broker = options.broker,
                                   .settings = options.settings,
                                   .effects = nullptr};  // the real world declares nothing
  broker::Node node(env, std::move(node_options));
  state.node = &node;
  if (state.stopping) node.stop();  // a signal during start-up
  const Status run = node.run([&](kafka::Broker&, const Address& bound) {
    if (on_listening) on_listening(env, bound);
  });
  state.node = nullptr;
  if (!run.ok()) {
    print_fatal(run.message());
    return 1;
  }
  return 0;
}

// An --advertised address: HOST:PORT with a real port (clients cannot connect to port 0).
Result<std::optional<Address>> parse_advertised(const std::string& text) {
  if (text.empty()) return std::optional<Address>();
  SLUICE_ASSIGN_OR_RETURN(Address address, parse_address(text));
  if (address.port == 0) return invalid_argument("address '" + text + "': clients cannot connect to port 0");
  return std::optional<Address>(address);
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_argument("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return invalid_argument("cannot read " + path + ": " + std::strerror(errno));
  return text.str();
}

// The file's settings, then the --set overrides.
Result<std::map<std::string, std::string>> load_settings(const ServeFlags& flags) {
  std::map<std::string, std::string> settings;
  if (!flags.config_file.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::string text, read_text_file(flags.config_file));
    Result<std::map<std::string, std::string>> parsed = kafka::parse_properties(text);
    if (!parsed.ok()) return invalid_argument(flags.config_file + ": " + parsed.status().message());
    settings = std::move(parsed).value();
  }
  for (const std::string& setting : flags.settings) {
    Result<std::pair<std::string, std::string>> parsed = kafka::parse_setting(setting);
    if (!parsed.ok()) return invalid_argument("--set: " + parsed.status().message());
    settings[parsed->first] = parsed->second;
  }
  if (flags.node_id) {
    settings.erase("broker.id");
    settings["node.id"] = std::to_string(*flags.node_id);
  }
  if (flags.peers) settings["controller.quorum.voters"] = *flags.peers;
  return settings;
}

}  // namespace

Result<ServeOptions> resolve_serve_options(const ServeFlags& flags) {
  ServeOptions options;
  options.log_level = flags.log_level;
  SLUICE_ASSIGN_OR_RETURN(options.settings, load_settings(flags));
  std::map<std::string, std::string> broker_settings = options.settings;
  SLUICE_ASSIGN_OR_RETURN(kafka::ServerSettings server, kafka::take_server_settings(broker_settings));
  SLUICE_ASSIGN_OR_RETURN(options.broker, kafka::BrokerConfig::from_map(broker_settings));
  options.listen = flags.listen.value_or(server.listen.value_or(options.listen));
  options.advertised = flags.advertised.value_or(server.advertised.value_or(options.advertised));
  options.data_dir = flags.data_dir.value_or(server.data_dir.value_or(options.data_dir));
  return options;
}

int run_serve_command(const ServeFlags& flags, const OnListening& on_listening) {
  Result<ServeOptions> options = resolve_serve_options(flags);
  if (!options.ok()) {
    print_fatal("configuration: " + options.status().message());
    return 2;
  }
  return run_serve(*options, on_listening);
}

int run_serve(const ServeOptions& options, const OnListening& on_listening) {
  if (!options.broker.mutations.empty()) {
    print_fatal(fmt::format("configuration: {}={}: mutations plant known bugs for the simulator's checkers, and "
                            "sluice serve never runs them",
                            kafka::BrokerConfig::kMutationsKey, options.broker.mutations.to_string()));
    return 2;
  }
  Result<Address> address = parse_address(options.listen);
  if (!address.ok()) {
    print_fatal("invalid listen address: " + address.status().message());
    return 2;
  }
  Result<std::optional<Address>> advertised = parse_advertised(options.advertised);
  if (!advertised.ok()) {
    print_fatal("invalid advertised address: " + advertised.status().message());
    return 2;
  }
  RealEnv real("serve", options.log_level);
  // Each partition's active segment holds three descriptors: the usual soft limit of 1024 runs out at a few hundred.
  if (Result<OpenFileLimit> limit = raise_open_file_limit(); limit.ok()) {
    real.log().info("open-file limit {} (hard {})", limit->soft,
                    limit->hard == UINT64_MAX ? std::string("unlimited") : std::to_string(limit->hard));
  } else {
    real.log().warn("open-file limit not raised: {}", limit.status().message());
  }
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
    if (state.node != nullptr) state.node->stop();
  });
  if (!signals.ok()) {
    print_fatal("cannot handle signals: " + signals.to_string());
    return 1;
  }
  int exit_code = 1;
  const int run_result =
      real.run([&](Env& env) { exit_code = serve_main(env, options, *address, *advertised, state, on_listening); });
  if (run_result != 0) {
    real.log().warn("stopped without waiting for connections");
    return 1;
  }
  return exit_code;
}

}  // namespace sluice
