// History: everything the simulated clients did and saw, and everything the world did to the brokers, kept outside
// the nodes so that it survives their crashes. Checkers (sim/checkers) read it after the run; `--trace` writes it
// as JSON lines. Jepsen's history is the model: one entry per client operation with its invocation and completion
// times and a three-valued outcome (ok, fail, unknown).
//
// Values are identified by a 64-bit digest: every value a workload writes is unique ("<process>#<n>" plus filler),
// so a digest names one write wherever a reader finds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/assert.h"
#include "core/client/client.h"
#include "core/env/clock.h"
#include "core/storage/effects.h"

namespace sluice::sim {

using client::Outcome;
using client::TopicPartitionId;

// A value's digest as histories and traces hold it: XXH3's 64 bits of its bytes (1 for a 0, which means a
// tombstone). Fixed, so that traces compare across builds; builds before commit e30acd6 took FNV-1a, which cost 4 %
// of a simulated run's wall time (bench/README.md, eighth round).
uint64_t digest_of(ByteView bytes);

enum class OpKind : uint8_t {
  kProduce = 0,
  kFetch = 1,        // one Fetch of one partition
  kListOffsets = 2,  // earliest / latest / by time
  kJoin = 3,         // a group member joined (or failed to)
  kCommit = 4,       // OffsetCommit
  kCommitted = 5,    // OffsetFetch
  kCreateTopic = 6,
  kDeleteTopic = 7,
  kAlterConfig = 8,
  kDeleteRecords = 9,
  kFinalRead = 10,  // the runner's read of a whole partition after the liveness phase
  kTable = 11,      // a table reader's rebuilt state after a cold start caught up
};
std::string_view op_kind_name(OpKind kind);

// A record as written (produce) or as read (fetch).
struct RecordView {
  int64_t offset = -1;  // -1: unknown (a produce without an answer, or acks=0)
  std::optional<std::string> key;
  uint64_t value_digest = 0;  // 0 for a tombstone
  bool tombstone = false;
  int64_t timestamp_ms = -1;
  int64_t batch_max_timestamp_ms = -1;
};

// What only group and admin operations (and failed ones) carry. Most operations are produces and fetches that
// succeed, and these fields were half of every operation's size (a run keeps hundreds of thousands of them).
struct OperationDetails {
  std::string error;  // transport errors and other text

  // kJoin / kCommit / kCommitted
  std::string group;
  std::string member;
  int32_t generation = -1;
  std::map<TopicPartitionId, int64_t> offsets;  // commit: what was committed; committed: what came back

  // kAlterConfig / kCreateTopic
  std::map<std::string, std::string> config;
  // kTable: key -> value digest
  std::map<std::string, uint64_t> table;
};

// What Operation::details() answers for an operation without any.
inline const OperationDetails kNoDetails;

// Fields ordered largest first: 176 bytes, not 224 (a run keeps hundreds of thousands).
struct Operation {
  uint64_t id = 0;
  std::string process;  // the workload instance, e.g. "producer-1" or "group-g1/2"
  TopicPartitionId tp;  // where it applies (topic only for topic-wide admin operations)
  Instant invoked_at{};
  Instant completed_at{};
  std::vector<RecordView> records;  // produce: what was written (offsets filled in when acknowledged); fetch: read

  // kFetch / kListOffsets / kFinalRead / kDeleteRecords: the requested offset (or timestamp for kListOffsets) and
  // what came back.
  int64_t offset = -1;
  int64_t result_offset = -1;  // list offsets: the answer; delete records: the new low watermark
  int64_t high_watermark = -1;
  int64_t log_start_offset = -1;

  int attempts = 0;        // kProduce
  int16_t error_code = 0;  // the broker's answer
  int16_t acks = -1;       // kProduce
  OpKind kind = OpKind::kProduce;
  Outcome outcome = Outcome::kUnknown;
  bool completed = false;
  bool idempotent = false;  // kProduce

  // Transport errors and other text; empty when none.
  const std::string& error() const { return details().error; }
  void set_error(std::string text) { edit_details().error = std::move(text); }

  // The group and admin fields: empty ones unless edit_details() wrote some. Inline: the digest and the checkers
  // ask every operation.
  const OperationDetails& details() const { return details_ != nullptr ? *details_ : kNoDetails; }
  OperationDetails& edit_details();

