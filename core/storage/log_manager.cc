#include "core/storage/log_manager.h"

#include <charconv>

#include "core/base/assert.h"
#include "core/storage/agreeing_reads.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_config.h"
#include "core/storage/log_directories.h"

namespace sluice::storage {
namespace {

constexpr const char* kConfigFile = "topic.properties";
constexpr uint64_t kTokenStream = 0x746f6b656e73;  // "tokens"
constexpr const char* kMetadataFile = "partition.metadata";  // Kafka's: "version: 0" and "topic_id: <uuid>"

std::string encode_partition_metadata(const std::string& topic_id) {
  return "version: 0\ntopic_id: " + topic_id + "\n";
}

std::string decode_topic_id(std::string_view text) {
  constexpr std::string_view kKey = "topic_id: ";
  const size_t at = text.find(kKey);
  if (at == std::string_view::npos) return "";
  std::string_view rest = text.substr(at + kKey.size());
  return std::string(rest.substr(0, rest.find('\n')));
}

}  // namespace

Result<std::string> read_small_file(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(uint64_t size, file->size());
  if (size > (1u << 20)) return corruption(path + ": " + std::to_string(size) + " bytes is too large");
  Result<Bytes> bytes = read_whole_file(*file);  // believed once two reads agree
  if (!bytes.ok()) return Status(bytes.status().code(), path + ": " + bytes.status().message());
  if (bytes->size() != size) return corruption(path + ": short read");
  return std::string(bytes->begin(), bytes->end());
}

std::optional<TopicPartition> parse_partition_dir(std::string_view name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 >= name.size()) return std::nullopt;
  int32_t partition = 0;
  const std::string_view digits = name.substr(dash + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), partition);
  if (ec != std::errc() || end != digits.data() + digits.size() || partition < 0) return std::nullopt;
  return TopicPartition{std::string(name.substr(0, dash)), partition};
}

LogManager::LogManager(Env env, std::string data_dir, BrokerStorageConfig config, EffectSink* effects)
    : env_(env),
      data_dir_(std::move(data_dir)),
      config_(std::move(config)),
      effects_(effects),
      stop_(env.scheduler),
      maintenance_(env.scheduler),
      file_cache_(std::make_shared<SegmentFileCache>(env.fs, static_cast<size_t>(config_.max_open_segment_files))),
      token_random_(env.random.fork(kTokenStream)) {}

LogManager::~LogManager() {
  // A node kill unwinds the duty fibers (newer) before this object; otherwise close() stopped them.
  SLUICE_ASSERT(!started_ || retention_fiber_.done());
  SLUICE_ASSERT(!cleaner_fiber_ || cleaner_fiber_.done());
}

Result<std::unique_ptr<LogManager>> LogManager::open(Env env, std::string data_dir, BrokerStorageConfig config,
                                                     EffectSink* effects) {
  SLUICE_TRY(env.fs.create_dirs(data_dir));
  SLUICE_TRY(env.fs.sync_dir(parent_dir(data_dir)));
  std::unique_ptr<LogManager> manager(new LogManager(env, std::move(data_dir), std::move(config), effects));
  std::vector<std::string> intents;
  SLUICE_TRY(manager->sweep_directories_before_load(intents));
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env.fs.list(manager->data_dir_));
  for (const DirEntry& entry : entries) {
    if (!entry.is_directory || parse_retired_dir_name(entry.name)) continue;
    if (!parse_partition_dir(entry.name)) {
      env.log.warn("{}: ignoring directory {} (not <topic>-<partition>)", manager->data_dir_, entry.name);
      continue;
    }
    manager->load_partition(entry.name);
  }
  SLUICE_TRY(manager->finish_interrupted_changes(intents));
  Result<CleanerCheckpoints> checkpoints = read_cleaner_checkpoints(env.fs, manager->data_dir_);
  if (checkpoints.ok()) {
    manager->cleaner_checkpoints_ = std::move(*checkpoints);
  } else {  // losing the cleaner's progress only costs a repeated pass: compaction is idempotent
    env.log.warn("{}: ignoring the cleaner checkpoint: {}", manager->data_dir_, checkpoints.status().to_string());
  }
  if (manager->offline_.empty()) {
    env.log.info("{}: loaded {} partitions", manager->data_dir_, manager->entries_.size());
  } else {
    env.log.error("{}: loaded {} partitions; {} did not load and are offline", manager->data_dir_,
                  manager->entries_.size(), manager->offline_.size());
  }
  return manager;
}

