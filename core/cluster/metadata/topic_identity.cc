#include "core/cluster/metadata/topic_identity.h"

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"

namespace sluice::cluster::metadata {
namespace {

TopicId random_v4_id(Random& random) {
  TopicId id;
  for (size_t i = 0; i < id.bytes.size(); i += 8) {
    const uint64_t word = random.next_u64();
    for (size_t j = 0; j < 8; ++j) id.bytes[i + j] = static_cast<uint8_t>(word >> (8 * j));
  }
  id.bytes[6] = static_cast<uint8_t>((id.bytes[6] & 0x0f) | 0x40);  // version 4
  id.bytes[8] = static_cast<uint8_t>((id.bytes[8] & 0x3f) | 0x80);  // IETF variant
  return id;
}

char unify_collision_char(char c) { return c == '.' ? '_' : c; }

}  // namespace

TopicId new_topic_id(Random& random) {
  // The version bits make zero and one impossible, and a leading '-' (the first 6 bits all ones) comes once in 64
  // draws: the loop ends at once in practice, and after a bounded number of rounds in any world that is not
  // broken.
  for (int round = 0; round < 1000; ++round) {
    const TopicId id = random_v4_id(random);
    if (!is_reserved_topic_id(id) && !id.to_string().starts_with('-')) return id;
  }
  SLUICE_ASSERT_MSG(false, "1000 random topic ids in a row were unusable: the Random is broken");
  SLUICE_UNREACHABLE();
}

bool is_reserved_topic_id(const TopicId& id) {
  TopicId one;
  one.bytes.back() = 1;
  return id.is_zero() || id == one;
}

Status check_topic_name(std::string_view name) {
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

bool topic_names_collide(std::string_view a, std::string_view b) {
  if (a == b || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (unify_collision_char(a[i]) != unify_collision_char(b[i])) return false;
  }
  return true;
}

}  // namespace sluice::cluster::metadata
