#include "net/log_commands.h"

#include <cstdio>

#include "core/storage/broker_storage_config.h"
#include "core/storage/log_inspector.h"
#include "core/storage/partition_log.h"
#include "net/real_env.h"

namespace sluice {

int run_log_inspect(const std::string& dir, bool json) {
  RealEnv real("log", LogLevel::kWarn);
  int code = 0;
  real.run([&](Env& env) {
    storage::InspectOptions options;
    options.now_ms = to_unix_ms(env.clock.wall_now());
    const storage::BrokerStorageConfig defaults;
    options.retention_check_interval_ms = defaults.log_retention_check_interval_ms;
    options.broker_defaults = defaults.topic_defaults;
    Result<std::vector<storage::PartitionReport>> reports = storage::inspect_path(env, dir, options);
    if (!reports.ok()) {
      std::fprintf(stderr, "sluice log inspect: %s: %s\n", dir.c_str(), reports.status().to_string().c_str());
      code = 1;
      return;
    }
    if (json) {
      std::fputs(storage::format_reports_json(*reports).c_str(), stdout);
      return;
    }
    if (reports->empty()) std::printf("%s: no partitions\n", dir.c_str());
    for (const storage::PartitionReport& report : *reports) std::fputs(storage::format_report(report).c_str(), stdout);
  });
  return code;
}

int run_log_repair(const std::string& dir) {
  RealEnv real("log", LogLevel::kInfo);
  int code = 0;
  real.run([&](Env& env) {
    Result<std::string> cut = storage::PartitionLog::repair(env, dir);
    if (!cut.ok()) {
      std::fprintf(stderr, "sluice log repair: %s: %s\n", dir.c_str(), cut.status().to_string().c_str());
      code = 1;
      return;
    }
    std::printf("%s\n", cut->empty() ? "nothing to repair: every segment verifies" : cut->c_str());
  });
  return code;
}

}  // namespace sluice