// One partition that does not load stays offline with its reason; the broker serves the rest.
void LogManager::load_partition(const std::string& name) {
  const std::optional<TopicPartition> tp = parse_partition_dir(name);
  SLUICE_ASSERT(tp.has_value());
  const std::string dir = join_path(data_dir_, name);
  OfflinePartition known{config_.topic_defaults, "", Status()};
  const Status loaded = [&]() -> Status {
    const std::string config_path = join_path(dir, kConfigFile);
    SLUICE_ASSIGN_OR_RETURN(bool has_config, env_.fs.exists(config_path));
    if (has_config) {
      SLUICE_ASSIGN_OR_RETURN(std::string text, read_small_file(env_.fs, config_path));
      SLUICE_ASSIGN_OR_RETURN(known.config, TopicConfig::from_properties(text, config_.topic_defaults));
    }
    const std::string metadata_path = join_path(dir, kMetadataFile);
    SLUICE_ASSIGN_OR_RETURN(bool has_metadata, env_.fs.exists(metadata_path));
    if (has_metadata) {
      SLUICE_ASSIGN_OR_RETURN(std::string text, read_small_file(env_.fs, metadata_path));
      known.topic_id = decode_topic_id(text);
    }
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PartitionLog> log, open_partition_log(*tp, known.config));
    report_recovery(*tp, *log);
    entries_.emplace(*tp, Entry{known.config, std::move(log), known.topic_id});
    return Status();
  }();
  if (loaded.ok()) return;
  SLUICE_PROBE("log_manager.partition_offline_at_load");
  known.reason = offline_reason(*tp, loaded);
  offline_.emplace(*tp, std::move(known));
}

Result<std::unique_ptr<PartitionLog>> LogManager::open_partition_log(const TopicPartition& tp,
                                                                     const TopicConfig& config) {
  // Damage seen once may be a bad copy of good bytes (a header walk that rebuilds the leader epochs or the
  // producer state reads each header once): the load is tried again, as a restart would, before it is believed.
  // A damaged scan settles the same way each time, so a refusal costs only the repeats.
  return read_again_on_damage(
      3, [&] { return PartitionLog::open(env_, join_path(data_dir_, tp.dir_name()), settings_for(tp, config)); },
      [&](const Status& damage) {
        SLUICE_PROBE("log_manager.damaged_load_tried_again");
        env_.log.warn("{}: loading {} again: {}", data_dir_, tp.to_string(), damage.message());
      });
}

Status LogManager::offline_reason(const TopicPartition& tp, const Status& loaded) const {
  env_.log.error("{}: partition {} is offline, it did not load: {}", data_dir_, tp.to_string(), loaded.to_string());
  return Status(loaded.code() == Code::kOk ? Code::kIoError : loaded.code(),
                tp.to_string() + " is offline: it did not load: " + loaded.message(),
                static_cast<int16_t>(ErrorCode::kKafkaStorageError));
}

// A load refused for lack of space (recovery writes: a rebuilt index, partition.state, the epoch checkpoint) is no
// verdict on the data: tried again every kLoadAgainInterval, the partition comes back once space does, instead of
// staying offline until a restart. Damage and I/O errors stay offline (Kafka's failed log directory).
std::vector<TopicPartition> LogManager::load_offline_again() {
  std::vector<TopicPartition> loaded;
  for (const TopicPartition& tp : offline_partitions()) {
    if (closed_) break;
    LockGuard lock(maintenance_);  // a deletion of the partition waits for the attempt
    auto offline = offline_.find(tp);
    if (offline == offline_.end() || offline->second.reason.code() != Code::kNoSpace) continue;
    SLUICE_PROBE("log_manager.offline_load_tried_again");
    Result<std::unique_ptr<PartitionLog>> log = open_partition_log(tp, offline->second.config);
    offline = offline_.find(tp);  // only a deletion removes it, and the lock holds that out
    SLUICE_ASSERT(offline != offline_.end());
    if (!log.ok()) {
      offline->second.reason = offline_reason(tp, log.status());
      continue;
    }
    SLUICE_PROBE("log_manager.offline_partition_loaded_again");
    (*log)->update_settings(settings_for(tp, offline->second.config));  // an alter_config meanwhile
    report_recovery(tp, **log);
    entries_.emplace(tp, Entry{offline->second.config, std::move(*log), offline->second.topic_id});
    offline_.erase(offline);
    env_.log.info("{}: partition {} loaded: space returned", data_dir_, tp.to_string());
    if (on_loaded_again_) on_loaded_again_(tp);
    loaded.push_back(tp);
  }
  return loaded;
}

