// The names a crash-safe topic change gives to what it leaves in the data directory (log_manager.h: "Topic changes
// are crash-safe"). None of them parses as <topic>-<partition>, so no loader takes one for a partition.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/env/file_system.h"
#include "core/storage/topic_partition.h"

namespace sluice::storage {

// A partition directory being made: <topic>-<partition>.<token>-creating.
inline constexpr std::string_view kStagedSuffix = "-creating";
// A deleted partition directory whose files are still to remove: <topic>-<partition>.<topic id|none>.<token>-delete,
// with "x" for <topic>-<partition> when the whole would pass a file name's 255 bytes (the id identifies the topic;
// a partition without one keeps "none-" and a 64-bit hash of its topic's name instead, topic_name_hash).
inline constexpr std::string_view kRetiredSuffix = "-delete";
// An intent to create partitions of one topic: <token>.partitions-creating, a file (see CreationIntent).
inline constexpr std::string_view kIntentSuffix = ".partitions-creating";

std::string retired_dir_name(const TopicPartition& tp, const std::string& topic_id, const std::string& token);

struct RetiredDir {
  std::optional<TopicPartition> tp;  // none when the name was too long to keep
  std::string topic_id;              // "" when the partition had none
  // No id and no name kept: the topic's name hash, which still tells its other partitions at the next open.
  std::optional<uint64_t> topic_name_hash;
};
uint64_t topic_name_hash(std::string_view topic);  // FNV-1a, 64 bits: the same in every build and process
std::optional<RetiredDir> parse_retired_dir_name(std::string_view name);

// What an intent file holds: partitions [first, first + count) of `topic`, with `topic_id`.
struct CreationIntent {
  std::string topic;
  int32_t first = 0;
  int32_t count = 0;
  std::string topic_id;

  std::string encode() const;
  static std::optional<CreationIntent> decode(std::string_view text);
};

// Reads a small file whole (a partition's config and metadata, an intent); kCorruption past 1 MiB or on a short read.
Result<std::string> read_small_file(FileSystem& fs, const std::string& path);

}  // namespace sluice::storage
