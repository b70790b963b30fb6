// Kafka's topic name rules (org.apache.kafka.common.internals.Topic.validate).
#pragma once

#include <string_view>

#include "core/base/status.h"
#include "core/cluster/metadata/topic_identity.h"

namespace sluice::kafka {

inline constexpr size_t kMaxTopicNameLength = cluster::metadata::kMaxTopicNameLength;

// OK, or INVALID_TOPIC_EXCEPTION (17) saying which rule the name breaks: empty, "." or "..", longer than 249,
// or a character outside [a-zA-Z0-9._-].
Status validate_topic_name(std::string_view name);

// Topics whose names start with "__" are internal (__consumer_offsets).
bool is_internal_topic(std::string_view name);

}  // namespace sluice::kafka
