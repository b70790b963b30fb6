// What DescribeConfigs (configs.cc) and AlterConfigs / IncrementalAlterConfigs (configs_alter.cc) share: how a
// broker resource is named. Kafka's rule (ConfigHelper, ConfigAdminManager): the empty name is the cluster-wide
// default, otherwise the name must be this node's id in decimal.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace sluice::kafka {

// OK for "" and for the node's id; INVALID_REQUEST with Kafka's message otherwise.
Status check_broker_resource_name(const std::string& name, int32_t node_id);

}  // namespace sluice::kafka
