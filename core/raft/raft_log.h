// RaftLog: the log as the raft state machine sees it. The partition log implements it later (an entry is a record
// batch; its term is the batch's partition-leader-epoch, and a small term -> first index map answers term_at), so the
// state machine holds no second copy of the data. Writes are writes, not promises: only durable_index() says what
// survives a power loss, and the driver advances it by syncing.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/raft/types.h"

namespace sluice::raft {

class RaftLog {
 public:
  virtual ~RaftLog() = default;

  virtual Index last_index() const = 0;
  // REQUIRES index <= last_index(); term_at(0) == 0.
  virtual Term term_at(Index index) const = 0;
  // Every entry at or below this index survives a power loss. <= last_index().
  virtual Index durable_index() const = 0;
  // REQUIRES at == last_index() + 1, entries non-empty, their terms non-decreasing and >= term_at(at - 1).
  virtual void append(Index at, std::span<const Entry> entries) = 0;
  // Removes every entry at or above `from`; the durable index drops below `from` until the next sync.
  // REQUIRES 1 <= from <= last_index().
  virtual void truncate_suffix(Index from) = 0;
  // Up to max_count entries from `from`. REQUIRES 1 <= from <= last_index(), max_count > 0. None only when a log on
  // disk has failed (FileRaftLog: it reports the error itself, and the caller sends nothing).
  virtual std::vector<Entry> read(Index from, size_t max_count) const = 0;
};

// In memory, with a durable image kept apart (LevelDB's fault env in miniature): sync() makes the image equal the
// log; power_loss() puts the image back, so an unsynced append is lost and an unsynced truncation is undone.
class MemoryRaftLog final : public RaftLog {
 public:
  Index last_index() const override { return entries_.size(); }
  Term term_at(Index index) const override;
  Index durable_index() const override { return durable_index_; }
  void append(Index at, std::span<const Entry> entries) override;
  void truncate_suffix(Index from) override;
  std::vector<Entry> read(Index from, size_t max_count) const override;

  void sync();
  void power_loss();
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<Entry>& durable_entries() const { return durable_entries_; }

 private:
  std::vector<Entry> entries_;          // entries_[i] has index i + 1
  std::vector<Entry> durable_entries_;  // what a power loss leaves
  Index durable_index_ = 0;             // entries_ and durable_entries_ agree up to here
};

}  // namespace sluice::raft
