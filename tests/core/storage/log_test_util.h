// Helpers for the partition log tests: valid v2 batches (build_batch), a one-node simulated world whose main
// fiber runs a test body, and small accessors.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/storage/log_manager.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "sim/world/sim_cluster.h"
#include "sim/world/sim_disk.h"

namespace sluice::storage::log_testing {

using namespace std::chrono_literals;

// One batch of `timestamps.size()` records (offsets from 0, the log reassigns them); values "<tag>-<i>".
inline Bytes batch_with(const std::vector<int64_t>& timestamps, const std::string& tag = "v", size_t pad = 0) {
  std::vector<Record> records;
  for (size_t i = 0; i < timestamps.size(); ++i) {
    Record r;
    r.offset = static_cast<int64_t>(i);
    r.timestamp = timestamps[i];
    r.key = to_bytes("k" + std::to_string(i));
    r.value = to_bytes(tag + "-" + std::to_string(i) + std::string(pad, 'p'));
    records.push_back(std::move(r));
  }
  Result<Bytes> batch = build_batch(records);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? *batch : Bytes();
}

inline Bytes batch_of(int records, int64_t timestamp, const std::string& tag = "v", size_t pad = 0) {
  return batch_with(std::vector<int64_t>(static_cast<size_t>(records), timestamp), tag, pad);
}

// One batch as a leader stored it: `count` records at offsets from `base` (keys "k<offset>", values
// "<tag>-<offset>"), partition leader epoch `epoch`.
inline Bytes leader_batch(int64_t base, int count, int32_t epoch, const std::string& tag = "r",
                          int64_t timestamp = 1000) {
  std::vector<Record> records;
  for (int i = 0; i < count; ++i) {
    Record r;
    r.offset = base + i;
    r.timestamp = timestamp + i;
    r.key = to_bytes("k" + std::to_string(base + i));
    r.value = to_bytes(tag + "-" + std::to_string(base + i));
    records.push_back(std::move(r));
  }
  BatchOptions options;
  options.partition_leader_epoch = epoch;
  Result<Bytes> batch = build_batch(records, options);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? *batch : Bytes();
}

inline Bytes concat_bytes(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// `count` records of idempotent producer `producer_id` at `epoch`, the first with sequence `sequence`, timestamps
// from `timestamp` on.
inline Bytes idempotent_batch(int64_t producer_id, int16_t epoch, int32_t sequence, int count = 1,
                              int64_t timestamp = 1700000000000) {
  std::vector<Record> records(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    records[static_cast<size_t>(i)].offset = i;
    records[static_cast<size_t>(i)].timestamp = timestamp + i;
    records[static_cast<size_t>(i)].value = Bytes{'v', static_cast<uint8_t>(i)};
  }
  BatchOptions options;
  options.producer_id = producer_id;
  options.producer_epoch = epoch;
  options.base_sequence = sequence;
  Result<Bytes> built = build_batch(records, options);
  EXPECT_TRUE(built.ok()) << built.status().to_string();
  return built.ok() ? *built : Bytes();
}

inline std::vector<BatchHeader> headers_of(ByteView bytes) {
  size_t consumed = 0;
  Result<std::vector<BatchSpan>> spans = split_batches(bytes, &consumed);
  EXPECT_TRUE(spans.ok());
  EXPECT_EQ(consumed, bytes.size());
  std::vector<BatchHeader> out;
  if (spans.ok()) {
    for (const BatchSpan& s : *spans) out.push_back(s.header);
  }
  return out;
}

// Every byte of the log's batches from its log start, read run by run.
inline Bytes all_bytes(PartitionLog& log) {
  Bytes out;
  int64_t offset = log.log_start_offset();
  while (offset < log.log_end_offset()) {
    auto read = log.read(offset, 1 << 20, INT64_MAX);
    EXPECT_TRUE(read.ok()) << read.status().to_string();
    if (!read.ok() || read->records.empty()) break;
    out.insert(out.end(), read->records.begin(), read->records.end());
    offset = headers_of(read->records).back().last_offset() + 1;
  }
  return out;
}

inline ErrorCode error_of(const Status& status) { return to_error_code(status); }

// One simulated node; run() boots it with a body and runs the world until the body returns.
class OneNode {
 public:
  explicit OneNode(uint64_t seed = 1) : cluster_(seed, LogLevel::kOff), node_(cluster_.add_node()) {}

  // Runs `body` as the node's main fiber (crashing a node that is still up first). True when it finished.
  bool run(const std::function<void(Env)>& body, Duration limit = std::chrono::hours(10)) {
    if (node_.up()) node_.crash();
    bool done = false;
    node_.boot([&body, &done](Env env) {
      body(env);
      done = true;
    });
    cluster_.world().run_until([&] { return done; }, cluster_.world().now() + limit);
    return done;
  }

  SimNode& node() { return node_; }
  SimWorld& world() { return cluster_.world(); }
  SimDisk& disk() { return node_.disk(); }
  FileSystem& fs() { return node_.fs(); }

 private:
  SimCluster cluster_;
  SimNode& node_;
};

// Crash-point sweeps: boots `body` on the node and runs at most `max_steps` simulation steps. Returns the steps taken
// (all of them when it ends); `finished` (may be null) says whether `body` returned.
inline size_t run_steps(OneNode& world, const std::function<void(Env)>& body, size_t max_steps, bool* finished) {
  bool done = false;
  world.node().boot([&](Env env) {
    body(env);
    done = true;
  });
  size_t steps = 0;
  while (!done && steps < max_steps && world.world().step()) ++steps;
  if (finished != nullptr) *finished = done;
  return steps;
}

// A log manager over "data" (null, with a test failure, when it does not open).
inline std::unique_ptr<LogManager> open_log_manager(Env env, BrokerStorageConfig config = {},
                                                    EffectSink* effects = nullptr) {
  auto manager = LogManager::open(env, "data", std::move(config), effects);
  EXPECT_TRUE(manager.ok()) << manager.status().to_string();
  return manager.ok() ? std::move(*manager) : nullptr;
}

// A topic's config from overrides of Kafka's defaults.
inline TopicConfig topic_config_with(const std::map<std::string, std::string>& overrides) {
  auto config = TopicConfig::from_overrides(overrides, TopicConfig());
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : TopicConfig();
}

inline LogSettings small_settings() {
  LogSettings s;
  s.segment_bytes = 1 << 20;
  s.index_interval_bytes = 0;  // an index entry for every batch but the first: index paths get exercised
  return s;
}

// One record in its own batch (null key or value when nullopt).
inline Bytes one_record(std::optional<std::string> key, std::optional<std::string> value, int64_t timestamp) {
  Record r;
  r.timestamp = timestamp;
  if (key.has_value()) r.key = to_bytes(*key);
  if (value.has_value()) r.value = to_bytes(*value);
  Result<Bytes> batch = build_batch({r});
  EXPECT_TRUE(batch.ok());
  return batch.ok() ? *batch : Bytes();
}

// What a reader sees of the log, record by record, from the log start.
struct Seen {
  int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
};

inline std::optional<std::string> text(const std::optional<Bytes>& bytes) {
  if (!bytes.has_value()) return std::nullopt;
  return std::string(bytes->begin(), bytes->end());
}

// A file's size as the disk holds it now (0, with a test failure, when it cannot be read).
inline uint64_t file_bytes(FileSystem& fs, const std::string& path) {
  auto file = fs.open(path, OpenMode::kRead);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok()) return 0;
  auto size = (*file)->size();
  EXPECT_TRUE(size.ok());
  return size.ok() ? *size : 0;
}

inline std::vector<Seen> read_all(PartitionLog& log) {
  std::vector<Seen> out;
  int64_t offset = log.log_start_offset();
  while (offset < log.log_end_offset()) {
    Result<ReadResult> read = log.read(offset, 1 << 20, INT64_MAX);
    EXPECT_TRUE(read.ok()) << read.status().to_string();
    if (!read.ok() || read->records.empty()) break;
    size_t consumed = 0;
    Result<std::vector<BatchSpan>> spans = split_batches(read->records, &consumed);
    EXPECT_TRUE(spans.ok());
    for (const BatchSpan& span : *spans) {
      Result<std::vector<Record>> records =
          decode_records(ByteView(read->records.data() + span.position, span.header.size_bytes()));
      EXPECT_TRUE(records.ok());
      for (const Record& r : *records) out.push_back(Seen{r.offset, text(r.key), text(r.value)});
      offset = span.header.last_offset() + 1;
    }
  }
  return out;
}

inline std::vector<int64_t> offsets(const std::vector<Seen>& seen) {
  std::vector<int64_t> out;
  for (const Seen& s : seen) out.push_back(s.offset);
  return out;
}

inline std::map<std::string, std::optional<std::string>> latest_per_key(const std::vector<Seen>& seen) {
  std::map<std::string, std::optional<std::string>> out;
  for (const Seen& s : seen) {
    if (s.key.has_value()) out[*s.key] = s.value;
  }
  return out;
}

}  // namespace sluice::storage::log_testing
