// A partition's name: topic plus partition number, and its directory name under the data directory.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::storage {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
  std::string dir_name() const { return topic + "-" + std::to_string(partition); }
  std::string to_string() const { return dir_name(); }
};

// "orders-3" → {orders, 3}; nullopt when the name does not end in "-<partition>".
std::optional<TopicPartition> parse_partition_dir(std::string_view name);

}  // namespace sluice::storage
