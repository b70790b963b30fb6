// LogManager's crash-safe topic changes (log_manager.h: "Topic changes are crash-safe"): partitions created all or
// none, deleted partitions retired in one rename and removed in the background, and what a crash interrupted
// undone or finished at the next open.
#include "core/storage/log_directories.h"

#include <fmt/format.h>

#include <charconv>

#include "core/base/assert.h"
#include "core/base/fnv1a.h"
#include "core/storage/log_manager.h"

namespace sluice::storage {
namespace {

constexpr std::string_view kNoTopicId = "none";
constexpr std::string_view kUnkeptName = "x";  // a retired directory whose partition name did not fit
constexpr size_t kMaxFileNameBytes = 255;

std::optional<int32_t> parse_int32(std::string_view digits) {
  int32_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

// The value of `key: value` on its own line, or nullopt.
std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.size() > key.size() + 1 && line.starts_with(key) && line.substr(key.size(), 2) == ": ") {
      return line.substr(key.size() + 2);
    }
    at = end + 1;
  }
  return std::nullopt;
}

// Removes a directory and the files in it (partition directories have no subdirectories).
Status remove_tree(FileSystem& fs, const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> files, fs.list(dir));
  for (const DirEntry& file : files) {
    SLUICE_ASSERT(!file.is_directory);
    SLUICE_TRY(fs.remove(join_path(dir, file.name)));
  }
  return fs.remove_dir(dir);
}

}  // namespace

uint64_t topic_name_hash(std::string_view topic) { return fnv1a64(topic); }

std::string retired_dir_name(const TopicPartition& tp, const std::string& topic_id, const std::string& token) {
  SLUICE_ASSERT(!token.empty());
  SLUICE_ASSERT(topic_id.find('.') == std::string::npos);
  const auto tail = [&](std::string_view id) { return fmt::format(".{}.{}{}", id, token, kRetiredSuffix); };
  const std::string name = tp.dir_name();
  const std::string kept = tail(topic_id.empty() ? kNoTopicId : topic_id);
  if (name.size() + kept.size() <= kMaxFileNameBytes) return name + kept;
  // The name does not fit: the id tells the topic, or without one the name's hash.
  if (!topic_id.empty()) return std::string(kUnkeptName) + kept;
  return std::string(kUnkeptName) + tail(fmt::format("{}-{:016x}", kNoTopicId, topic_name_hash(tp.topic)));
}

std::optional<RetiredDir> parse_retired_dir_name(std::string_view name) {
  if (!name.ends_with(kRetiredSuffix)) return std::nullopt;
  std::string_view rest = name.substr(0, name.size() - kRetiredSuffix.size());
  const size_t token_dot = rest.rfind('.');
  if (token_dot == std::string_view::npos) return std::nullopt;
  rest = rest.substr(0, token_dot);
  const size_t id_dot = rest.rfind('.');
  if (id_dot == std::string_view::npos) return std::nullopt;
  const std::string_view id = rest.substr(id_dot + 1);
  const std::string_view partition = rest.substr(0, id_dot);
  if (id.empty()) return std::nullopt;
  std::optional<TopicPartition> tp = partition == kUnkeptName ? std::nullopt : parse_partition_dir(partition);
  if (!tp && partition != kUnkeptName) return std::nullopt;
  const std::string_view hashed = id.starts_with(kNoTopicId) ? id.substr(kNoTopicId.size()) : std::string_view();
  if (!tp && hashed.size() == 17 && hashed.front() == '-') {
    uint64_t hash = 0;
    auto [end, ec] = std::from_chars(hashed.data() + 1, hashed.data() + hashed.size(), hash, 16);
    if (ec == std::errc() && end == hashed.data() + hashed.size()) return RetiredDir{std::nullopt, "", hash};
  }
  return RetiredDir{std::move(tp), id == kNoTopicId ? std::string() : std::string(id), std::nullopt};
}

std::string CreationIntent::encode() const {
  return "version: 0\ntopic: " + topic + "\nfirst_partition: " + std::to_string(first) +
         "\npartitions: " + std::to_string(count) + "\ntopic_id: " + topic_id + "\n";
}

