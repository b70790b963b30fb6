// DeferredAppends: the ack-before-append mutation (core/base/mutations.h). A produce it takes is answered at once
// with the offsets its batch will get (the partition's log end plus what already waits here for that partition),
// and the batch is appended a little later (kDelay), in arrival order, by this queue's one fiber. A crash in
// between loses an acknowledged write; a failed append is only logged, never reported to the client. The
// PartitionManager makes one only when the mutation is planted, and Partition::append_records hands it the batch
// once it passed every check.
//
// Fibers: promise() from connection fibers, start() and stop() from the node's; stop() appends what waits first.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>

#include "core/base/bytes.h"
#include "core/env/env.h"
#include "core/env/scheduler.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"

namespace sluice::cluster {

class Partition;

class DeferredAppends {
 public:
  static constexpr Duration kDelay = std::chrono::milliseconds(20);

  explicit DeferredAppends(Env env);
  ~DeferredAppends();
  DeferredAppends(const DeferredAppends&) = delete;
  DeferredAppends& operator=(const DeferredAppends&) = delete;

  // Queues one validated batch (in the topic's codec) for `partition` and returns the answer its append is
  // expected to get.
  storage::AppendResult promise(std::shared_ptr<Partition> partition, ByteView batch,
                                const storage::BatchHeader& header);
  void start();
  // Appends everything that waits, without its delay, then ends the fiber. From a fiber.
  void stop();
  size_t waiting() const { return queue_.size(); }

 private:
  struct Waiting {
    std::shared_ptr<Partition> partition;  // alive while queued: the key of `promised_` cannot be reused
    Bytes batch;
    storage::BatchHeader header;
    Instant due;
  };
  void run();
  void append(const Waiting& item);

  Env env_;
  std::deque<Waiting> queue_;
  // Offsets promised per partition and not appended yet (queued or being appended).
  std::map<const Partition*, int64_t> promised_;
  WaitQueue changed_;
  bool stopping_ = false;
  FiberRef fiber_;
};

}  // namespace sluice::cluster
