#include "core/kafka/admin_limits.h"

#include <fmt/format.h>

#include "core/group/records.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {

Status excessive_batch() {
  return kafka_error(ErrorCode::kPolicyViolation, "Unable to perform excessively large batch operation.");
}

Status check_broker_partitions(int32_t node_id, int64_t held, int64_t added, int32_t limit) {
  if (held + added <= limit) return Status();
  return kafka_error(ErrorCode::kPolicyViolation,
                     fmt::format("Broker {} holds {} partition replica(s); {} more would pass its limit of {} "
                                 "(sluice.max.broker.partitions).",
                                 node_id, held, added, limit));
}

bool is_coordinator_topic(std::string_view name) { return name == group::kOffsetsTopic; }

Status internal_topic_creation(std::string_view name) {
  return kafka_error(ErrorCode::kInvalidRequest,
                     fmt::format("Creation of internal topic {} is prohibited: the group coordinator creates it, with "
                                 "its own settings, when a group first needs it.",
                                 name));
}

Status internal_topic_deletion(std::string_view name) {
  return kafka_error(ErrorCode::kInvalidRequest,
                     fmt::format("Deletion of internal topic {} is prohibited: it holds every consumer group's "
                                 "committed offsets.",
                                 name));
}

Status check_internal_topic_config(std::string_view name, const storage::TopicConfig& config) {
  if (!is_coordinator_topic(name) || (config.cleanup_compact && !config.cleanup_delete)) return Status();
  return kafka_error(ErrorCode::kInvalidConfig,
                     fmt::format("Invalid value {} for configuration cleanup.policy: internal topic {} must stay "
                                 "compact (deletion would drop committed offsets by age or size)",
                                 config.value_of("cleanup.policy").value_or("\"\""), name));
}

}  // namespace sluice::kafka