std::optional<CreationIntent> CreationIntent::decode(std::string_view text) {
  const std::optional<std::string_view> topic = field(text, "topic");
  const std::optional<std::string_view> first = field(text, "first_partition");
  const std::optional<std::string_view> count = field(text, "partitions");
  if (!topic || topic->empty() || !first || !count) return std::nullopt;
  const int32_t first_number = parse_int32(*first).value_or(-1);
  const int32_t count_number = parse_int32(*count).value_or(0);
  if (first_number < 0 || count_number < 1) return std::nullopt;
  const std::optional<std::string_view> id = field(text, "topic_id");
  return CreationIntent{std::string(*topic), first_number, count_number, id ? std::string(*id) : std::string()};
}

std::string LogManager::new_token() {
  static constexpr char kHex[] = "0123456789abcdef";
  uint64_t bits = token_random_.next_u64();
  std::string token(16, '0');
  for (char& c : token) {
    c = kHex[bits & 0xf];
    bits >>= 4;
  }
  return token;
}

Result<std::vector<PartitionLog*>> LogManager::create_partitions(const std::string& topic, int32_t first,
                                                                 int32_t count, const TopicConfig& config,
                                                                 const std::string& topic_id) {
  SLUICE_ASSERT(first >= 0);
  SLUICE_ASSERT(count >= 1);
  if (closed_) return closed("log manager is closed");
  for (int32_t p = first; p < first + count; ++p) {
    const TopicPartition tp{topic, p};
    if (entries_.count(tp) || offline_.count(tp)) return already_exists("partition " + tp.to_string() + " exists");
  }
  // The intent is durable before the first directory appears, and goes only once the last one is in place.
  const std::string intent = join_path(data_dir_, new_token() + std::string(kIntentSuffix));
  SLUICE_TRY(write_file_atomically(env_.fs, intent, intent + ".tmp",
                                   as_bytes(CreationIntent{topic, first, count, topic_id}.encode())));
  std::vector<PartitionLog*> made;
  Status failed;
  for (int32_t p = first; p < first + count && failed.ok(); ++p) {
    Result<PartitionLog*> created = create_partition({topic, p}, config, topic_id);
    if (created.ok()) {
      made.push_back(*created);
    } else {
      failed = created.status();
    }
  }
  if (failed.ok()) {
    failed = env_.fs.remove(intent);
    if (failed.ok()) failed = env_.fs.sync_dir(data_dir_);
    if (failed.ok()) return made;
  }
  SLUICE_PROBE("log_manager.partition_creation_undone");
  // Undone now; should an undo fail, the intent (still there, or its removal not known durable) undoes it at the next
  // open: either way the caller's error holds.
  bool undone = true;
  for (size_t i = 0; i < made.size(); ++i) {
    const Status removed = delete_partition({topic, first + static_cast<int32_t>(i)});
    if (!removed.ok()) {
      undone = false;
      env_.log.warn("{}: undoing the creation of partition {}: {}", topic, first + i, removed.to_string());
    }
  }
  if (undone) {
    if (Status s = env_.fs.remove(intent); !s.ok() && s.code() != Code::kNotFound) {
      env_.log.warn("{}: removing the creation intent: {}", topic, s.to_string());
    }
  }
  return failed;
}

Status LogManager::sweep_directories_before_load(std::vector<std::string>& intents) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env_.fs.list(data_dir_));
  bool removed_any = false;
  for (const DirEntry& entry : entries) {
    if (entry.is_directory && entry.name.ends_with(kStagedSuffix)) {
      SLUICE_PROBE("log_manager.staged_partition_removed");
      env_.log.warn("{}: removing {}, a partition directory a crash left half made", data_dir_, entry.name);
      SLUICE_TRY(remove_tree(env_.fs, join_path(data_dir_, entry.name)));
      removed_any = true;
    } else if (entry.is_directory && parse_retired_dir_name(entry.name)) {
      retired_dirs_.push_back(entry.name);
    } else if (!entry.is_directory && entry.name.ends_with(kIntentSuffix)) {
      intents.push_back(entry.name);
    } else if (!entry.is_directory && entry.name.ends_with(std::string(kIntentSuffix) + ".tmp")) {
      SLUICE_TRY(env_.fs.remove(join_path(data_dir_, entry.name)));  // an intent never written: nothing began
      removed_any = true;
    }
  }
  if (removed_any) SLUICE_TRY(env_.fs.sync_dir(data_dir_));
  return Status();
}

