// PartitionRaftLog: a partition's own log as its raft group's log (DESIGN.md §5, Redpanda's model), so a replicated
// partition holds its data once. Raft index = Kafka offset + 1; one raft entry is one record batch covering one
// index per offset (Entry::count = last offset delta + 1, so a compacted batch with gaps still covers its whole
// range); the entry's term is the batch's partition leader epoch. Terms are
// answered from the log's leader-epoch cache, batch boundaries from its offset index: nothing per batch is held in
// memory.
//
// Appends keep the batch's bytes except the two header fields outside the CRC that the log position decides: the
// base offset (index - 1) and the partition leader epoch (the entry's term). An entry with an empty payload is a
// leader's no-op (raft's first entry of a term): it becomes a LeaderChange control batch of one record, as KRaft
// writes, which consumers skip like any control batch.
//
// Fail-stop like FileRaftLog: the first storage error poisons the log; from then on nothing is written, read()
// returns no entries, durable_index() stops rising, and status() names the error, which the raft host checks after
// every Ready and then takes the group offline (fsyncgate: a retry proves nothing). Until then the state machine
// may still be inside the step that hit the error: appends, truncations and a reset after the poisoning change a
// view kept in memory (as FileRaftLog keeps its unwritten records), so every answer keeps the RaftLog contract.
//
// Single-threaded: the raft host's driver fiber owns the writes. Other fibers may read the partition log (fetches)
// while a call here is suspended on the disk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/env/env.h"
#include "core/raft/group_storage.h"
#include "core/raft/hard_state_file.h"
#include "core/raft/raft_log.h"
#include "core/storage/partition_log.h"

namespace sluice::cluster {

// The raft index of the last offset below `end_offset`, and back (index = offset + 1).
inline raft::Index raft_index_for_end_offset(int64_t end_offset) { return static_cast<raft::Index>(end_offset); }
inline int64_t offset_of_raft_index(raft::Index index) { return static_cast<int64_t>(index) - 1; }

// The LeaderChange control record's key (version 0, type 2) and value (Kafka's LeaderChangeMessage v0).
Bytes leader_change_batch(int32_t leader_id, int64_t timestamp_ms);

class PartitionRaftLog final : public raft::RaftLog {
 public:
  // `log` outlives this object; `leader_id` names this node in the no-op batches it writes.
  PartitionRaftLog(Env env, storage::PartitionLog& log, int32_t leader_id);

  raft::Index last_index() const override;
  raft::Term term_at(raft::Index index) const override;
  raft::Index durable_index() const override;
  void append(raft::Index at, std::span<const raft::Entry> entries) override;
  void truncate_suffix(raft::Index from) override;
  raft::Index entry_start(raft::Index index) const override;
  std::vector<raft::Entry> read(raft::Index from, size_t max_count, uint64_t max_bytes) const override;
  raft::Index last_index_with_term_at_most(raft::Index at_or_below, raft::Term term) const override;
  // The raft log start: the index just before the first batch kept, which may begin below the log start offset
  // (DeleteRecords cuts anywhere, a batch is kept whole), or the log start offset when no batch is kept.
  raft::Index log_start() const override;
  // The log start offset (as an index: the offsets below it are the indexes up to it).
  raft::Index low_watermark() const override {
    return reset_start_.has_value() ? *reset_start_ : static_cast<raft::Index>(log_.log_start_offset());
  }
  // Moves the log start offset up to `through` (retention's primitive; segments wholly below it go).
  void advance_start(raft::Index through) override;
  // PartitionLog::restart_at(start, term).
  void reset_to(raft::Index start, raft::Term term) override;

  // Makes the whole log durable. Fails for good once poisoned.
  Status sync();
  // Told the new log end before a cut below the high watermark: raft lost committed entries, the documented
  // trade-off of a `replicated` group (core/raft/README.md), and the high watermark goes back with them.
  void on_cut_below_high_watermark(std::function<void(int64_t end_offset)> hook) { cut_hook_ = std::move(hook); }
  const Status& status() const { return failure_; }
  // Poisoned by a disk refusing space while the partition log stayed online: a failed write leaves that log as it
  // was (anything it could not undo takes it offline), so the group may start again on it once space returns.
  bool stopped_for_space() const { return failure_.code() == Code::kNoSpace && !log_.offline(); }
  storage::PartitionLog& partition_log() { return log_; }

 private:
  void poison(const Status& why) const;
  bool poisoned() const { return !failure_.ok(); }
  // Once poisoned: the entries the state machine appended since, above the indexes the real log still answers.
  struct Unwritten {
    raft::Index first;
    raft::Index count;
    raft::Term term;
  };
  const Unwritten* unwritten_at(raft::Index index) const;  // nullptr: the real log answers `index`
  // append, truncate_suffix and reset_to on the view, once poisoned (also by the call that failed).
  void append_unwritten(std::span<const raft::Entry> entries);
  void truncate_unwritten(raft::Index from);
  void reset_unwritten(raft::Index start, raft::Term term);

  Env env_;
  storage::PartitionLog& log_;
  int32_t leader_id_;
  mutable Status failure_;
  // Set at the poisoning: indexes up to kept_end_ are the real log's, the unwritten_ ones follow them. A reset_to
  // after the poisoning empties the view above `reset_start_`, whose term is `reset_term_`.
  mutable raft::Index kept_end_ = 0;
  std::vector<Unwritten> unwritten_;
  std::optional<raft::Index> reset_start_;
  raft::Term reset_term_ = 0;
  std::function<void(int64_t end_offset)> cut_hook_;
};

// A partition's raft storage: the partition log (above) and the group's hard state in `raft-hard-state` beside the
// log's segments.
class PartitionGroupStorage final : public raft::GroupStorage {
 public:
  static constexpr const char* kHardStateFileName = "raft-hard-state";

  // Opens (or creates) the hard state file in the log's directory.
  static Result<std::unique_ptr<PartitionGroupStorage>> open(Env env, storage::PartitionLog& log, int32_t node_id);

  raft::RaftLog& log() override { return log_; }
  raft::HardState hard_state() const override { return hard_state_.loaded(); }
  Status store_hard_state(const raft::HardState& state) override { return hard_state_.store(state); }
  Status sync_log() override { return log_.sync(); }
  Status status() const override;
  // The partition log's last stop left its clean-shutdown marker.
  bool clean_start() const override { return clean_start_; }

  PartitionRaftLog& partition_raft_log() { return log_; }
  // The log stopped for space (above) and the hard state never failed: what is on disk is the group's, as after a
  // restart of the node.
  bool stopped_for_space() const { return log_.stopped_for_space() && hard_state_.status().ok(); }

 private:
  PartitionGroupStorage(Env env, storage::PartitionLog& log, int32_t node_id, raft::HardStateFile hard_state)
      : log_(env, log, node_id), hard_state_(std::move(hard_state)), clean_start_(log.load_stats().clean_shutdown) {}

  PartitionRaftLog log_;
  raft::HardStateFile hard_state_;
  bool clean_start_;
};

}  // namespace sluice::cluster