const LogManager::OfflinePartition* LogManager::offline_partition(const TopicPartition& tp) const {
  auto it = offline_.find(tp);
  return it == offline_.end() ? nullptr : &it->second;
}

std::vector<TopicPartition> LogManager::offline_partitions() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, offline] : offline_) out.push_back(tp);
  return out;
}

LogSettings LogManager::settings_for(const TopicPartition& tp, const TopicConfig& config) const {
  LogSettings settings = log_settings_for(config);
  settings.mutations = config_.mutations;
  settings.file_cache = file_cache_;
  if (config_.replicated_logs && !config_.local_topics.contains(tp.topic)) {
    settings.high_watermark_follows_log_end = false;
    settings.persisted = false;
  }
  return settings;
}

int64_t LogManager::wall_ms() const { return to_unix_ms(env_.clock.wall_now()); }

void LogManager::report(const LogEffect& effect) const {
  if (effects_ != nullptr) effects_->record(effect);
}

// What recovery cut after an unclean stop: a torn tail, or the segments after a torn rolled one. The end before the
// cut is not known (a torn batch's offsets cannot be trusted).
void LogManager::report_recovery(const TopicPartition& tp, const PartitionLog& log) const {
  const LoadStats& stats = log.load_stats();
  if (stats.torn_bytes_truncated == 0 && stats.segments_deleted_after_torn_tail == 0) return;
  LogEffect effect;
  effect.kind = LogEffect::Kind::kTruncatedOnRecovery;
  effect.tp = tp;
  effect.from = log.log_end_offset();
  effect.now_ms = wall_ms();
  report(effect);
}

LogStartMoved LogManager::reporter(const TopicPartition& tp, LogEffect::Reason reason, int64_t now_ms) const {
  if (effects_ == nullptr) return {};
  return [this, tp, reason, now_ms](int64_t from, int64_t to) {
    LogEffect effect;
    effect.kind = LogEffect::Kind::kLogStartAdvanced;
    effect.reason = reason;
    effect.tp = tp;
    effect.from = from;
    effect.to = to;
    effect.now_ms = now_ms;
    report(effect);
  };
}

Status LogManager::write_config(const std::string& dir, const TopicConfig& config) {
  const std::string path = join_path(dir, kConfigFile);
  return write_file_atomically(env_.fs, path, path + ".tmp", as_bytes(config.to_properties()));
}

Result<PartitionLog*> LogManager::create_partition(const TopicPartition& tp, const TopicConfig& config,
                                                   const std::string& topic_id) {
  if (closed_) return closed("log manager is closed");
  if (entries_.count(tp)) return already_exists("partition " + tp.to_string() + " exists");
  if (const OfflinePartition* offline = offline_partition(tp)) return offline->reason;
  if (!parse_partition_dir(tp.dir_name())) return invalid_argument("bad partition name " + tp.to_string());
  const std::string dir = join_path(data_dir_, tp.dir_name());
  // Made whole under a staging name, then renamed into place: a crash never leaves a partition directory without
  // its config (it would load with the broker's defaults). The next open removes a staging directory left behind.
  const std::string staged = dir + "." + new_token() + std::string(kStagedSuffix);
  SLUICE_TRY(env_.fs.create_dirs(staged));
  SLUICE_TRY(write_config(staged, config));
  if (!topic_id.empty()) {
    const std::string path = join_path(staged, kMetadataFile);
    SLUICE_TRY(write_file_atomically(env_.fs, path, path + ".tmp", as_bytes(encode_partition_metadata(topic_id))));
  }
  SLUICE_TRY(env_.fs.sync_dir(staged));
  SLUICE_TRY(env_.fs.rename(staged, dir));
  SLUICE_TRY(env_.fs.sync_dir(data_dir_));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PartitionLog> log, PartitionLog::open(env_, dir, settings_for(tp, config)));
  PartitionLog* raw = log.get();
  entries_.emplace(tp, Entry{config, std::move(log), topic_id});
  LogEffect created;
  created.kind = LogEffect::Kind::kPartitionCreated;
  created.tp = tp;
  created.now_ms = wall_ms();
  report(created);
  env_.log.info("created partition {} ({})", tp.to_string(),
                config.durability == Durability::kPersisted ? "persisted" : "replicated");
  return raw;
}

