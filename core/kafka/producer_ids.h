// Producer ids for InitProducerId (idempotent producers), from blocks of kProducerIdBlockSize reserved in
// <data_dir>/producer-id-block (written atomically before an id of a new block is handed out), as Kafka's controller
// hands out blocks: ids never repeat across restarts, and only the first allocation of each block touches the disk.
// Unused ids of the block in use at a crash are skipped.
//
// Broker-wide, not per partition, so it stays beside InitProducerId rather than in core/cluster's Partition, which
// keeps each partition's producer state (cluster/producer_state.h). On a cluster the blocks come from the metadata
// group instead (Kafka's AllocateProducerIds), so that ids are unique across nodes; only the block source changes.
//
// Fibers: allocations from the broker node's fibers take turns on one mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/sync.h"

namespace sluice::kafka {

inline constexpr int64_t kProducerIdBlockSize = 1000;  // Kafka's ProducerIdManager block
inline constexpr const char* kProducerIdBlockFile = "producer-id-block";

class ProducerIdManager {
 public:
  ProducerIdManager(Env env, std::string data_dir);
  // Cluster mode: each block, [first, end), comes from `source` (the metadata's AllocateProducerIds) instead of
  // the data directory's file.
  using BlockSource = std::function<Result<std::pair<int64_t, int64_t>>()>;
  ProducerIdManager(Env env, BlockSource source);
  ProducerIdManager(const ProducerIdManager&) = delete;
  ProducerIdManager& operator=(const ProducerIdManager&) = delete;

  // A producer id never handed out before, on this data directory.
  Result<int64_t> allocate_producer_id();

 private:
  Status load_id_block();

  Env env_;
  std::string data_dir_;
  BlockSource source_;  // null: the file in data_dir_
  Mutex ids_mutex_;
  bool ids_loaded_ = false;
  int64_t next_id_ = 0;
  int64_t block_end_ = 0;  // ids below it are reserved on disk
};

}  // namespace sluice::kafka
