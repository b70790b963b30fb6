#include "core/cluster/deferred_appends.h"

#include "core/base/assert.h"
#include "core/cluster/partition.h"

namespace sluice::cluster {

DeferredAppends::DeferredAppends(Env env) : env_(env), changed_(env.scheduler) {}

// A node kill unwinds the fiber (newer than the broker's owner) first; otherwise stop() ended it.
DeferredAppends::~DeferredAppends() { SLUICE_ASSERT(!fiber_ || fiber_.done()); }

storage::AppendResult DeferredAppends::promise(std::shared_ptr<Partition> partition, ByteView batch,
                                               const storage::BatchHeader& header) {
  SLUICE_ASSERT(partition != nullptr);
  int64_t& promised = promised_[partition.get()];
  const int64_t count = int64_t{header.last_offset_delta} + 1;
  storage::AppendResult result;
  result.base_offset = partition->log_end_offset() + promised;
  result.last_offset = result.base_offset + count - 1;
  result.log_start_offset = partition->log_start_offset();
  if (partition->config().message_timestamp_type == storage::MessageTimestampType::kLogAppendTime) {
    result.log_append_time_ms = to_unix_ms(env_.clock.wall_now());
  }
  promised += count;
  queue_.push_back(Waiting{std::move(partition), Bytes(batch.begin(), batch.end()), header, env_.clock.now() + kDelay});
  changed_.notify_all();
  return result;
}

void DeferredAppends::start() {
  SLUICE_ASSERT(!fiber_);
  fiber_ = env_.scheduler.spawn("mutation.deferred_appends", [this] { run(); });
}

void DeferredAppends::stop() {
  stopping_ = true;
  changed_.notify_all();
  if (fiber_) env_.scheduler.join(fiber_);
}

void DeferredAppends::run() {
  while (true) {
    if (queue_.empty()) {
      if (stopping_) return;
      changed_.wait();
      continue;
    }
    if (!stopping_ && env_.clock.now() < queue_.front().due) {
      changed_.wait_until(queue_.front().due);
      continue;
    }
    const Waiting item = std::move(queue_.front());
    queue_.pop_front();
    append(item);
  }
}

// The produce path's append, after the fact (it wakes long polls itself): idempotent batches through the producer
// state, waiting for a `persisted` sync inline.
void DeferredAppends::append(const Waiting& item) {
  const Status appended = item.partition->append_validated(item.batch, item.header, /*defer_sync=*/false).status();
  auto it = promised_.find(item.partition.get());
  SLUICE_ASSERT(it != promised_.end());
  it->second -= int64_t{item.header.last_offset_delta} + 1;
  SLUICE_ASSERT(it->second >= 0);
  if (it->second == 0) promised_.erase(it);
  if (!appended.ok()) {
    env_.log.warn("{}: an acknowledged produce failed to append (ack-before-append): {}",
                  item.partition->topic_partition().to_string(), appended.to_string());
  }
}

}  // namespace sluice::cluster