Status LogManager::undo_interrupted_creation(const std::string& intent_name) {
  const std::string path = join_path(data_dir_, intent_name);
  Result<std::string> text = read_small_file(env_.fs, path);
  if (!text.ok()) return text.status();
  const std::optional<CreationIntent> intent = CreationIntent::decode(*text);
  if (!intent) return corruption(path + ": not a partition creation intent");
  SLUICE_PROBE("log_manager.interrupted_creation_undone");
  for (int32_t p = intent->first; p < intent->first + intent->count; ++p) {
    const TopicPartition tp{intent->topic, p};
    auto it = entries_.find(tp);
    auto offline = offline_.find(tp);
    const bool made = (it != entries_.end() && it->second.topic_id == intent->topic_id) ||
                      (offline != offline_.end() && offline->second.topic_id == intent->topic_id);
    if (!made) continue;
    env_.log.warn("{}: removing partition {}: a crash interrupted its topic's creation", data_dir_, tp.to_string());
    SLUICE_TRY(delete_partition(tp));
  }
  SLUICE_TRY(env_.fs.remove(path));
  return env_.fs.sync_dir(data_dir_);
}

Status LogManager::finish_interrupted_changes(const std::vector<std::string>& intents) {
  for (const std::string& intent : intents) SLUICE_TRY(undo_interrupted_creation(intent));
  // A deletion retires its topic's partitions one by one; once one is retired the deletion has begun, and the
  // topic's other partitions with the same id go too.
  std::vector<RetiredDir> retired;
  for (const std::string& name : retired_dirs_) retired.push_back(*parse_retired_dir_name(name));
  std::vector<TopicPartition> doomed;
  const auto consider = [&](const TopicPartition& tp, const std::string& topic_id) {
    for (const RetiredDir& dir : retired) {
      // The id names the topic; a partition made without one is known by its topic's name, or that name's hash.
      const bool same_name = dir.tp ? dir.tp->topic == tp.topic
                                    : dir.topic_name_hash && *dir.topic_name_hash == topic_name_hash(tp.topic);
      const bool same_topic = dir.topic_id.empty() ? topic_id.empty() && same_name : dir.topic_id == topic_id;
      if (same_topic) {
        doomed.push_back(tp);
        return;
      }
    }
  };
  for (const auto& [tp, entry] : entries_) consider(tp, entry.topic_id);
  for (const auto& [tp, offline] : offline_) consider(tp, offline.topic_id);
  for (const TopicPartition& tp : doomed) {
    SLUICE_PROBE("log_manager.interrupted_deletion_finished");
    env_.log.warn("{}: deleting partition {}: a crash interrupted its topic's deletion", data_dir_, tp.to_string());
    SLUICE_TRY(delete_partition(tp));
  }
  return Status();
}

size_t LogManager::remove_retired_dirs() {
  // Taken out first: a deletion while this suspends on the disk adds to the member.
  std::vector<std::string> batch;
  batch.swap(retired_dirs_);
  bool removed_any = false;
  for (const std::string& name : batch) {
    const Status removed = remove_tree(env_.fs, join_path(data_dir_, name));
    if (removed.ok() || removed.code() == Code::kNotFound) {
      removed_any = true;
    } else {
      env_.log.warn("{}: removing {}: {} (tried again later)", data_dir_, name, removed.to_string());
      retired_dirs_.push_back(name);
    }
  }
  if (removed_any) {
    if (Status s = env_.fs.sync_dir(data_dir_); !s.ok()) env_.log.warn("{}: {}", data_dir_, s.to_string());
  }
  return retired_dirs_.size();
}

}  // namespace sluice::storage
