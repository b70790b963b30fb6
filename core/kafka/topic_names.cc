#include "core/kafka/topic_names.h"

#include <fmt/format.h>

#include "core/protocol/error_codes.h"

namespace sluice::kafka {

Status validate_topic_name(std::string_view name) {
  auto invalid = [name](std::string_view why) {
    return kafka_error(ErrorCode::kInvalidTopicException, fmt::format("topic name \"{}\" is illegal: {}", name, why));
  };
  if (name.empty()) return invalid("it is empty");
  if (name == "." || name == "..") return invalid("it cannot be \".\" or \"..\"");
  if (name.size() > kMaxTopicNameLength) {
    return invalid(fmt::format("it is {} characters long, and the limit is {}", name.size(), kMaxTopicNameLength));
  }
  for (char c : name) {
    const bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '_' || c == '-';
    if (!legal) return invalid("it contains a character other than ASCII alphanumerics, '.', '_' and '-'");
  }
  return Status();
}

bool is_internal_topic(std::string_view name) { return name.starts_with("__"); }

}  // namespace sluice::kafka