PartitionLog* LogManager::find(const TopicPartition& tp) const {
  auto it = entries_.find(tp);
  return it == entries_.end() ? nullptr : it->second.log.get();
}

const TopicConfig* LogManager::topic_config(const TopicPartition& tp) const {
  auto it = entries_.find(tp);
  return it == entries_.end() ? nullptr : &it->second.config;
}

std::shared_ptr<PartitionLog> LogManager::find_shared(const TopicPartition& tp) const {
  auto it = entries_.find(tp);
  return it == entries_.end() ? nullptr : it->second.log;
}

std::string LogManager::topic_id(const TopicPartition& tp) const {
  auto it = entries_.find(tp);
  return it == entries_.end() ? "" : it->second.topic_id;
}

Status LogManager::delete_partition(const TopicPartition& tp) {
  if (closed_) return closed("log manager is closed");
  LockGuard lock(maintenance_);  // no retention or cleaner pass is using the log meanwhile
  if (offline_.count(tp) != 0) return delete_offline_partition(tp);
  auto it = entries_.find(tp);
  if (it == entries_.end()) return not_found("partition " + tp.to_string());
  std::shared_ptr<PartitionLog> log = std::move(it->second.log);
  const std::string topic_id = it->second.topic_id;
  entries_.erase(it);
  // Gone for every caller from here on; reported before the close suspends, so before DeleteTopics answers.
  LogEffect deleted;
  deleted.kind = LogEffect::Kind::kPartitionDeleted;
  deleted.tp = tp;
  deleted.from = log->log_start_offset();
  deleted.to = log->log_end_offset();
  deleted.now_ms = wall_ms();
  report(deleted);
  cleaner_checkpoints_.erase(tp);
  uncleanable_.erase(tp);
  Status closed_log = log->close();
  if (!closed_log.ok()) env_.log.warn("{}: close before delete: {}", tp.to_string(), closed_log.to_string());
  log.reset();
  return retire_partition_dir(tp, topic_id);
}

// Nothing was loaded: only its directory goes (with the damage, or the files the failing disk held).
Status LogManager::delete_offline_partition(const TopicPartition& tp) {
  auto offline = offline_.find(tp);
  SLUICE_ASSERT(offline != offline_.end());
  const std::string topic_id = offline->second.topic_id;
  offline_.erase(offline);
  LogEffect deleted;
  deleted.kind = LogEffect::Kind::kPartitionDeleted;
  deleted.tp = tp;
  deleted.now_ms = wall_ms();
  report(deleted);
  cleaner_checkpoints_.erase(tp);
  uncleanable_.erase(tp);
  return retire_partition_dir(tp, topic_id);
}

Status LogManager::retire_partition_dir(const TopicPartition& tp, const std::string& topic_id) {
  // One durable step: from here the partition is gone at every later open; its files go in the background.
  const std::string retired = retired_dir_name(tp, topic_id, new_token());
  SLUICE_TRY(env_.fs.rename(join_path(data_dir_, tp.dir_name()), join_path(data_dir_, retired)));
  SLUICE_TRY(env_.fs.sync_dir(data_dir_));
  retired_dirs_.push_back(retired);
  env_.log.info("deleted partition {} (its files go with {})", tp.to_string(), retired);
  return Status();
}

std::vector<TopicPartition> LogManager::partitions() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, entry] : entries_) out.push_back(tp);
  return out;
}

Status LogManager::alter_config(const TopicPartition& tp, const TopicConfig& config) {
  if (auto offline = offline_.find(tp); offline != offline_.end()) {
    SLUICE_TRY(write_config(join_path(data_dir_, tp.dir_name()), config));  // its topic.properties follows the topic's
    offline->second.config = config;
    return Status();
  }
  auto it = entries_.find(tp);
  if (it == entries_.end()) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string());
  SLUICE_TRY(write_config(join_path(data_dir_, tp.dir_name()), config));
  it->second.config = config;
  it->second.log->update_settings(settings_for(tp, config));
  return Status();
}

}  // namespace sluice::storage
