#include "core/kafka/producer_state.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/protocol/error_codes.h"
#include "core/storage/log_format.h"

namespace sluice::kafka {
namespace {

using storage::BatchHeader;

constexpr int32_t kNoSequence = -1;
constexpr int16_t kNoEpoch = -1;
constexpr size_t kScanReadBytes = 1 << 20;
// Kafka's producer.id.expiration.check.interval.ms.
constexpr auto kExpiryInterval = std::chrono::minutes(10);

bool in_sequence(int32_t last, int32_t next) {
  return static_cast<int64_t>(next) == static_cast<int64_t>(last) + 1 ||
         (next == 0 && last == std::numeric_limits<int32_t>::max());
}

int64_t wall_ms(const Env& env) { return to_unix_ms(env.clock.wall_now()); }

// The largest offset from which at most kProducerScanBytes of log remain, or the log start when the whole log is
// smaller. Binary search over size_from, which never grows with the offset.
Result<int64_t> scan_start(storage::PartitionLog& log, int64_t end) {
  int64_t low = log.log_start_offset();
  SLUICE_ASSIGN_OR_RETURN(uint64_t total, log.size_from(low));
  if (total <= kProducerScanBytes) return low;
  int64_t high = end;  // invariant: size_from(low) > budget >= size_from(high)
  while (high - low > 1) {
    low = std::max(low, log.log_start_offset());  // retention may move the start while we are suspended
    if (low >= high) return high;
    const int64_t middle = low + (high - low) / 2;
    SLUICE_ASSIGN_OR_RETURN(uint64_t size, log.size_from(middle));
    (size > kProducerScanBytes ? low : high) = middle;
  }
  return low;
}

}  // namespace

int32_t last_sequence(const BatchHeader& batch) {
  if (batch.base_sequence < 0) return kNoSequence;
  const int64_t last = static_cast<int64_t>(batch.base_sequence) + batch.last_offset_delta;
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(last > kMax ? last - kMax - 1 : last);
}

// ---- PartitionProducers ----

const ProducerEntry* PartitionProducers::find(int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

Result<std::optional<ProducerBatch>> PartitionProducers::check(const BatchHeader& batch) const {
  const ProducerEntry* entry = find(batch.producer_id);
  const int16_t current = entry != nullptr ? entry->epoch : kNoEpoch;
  if (entry != nullptr && batch.producer_epoch == current) {
    const int32_t last = last_sequence(batch);
    for (const ProducerBatch& seen : entry->batches) {
      if (seen.first_sequence == batch.base_sequence && seen.last_sequence == last) return std::optional(seen);
    }
  }
  if (batch.producer_epoch < current) {
    return kafka_error(ErrorCode::kInvalidProducerEpoch,
                       fmt::format("producer {} has epoch {}, older than the last seen epoch {}", batch.producer_id,
                                   batch.producer_epoch, current));
  }
  if (batch.producer_epoch != current) {
    if (current != kNoEpoch && batch.base_sequence != 0) {
      return kafka_error(ErrorCode::kOutOfOrderSequenceNumber,
                         fmt::format("producer {}: new epoch {} starts at sequence {}, not 0 (current epoch {})",
                                     batch.producer_id, batch.producer_epoch, batch.base_sequence, current));
    }
    return std::optional<ProducerBatch>();
  }
  if (current == kNoEpoch) return std::optional<ProducerBatch>();  // no state: any sequence may start it
  const int32_t last = entry->batches.empty() ? kNoSequence : entry->batches.back().last_sequence;
  if (!in_sequence(last, batch.base_sequence)) {
    return kafka_error(ErrorCode::kOutOfOrderSequenceNumber,
                       fmt::format("producer {} epoch {}: sequence {} does not follow {}", batch.producer_id,
                                   batch.producer_epoch, batch.base_sequence, last));
  }
  return std::optional<ProducerBatch>();
}

void PartitionProducers::record(const BatchHeader& batch, int64_t timestamp, int64_t now_ms) {
  ProducerEntry& entry = producers_[batch.producer_id];
  if (entry.epoch != batch.producer_epoch) {  // a new epoch forgets the old one's batches
    entry.epoch = batch.producer_epoch;
    entry.batches.clear();
  }
  entry.batches.push_back(ProducerBatch{batch.base_sequence, last_sequence(batch), batch.base_offset,
                                        batch.last_offset(), timestamp});
  while (entry.batches.size() > kProducerBatchesRetained) entry.batches.pop_front();
  entry.last_seen_ms = now_ms;
}

void PartitionProducers::forget(int64_t log_start_offset, int64_t expire_before_ms) {
  std::erase_if(producers_, [&](const auto& item) {
    const ProducerEntry& entry = item.second;
    return entry.batches.empty() || entry.batches.back().last_offset < log_start_offset ||
           entry.last_seen_ms < expire_before_ms;
  });
}

// ---- ProducerStateManager ----

struct ProducerStateManager::PartitionState {
  PartitionState(Scheduler& scheduler, std::weak_ptr<storage::PartitionLog> log_)
      : log(std::move(log_)), changed(scheduler) {}

  std::weak_ptr<storage::PartitionLog> log;  // identity: a deleted and recreated partition starts afresh
  PartitionProducers producers;
  bool loaded = false;
  bool loading = false;
  std::set<int64_t> busy;  // producers with an append in flight
  WaitQueue changed;       // a load or an append ended
  Instant next_expiry{};
};

ProducerStateManager::ProducerStateManager(Env env, storage::LogManager& logs)
    : env_(env), logs_(logs), ids_mutex_(env.scheduler) {}

ProducerStateManager::~ProducerStateManager() = default;

Status ProducerStateManager::load_id_block() {
  const std::string path = join_path(logs_.data_dir(), kProducerIdBlockFile);
  Result<std::unique_ptr<File>> file = env_.fs.open(path, OpenMode::kRead);
  if (!file.ok() && file.status().code() == Code::kNotFound) return Status();
  SLUICE_TRY(file.status());
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, storage::read_whole_file(**file));
  SLUICE_TRY((*file)->close());
  // "0\n<first id of the next block>\n": a version line, then the end of the last reserved block.
  const std::string_view text = as_chars(bytes);
  int64_t end = -1;
  const bool versioned = text.starts_with("0\n") && text.ends_with("\n");
  const std::string_view number = versioned ? text.substr(2, text.size() - 3) : std::string_view();
  auto [stop, ec] = std::from_chars(number.data(), number.data() + number.size(), end);
  if (!versioned || ec != std::errc() || stop != number.data() + number.size() || end < 0) {
    return corruption(fmt::format("{}: expected \"0\\n<next producer id>\\n\"", path));
  }
  next_id_ = block_end_ = end;
  return Status();
}

Result<int64_t> ProducerStateManager::allocate_producer_id() {
  LockGuard lock(ids_mutex_);
  if (!ids_loaded_) {
    SLUICE_TRY(load_id_block());
    ids_loaded_ = true;
  }
  if (next_id_ >= block_end_) {
    const int64_t end = next_id_ + kProducerIdBlockSize;
    const std::string path = join_path(logs_.data_dir(), kProducerIdBlockFile);
    SLUICE_TRY(write_file_atomically(env_.fs, path, path + ".tmp", as_bytes(fmt::format("0\n{}\n", end))));
    block_end_ = end;
  }
  return next_id_++;
}

Status ProducerStateManager::load(PartitionState& state, storage::PartitionLog& log) {
  const int64_t end = log.log_end_offset();
  SLUICE_ASSIGN_OR_RETURN(int64_t offset, scan_start(log, end));
  const int64_t first = offset;
  const int64_t now_ms = wall_ms(env_);
  while (offset < end) {
    offset = std::max(offset, log.log_start_offset());
    Result<storage::ReadResult> read = log.read(offset, kScanReadBytes, end);
    if (!read.ok() && to_error_code(read.status()) == ErrorCode::kOffsetOutOfRange &&
        log.log_start_offset() > offset) {
      continue;  // retention moved the start past us meanwhile
    }
    SLUICE_TRY(read.status());
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(std::vector<storage::BatchSpan> spans, storage::split_batches(read->records, &consumed));
    if (spans.empty()) break;
    for (const storage::BatchSpan& span : spans) {
      if (span.header.producer_id >= 0 && !span.header.control()) {
        state.producers.record(span.header, span.header.max_timestamp, now_ms);
      }
    }
    offset = spans.back().header.last_offset() + 1;
  }
  env_.log.debug("{}: producer state rebuilt from offsets [{}, {}): {} producers", log.dir(), first, end,
                 state.producers.size());
  return Status();
}

Result<std::shared_ptr<ProducerStateManager::PartitionState>> ProducerStateManager::state_for(
    const storage::TopicPartition& tp) {
  const std::shared_ptr<storage::PartitionLog> log = logs_.find_shared(tp);
  if (log == nullptr) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string());
  std::shared_ptr<PartitionState>& slot = partitions_[tp];
  if (slot == nullptr || slot->log.lock() != log) slot = std::make_shared<PartitionState>(env_.scheduler, log);
  const std::shared_ptr<PartitionState> state = slot;  // ours even if the slot is replaced while we wait
  while (state->loading) state->changed.wait();
  if (!state->loaded) {
    state->loading = true;
    struct Done {
      PartitionState& state;
      ~Done() {
        state.loading = false;
        state.changed.notify_all();
      }
    } done{*state};
    SLUICE_TRY(load(*state, *log));
    state->loaded = true;
  }
  return state;
}

