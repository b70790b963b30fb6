#include "core/kafka/topic_names.h"

namespace sluice::kafka {

// One rule set for the handlers and the cluster metadata (which every node applies identically).
Status validate_topic_name(std::string_view name) { return cluster::metadata::check_topic_name(name); }

bool is_internal_topic(std::string_view name) { return name.starts_with("__"); }

}  // namespace sluice::kafka