 private:
  std::unique_ptr<OperationDetails> details_;  // moved with the operation: operations are never copied
};

static_assert(sizeof(Operation) <= 176, "a run keeps hundreds of thousands of operations");

// What the world did to a broker node.
struct WorldEvent {
  enum class Kind : uint8_t {
    kFault = 0,        // a fault began (text says which)
    kFaultEnded = 1,   // a fault's effect was undone (partition healed, space returned, ...)
    kBoot = 2,         // the broker node booted (or restarted)
    kServing = 3,      // its broker opened the data directory and serves
    kBootFailed = 4,   // Node::run failed; text is its message (a refused load names the file)
    kDown = 5,         // crash or power loss took the node down
    kPowerLoss = 6,    // the node lost power: un-synced data may be gone
    kClockJump = 7,    // the node's wall clock moved by `amount_ms`
    kHealed = 8,       // every fault healed: the liveness phase begins
    kPartitionOffline = 9,  // the broker serves, but this partition did not load; text is its reason
  };
  Kind kind = Kind::kFault;
  Instant at{};
  std::string node;  // broker node name, or "" for the world
  std::string text;
  int64_t amount_ms = 0;
};
std::string_view world_event_name(WorldEvent::Kind kind);

struct TimedEffect {
  Instant at{};
  std::string node;
  storage::LogEffect effect;
};

// The run's operations in the order invoked, in chunks of kChunkOps allocated once each and filled in place: an
// operation never moves (a reference stays valid while later ones are recorded, as a fiber holds one across a
// fetch), and a run's hundreds of thousands take a few hundred allocations (a std::deque's blocks hold two
// operations each: one allocation per two).
class OperationLog {
 public:
  static constexpr size_t kChunkOps = 1024;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Operation& at(size_t i) {
    SLUICE_ASSERT(i < size_);
    return slot(i);
  }
  const Operation& at(size_t i) const {
    SLUICE_ASSERT(i < size_);
    return slot(i);
  }
  Operation& back() { return at(size_ - 1); }
  void push_back(Operation&& op) {  // a reference: an operation by value was moved once more per call
    chunk_with_room().push_back(std::move(op));
    ++size_;
  }
  // A new operation at the end, default-initialized, for the caller to fill in (nothing to move).
  Operation& emplace_back() {
    Operation& op = chunk_with_room().emplace_back();
    ++size_;
    return op;
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Operation;
    using difference_type = std::ptrdiff_t;
    using pointer = const Operation*;
    using reference = const Operation&;

    const_iterator() = default;
    const_iterator(const OperationLog* log, size_t i) : log_(log), i_(i) {}
    reference operator*() const { return log_->slot(i_); }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++i_;
      return before;
    }
    bool operator==(const const_iterator& other) const { return i_ == other.i_; }

   private:
    const OperationLog* log_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  Operation& slot(size_t i) const { return (*chunks_[i / kChunkOps])[i % kChunkOps]; }
  std::vector<Operation>& chunk_with_room() {
    if (size_ % kChunkOps == 0) {
      chunks_.push_back(std::make_unique<std::vector<Operation>>());
      chunks_.back()->reserve(kChunkOps);
    }
    return *chunks_.back();
  }

  std::vector<std::unique_ptr<std::vector<Operation>>> chunks_;
  size_t size_ = 0;
};

class History {
 public:
  // Records an invocation; returns its id for complete(). Moved from once, into the log (hundreds of thousands a run).
  uint64_t invoke(Operation&& op, Instant now);
  // The same for an operation the caller fills in where it is recorded (kind, process, what it applies to), which
  // saves building one and moving it in: for the workloads' produces and fetches. Its id is for complete().
  Operation& invoke_in_place(Instant now);
  Operation& op(uint64_t id) { return ops_.at(id); }
  // Fills in the completion time; the caller has set outcome and results on op(id).
  void complete(uint64_t id, Instant now);
  void world(WorldEvent event) { events_.push_back(std::move(event)); }
  void effect(TimedEffect effect) { effects_.push_back(std::move(effect)); }

  // Not a vector: a run records hundreds of thousands of operations, and a vector's regrowth moved each of them
  // several times into fresh pages (a sixth of a benchmark run's time); the log places each once.
  const OperationLog& ops() const { return ops_; }
  const std::vector<WorldEvent>& events() const { return events_; }
  const std::vector<TimedEffect>& effects() const { return effects_; }

  // A digest of everything recorded, in order (folded into the run's trace hash).
  uint64_t digest() const;
  // One JSON object per line: operations, world events and effects, each with a "type" field.
  std::string to_json_lines() const;

 private:
  OperationLog ops_;
  std::vector<WorldEvent> events_;
  std::vector<TimedEffect> effects_;
};

// The JSON text of one operation / event / effect (a line of to_json_lines).
std::string to_json(const Operation& op);
std::string to_json(const WorldEvent& event);
std::string to_json(const TimedEffect& effect);
// A short human form for failure evidence: "op 17 producer-1 produce events-0 acks=all ok offset 41 [3 records]".
std::string describe(const Operation& op);

}  // namespace sluice::sim