Result<const PartitionProducers*> ProducerStateManager::producers(const storage::TopicPartition& tp) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<PartitionState> state, state_for(tp));
  return &state->producers;
}

Result<ProducerStateManager::Appended> ProducerStateManager::append(const storage::TopicPartition& tp,
                                                                    ByteView batch, const BatchHeader& header,
                                                                    bool defer_sync) {
  SLUICE_ASSERT(header.producer_id >= 0);
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<PartitionState> state, state_for(tp));
  const int64_t producer_id = header.producer_id;
  while (state->busy.contains(producer_id)) state->changed.wait();
  state->busy.insert(producer_id);
  struct Release {
    PartitionState& state;
    int64_t producer_id;
    ~Release() {
      state.busy.erase(producer_id);
      state.changed.notify_all();
    }
  } release{*state, producer_id};

  const std::shared_ptr<storage::PartitionLog> log = state->log.lock();
  if (log == nullptr) return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp.to_string() + " was deleted");
  if (env_.clock.now() >= state->next_expiry) {
    state->producers.forget(log->log_start_offset(), wall_ms(env_) - kProducerIdExpirationMs);
    state->next_expiry = env_.clock.now() + kExpiryInterval;
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<ProducerBatch> original, state->producers.check(header));
  Appended out;
  if (original.has_value()) {
    const storage::TopicConfig* config = logs_.topic_config(tp);
    const bool log_append_time =
        config != nullptr && config->message_timestamp_type == storage::MessageTimestampType::kLogAppendTime;
    out.duplicate = true;
    out.result.base_offset = original->first_offset;
    out.result.last_offset = original->last_offset;
    out.result.log_append_time_ms = log_append_time ? original->timestamp : -1;
    out.result.log_start_offset = log->log_start_offset();
    if (!log->durable_through(original->last_offset + 1)) {
      if (!defer_sync) SLUICE_TRY(log->wait_for_durability(original->last_offset + 1));
      out.result.sync_deferred = defer_sync;
    }
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(out.result, logs_.append(tp, batch, defer_sync));
  BatchHeader stored = header;
  stored.base_offset = out.result.base_offset;
  const int64_t timestamp = out.result.log_append_time_ms >= 0 ? out.result.log_append_time_ms : header.max_timestamp;
  state->producers.record(stored, timestamp, wall_ms(env_));
  return out;
}

}  // namespace sluice::kafka
