// DeferredAppends: the ack-before-append mutation (core/base/mutations.h). A produce it takes is answered at once
// with the offsets its batch will get (the partition's log end plus what already waits here for that partition),
// and the batch is appended a little later (kDelay), in arrival order, by this queue's one fiber. A crash in
// between loses an acknowledged write; a failed append is only logged, never reported to the client. The broker
// makes one only when the mutation is planted.
//
// Fibers: promise() from connection fibers, start() and stop() from the node's; stop() appends what waits first.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>

#include "core/base/bytes.h"
#include "core/env/env.h"
#include "core/env/scheduler.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "core/storage/topic_partition.h"

namespace sluice::kafka {

class Broker;

class DeferredAppends {
 public:
  static constexpr Duration kDelay = std::chrono::milliseconds(20);

  explicit DeferredAppends(Broker& broker);
  ~DeferredAppends();
  DeferredAppends(const DeferredAppends&) = delete;
  DeferredAppends& operator=(const DeferredAppends&) = delete;

  // Queues one validated batch (in the topic's codec) for `tp`, whose log exists, and returns the answer its
  // append is expected to get.
  storage::AppendResult promise(const storage::TopicPartition& tp, ByteView batch, const storage::BatchHeader& header);
  void start();
  // Appends everything that waits, without its delay, then ends the fiber. From a fiber.
  void stop();
  size_t waiting() const { return queue_.size(); }

 private:
  struct Waiting {
    storage::TopicPartition tp;
    Bytes batch;
    storage::BatchHeader header;
    Instant due;
  };
  void run();
  void append(const Waiting& item);

  Broker& broker_;
  Env env_;
  std::deque<Waiting> queue_;
  // Offsets promised per partition and not appended yet (queued or being appended).
  std::map<storage::TopicPartition, int64_t> promised_;
  WaitQueue changed_;
  bool stopping_ = false;
  FiberRef fiber_;
};

}  // namespace sluice::kafka
