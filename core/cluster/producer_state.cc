#include "core/cluster/producer_state.h"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/protocol/error_codes.h"

namespace sluice::cluster {
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

// ---- ProducerState ----

ProducerState::ProducerState(Env env) : env_(env), changed_(env.scheduler) {}

Status ProducerState::load_once(storage::PartitionLog& log) {
  while (loading_) changed_.wait();
  if (loaded_) return Status();
  loading_ = true;
  struct Done {
    ProducerState& state;
    ~Done() {
      state.loading_ = false;
      state.changed_.notify_all();
    }
  } done{*this};
  while (!loaded_) {
    const uint64_t generation = generation_;
    producers_ = PartitionProducers();
    SLUICE_TRY(load(log));
    loaded_ = generation == generation_;
  }
  return Status();
}

void ProducerState::invalidate() {
  ++generation_;
  if (loading_) return;  // the rebuild in progress sees the new generation and starts over
  loaded_ = false;
  producers_ = PartitionProducers();
}

Status ProducerState::load(storage::PartitionLog& log) {
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
        producers_.record(span.header, span.header.max_timestamp, now_ms);
      }
    }
    offset = spans.back().header.last_offset() + 1;
  }
  env_.log.debug("{}: producer state rebuilt from offsets [{}, {}): {} producers", log.dir(), first, end,
                 producers_.size());
  return Status();
}

ProducerState::Turn::Turn(ProducerState& state, int64_t producer_id) : state_(state), producer_id_(producer_id) {
  while (state_.busy_.contains(producer_id_)) state_.changed_.wait();
  state_.busy_.insert(producer_id_);
}

ProducerState::Turn::~Turn() {
  state_.busy_.erase(producer_id_);
  state_.changed_.notify_all();
}

void ProducerState::expire_when_due(int64_t log_start_offset) {
  if (env_.clock.now() < next_expiry_) return;
  producers_.forget(log_start_offset, wall_ms(env_) - kProducerIdExpirationMs);
  next_expiry_ = env_.clock.now() + kExpiryInterval;
}

}  // namespace sluice::cluster
