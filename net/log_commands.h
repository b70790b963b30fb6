// `sluice log inspect DIR [--json]` and `sluice log repair DIR`: offline tools over a data or partition directory,
// run on the real Env. inspect changes nothing; repair performs the truncation a refused load points to.
#pragma once

#include <string>

namespace sluice {

int run_log_inspect(const std::string& dir, bool json);
int run_log_repair(const std::string& dir);

}  // namespace sluice
