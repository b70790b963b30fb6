// <data_dir>/cleaner-offset-checkpoint: where each compacted partition's dirty section starts (the cleaner's
// progress), so a restart does not clean the whole log again. Kafka's file name and text layout: a version line
// (0), a count line, then one "topic partition offset" line per partition. Written atomically after each pass.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/base/result.h"
#include "core/env/file_system.h"
#include "core/storage/topic_partition.h"

namespace sluice::storage {

using CleanerCheckpoints = std::map<TopicPartition, int64_t>;

inline constexpr const char* kCleanerCheckpointFile = "cleaner-offset-checkpoint";

std::string encode_cleaner_checkpoints(const CleanerCheckpoints& checkpoints);
// kCorruption naming the line for a malformed file.
Result<CleanerCheckpoints> decode_cleaner_checkpoints(std::string_view text);

// An absent file is an empty map.
Result<CleanerCheckpoints> read_cleaner_checkpoints(FileSystem& fs, const std::string& data_dir);
Status write_cleaner_checkpoints(FileSystem& fs, const std::string& data_dir, const CleanerCheckpoints& checkpoints);

}  // namespace sluice::storage
