#include "net/quorum_command.h"

#include <cstdio>

#include "core/client/client.h"
#include "core/client/quorum.h"
#include "net/real_env.h"

namespace sluice {

int run_metadata_quorum_describe(const QuorumCommandOptions& options) {
  if (options.status == options.replication) {
    std::fprintf(stderr, "sluice metadata-quorum describe: give one of --status or --replication\n");
    return 2;
  }
  Result<Address> bootstrap = parse_address(options.bootstrap_server);
  if (!bootstrap.ok()) {
    std::fprintf(stderr, "sluice metadata-quorum: --bootstrap-server: %s\n", bootstrap.status().to_string().c_str());
    return 2;
  }
  RealEnv real("metadata-quorum", LogLevel::kWarn);
  int code = 0;
  real.run([&](Env& env) {
    client::ClientConfig config;
    config.bootstrap = {*bootstrap};
    config.client_id = "sluice-metadata-quorum";
    client::Client client(env, config);
    Result<client::QuorumDescription> described = client::describe_metadata_quorum(client);
    if (!described.ok()) {
      std::fprintf(stderr, "sluice metadata-quorum: %s\n", described.status().to_string().c_str());
      code = 1;
      return;
    }
    const std::string text =
        options.status ? client::format_quorum_status(*described)
                       : client::format_quorum_replication(
                             *described, options.human_readable ? to_unix_ms(env.clock.wall_now()) : -1);
    std::fputs(text.c_str(), stdout);
  });
  return code;
}

}  // namespace sluice
