// RaftLog: the log as the raft state machine sees it. The partition log implements it later (an entry is a record
// batch covering one index per record, raft index = Kafka offset + 1; its term is the batch's partition leader
// epoch, and the leader epoch cache answers term_at), so the state machine holds no second copy of the data. Writes
// are writes, not promises: only durable_index() says what survives a power loss, and the driver advances it by
// syncing.
//
// Spans: an entry covers `Entry::count` consecutive indexes. An *entry start* is the first index of an entry, an
// *entry end* its last. The log's indexes are gap-free from log_start() + 1 to last_index(); 0 is the empty prefix.
//
// The log start: a log may drop a committed prefix (a partition's retention and DeleteRecords, or a follower that
// jumps to its leader's log start). Indexes at or below log_start() are gone: they were committed, read() never
// reaches them, entry_start() answers them with themselves, and term_at() answers them with an upper bound of their
// term (the exact term of log_start() while the log is empty above it, which is what an election compares).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/raft/types.h"

namespace sluice::raft {

class RaftLog {
 public:
  virtual ~RaftLog() = default;

  // The last index covered (the end of the last entry); 0 when empty.
  virtual Index last_index() const = 0;
  // The term of the entry covering `index`. REQUIRES index <= last_index(); term_at(0) == 0.
  virtual Term term_at(Index index) const = 0;
  // The first index of the entry covering `index`. REQUIRES 1 <= index <= last_index().
  virtual Index entry_start(Index index) const = 0;
  // Every entry at or below this index survives a power loss. 0 or an entry end, <= last_index().
  virtual Index durable_index() const = 0;
  // REQUIRES at == last_index() + 1, entries non-empty, each count in [1, kEntryCountMax], their terms
  // non-decreasing and >= term_at(at - 1). Entry k starts where entry k - 1 ends.
  virtual void append(Index at, std::span<const Entry> entries) = 0;
  // Removes every entry at or above `from`; the durable index drops below `from` until the next sync.
  // REQUIRES 1 <= from <= last_index() and `from` an entry start.
  virtual void truncate_suffix(Index from) = 0;
  // Entries from `from`: at most max_count of them and at most max_bytes of payload in all, but always at least one
  // (an entry larger than max_bytes goes alone). REQUIRES 1 <= from <= last_index(), `from` an entry start,
  // max_count > 0. None only when a log on disk has failed (FileRaftLog: it reports the error itself, and the caller
  // sends nothing) or when the log start passed `from` while the read waited for the disk (a partition log's
  // retention and DeleteRecords run beside the raft driver); fewer than asked when it passed a later entry.
  virtual std::vector<Entry> read(Index from, size_t max_count, uint64_t max_bytes) const = 0;
  // The largest i <= min(at_or_below, last_index()) with term_at(i) <= term; 0 if there is none. The default walks
  // back entry by entry (jumping by entry_start, never index by index); a log with a term -> first index map (the
  // partition's leader epoch cache) answers it directly.
  virtual Index last_index_with_term_at_most(Index at_or_below, Term term) const;

  // The log start (above): 0 for a log that keeps everything. An entry end, <= last_index(); it only moves forward.
  virtual Index log_start() const { return 0; }
  // What the log's owner counts as deleted: every index at or below it (Kafka's log start offset, which may lie
  // inside the first entry kept). log_start() <= low_watermark() <= the commit index; only moves forward.
  virtual Index low_watermark() const { return log_start(); }
  // Drops the entries at or below `through`, a follower's move to its leader's log start. The new start may stop at
  // the start of an entry holding `through`. REQUIRES through <= the commit index. A no-op for a log that keeps
  // everything.
  virtual void advance_start(Index through) { (void)through; }
  // Discards the whole log, which becomes empty above `start`, whose term is `term` (raft's InstallSnapshot of an
  // empty snapshot: a follower whose next entries its leader no longer holds). Durable on return: durable_index()
  // == last_index() == log_start() == start. REQUIRES start >= log_start(). Only logs that may follow a leader whose
  // log_start() moves need it; the default refuses.
  virtual void reset_to(Index start, Term term);

  // Whether `index` is 0 or the last index of an entry. REQUIRES index <= last_index().
  bool is_entry_end(Index index) const;
};

// In memory, with a durable image kept apart (LevelDB's fault env in miniature): sync() makes the image equal the
// log; power_loss() puts the image back, so an unsynced append is lost and an unsynced truncation is undone.
class MemoryRaftLog final : public RaftLog {
 public:
  Index last_index() const override { return last_index_; }
  Term term_at(Index index) const override;
  Index entry_start(Index index) const override;
  Index durable_index() const override { return durable_index_; }
  void append(Index at, std::span<const Entry> entries) override;
  void truncate_suffix(Index from) override;
  std::vector<Entry> read(Index from, size_t max_count, uint64_t max_bytes) const override;
  Index log_start() const override { return start_; }
  // Drops the whole entries ending at or below `through` (durably: a power loss does not bring them back).
  void advance_start(Index through) override;
  void reset_to(Index start, Term term) override;

  void sync();
  void power_loss();
  // The entries in order (entries()[k] starts at starts()[k]), and the image a power loss leaves.
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<Index>& starts() const { return starts_; }
  const std::vector<Entry>& durable_entries() const { return durable_entries_; }

 private:
  // The position in entries_ of the entry covering `index`. REQUIRES 1 <= index <= last_index().
  size_t position_of(Index index) const;
  void check_invariants() const;
  bool spans_consistent() const;  // O(n): each entry starts where the previous ends; terms never decrease

  std::vector<Entry> entries_;
  std::vector<Index> starts_;           // starts_[k]: the first index of entries_[k], strictly increasing
  Index start_ = 0;                     // the log start: entries_ begin at start_ + 1
  Term start_term_ = 0;                 // term_at(start_) once the entries up to it are gone
  Index last_index_ = 0;                // starts_.back() + entries_.back().count - 1
  std::vector<Entry> durable_entries_;  // what a power loss leaves
  Index durable_index_ = 0;             // entries_ and durable_entries_ agree up to here
  // The durable image's start is always start_: moving the start is durable at once.
};

}  // namespace sluice::raft
