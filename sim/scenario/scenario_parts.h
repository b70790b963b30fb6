// The pieces of a scenario file, parsed and printed one table at a time (scenario_parts.cc), for
// scenario_file.cc.
#pragma once

#include <set>
#include <string>

#include "sim/faults/fault.h"
#include "sim/scenario/toml_reader.h"
#include "sim/workload/workload.h"

namespace sluice::sim {

Result<WorkloadSpec> parse_workload(TomlReader& table, size_t index);
Status validate_workload(const WorkloadSpec& spec, const std::set<std::string>& topics);
Result<Fault> parse_fault(TomlReader& table);
Result<FaultRate> parse_fault_rate(TomlReader& table);

std::string workload_to_toml(const WorkloadSpec& spec);
std::string admin_actions_to_toml(const std::vector<AdminAction>& actions);
std::string fault_rate_to_toml(const FaultRate& rate);

}  // namespace sluice::sim
