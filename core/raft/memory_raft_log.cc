#include <algorithm>

#include "core/base/assert.h"
#include "core/raft/raft_log.h"

namespace sluice::raft {

// ---- RaftLog's defaults ----

Index RaftLog::last_index_with_term_at_most(Index at_or_below, Term term) const {
  Index index = std::min(at_or_below, last_index());
  // One step per entry: an entry's indexes share its term, so the whole entry is skipped at once.
  while (index > 0 && term_at(index) > term) {
    const Index start = entry_start(index);
    SLUICE_ASSERT(start >= 1);
    SLUICE_ASSERT(start <= index);
    index = start - 1;
  }
  SLUICE_ASSERT(index <= at_or_below);
  SLUICE_ASSERT(term_at(index) <= term);
  return index;
}

void RaftLog::reset_to(Index start, Term term) {
  (void)start;
  (void)term;
  SLUICE_ASSERT_MSG(false, "this log never follows a leader whose log start moved");
}

bool RaftLog::is_entry_end(Index index) const {
  SLUICE_ASSERT(index <= last_index());
  return index == 0 || index == last_index() || entry_start(index + 1) == index + 1;
}

// ---- MemoryRaftLog ----

size_t MemoryRaftLog::position_of(Index index) const {
  SLUICE_ASSERT(index > start_);
  SLUICE_ASSERT(index <= last_index());
  // The last entry whose start is at or below `index`.
  const auto after = std::upper_bound(starts_.begin(), starts_.end(), index);
  SLUICE_ASSERT(after != starts_.begin());
  const auto position = static_cast<size_t>(after - starts_.begin()) - 1;
  SLUICE_ASSERT(starts_[position] <= index);
  SLUICE_ASSERT(index < starts_[position] + entries_[position].count);
  return position;
}

Term MemoryRaftLog::term_at(Index index) const {
  SLUICE_ASSERT(index <= last_index());
  if (index == 0) return 0;
  if (index <= start_) return entries_.empty() || index == start_ ? start_term_ : entries_.front().term;
  return entries_[position_of(index)].term;
}

Index MemoryRaftLog::entry_start(Index index) const {
  SLUICE_ASSERT(index >= 1);
  return index <= start_ ? index : starts_[position_of(index)];
}

void MemoryRaftLog::advance_start(Index through) {
  SLUICE_ASSERT(through <= last_index());
  size_t drop = 0;
  while (drop < entries_.size() && starts_[drop] + entries_[drop].count - 1 <= through) ++drop;
  if (drop == 0) return;
  const Index start = starts_[drop - 1] + entries_[drop - 1].count - 1;
  SLUICE_ASSERT(start > start_);
  // Committed entries are never cut, so the durable image's first entries are these ones where it holds them; a
  // power loss keeps the new start (and nothing below it).
  const size_t durable_drop = std::min(drop, durable_entries_.size());
  start_term_ = entries_[drop - 1].term;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(drop));
  starts_.erase(starts_.begin(), starts_.begin() + static_cast<std::ptrdiff_t>(drop));
  const auto durable_end = durable_entries_.begin() + static_cast<std::ptrdiff_t>(durable_drop);
  durable_entries_.erase(durable_entries_.begin(), durable_end);
  start_ = start;
  durable_index_ = std::max(durable_index_, start_);
  check_invariants();
}

void MemoryRaftLog::reset_to(Index start, Term term) {
  SLUICE_ASSERT(start >= start_);
  SLUICE_ASSERT(term >= start_term_);
  entries_.clear();
  starts_.clear();
  durable_entries_.clear();
  start_ = start;
  start_term_ = term;
  last_index_ = start;
  durable_index_ = start;
  check_invariants();
}

void MemoryRaftLog::append(Index at, std::span<const Entry> entries) {
  SLUICE_ASSERT(at == last_index() + 1);
  SLUICE_ASSERT(!entries.empty());
  Term previous = term_at(at - 1);
  Index start = at;
  for (const Entry& entry : entries) {
    SLUICE_ASSERT(entry.term >= previous);
    SLUICE_ASSERT(entry.count >= 1);
    SLUICE_ASSERT(entry.count <= kEntryCountMax);
    previous = entry.term;
    entries_.push_back(entry);
    starts_.push_back(start);
    start += entry.count;
  }
  last_index_ = start - 1;
  SLUICE_ASSERT(last_index_ == at + span_of(entries) - 1);
  check_invariants();
}

void MemoryRaftLog::truncate_suffix(Index from) {
  SLUICE_ASSERT(from > start_);
  SLUICE_ASSERT(from <= last_index());
  const size_t position = position_of(from);
  SLUICE_ASSERT_MSG(starts_[position] == from, "a truncation starts at an entry start");
  entries_.resize(position);
  starts_.resize(position);
  last_index_ = from - 1;
  if (durable_index_ >= from) durable_index_ = from - 1;
  check_invariants();
}

std::vector<Entry> MemoryRaftLog::read(Index from, size_t max_count, uint64_t max_bytes) const {
  SLUICE_ASSERT(from > start_);
  SLUICE_ASSERT(from <= last_index());
  SLUICE_ASSERT(max_count > 0);
  size_t position = position_of(from);
  SLUICE_ASSERT_MSG(starts_[position] == from, "a read starts at an entry start");
  std::vector<Entry> out;
  uint64_t bytes = 0;
  for (; position < entries_.size() && out.size() < max_count; ++position) {
    const Entry& entry = entries_[position];
    if (!out.empty() && bytes + entry.payload.size() > max_bytes) break;
    bytes += entry.payload.size();
    out.push_back(entry);
  }
  SLUICE_ASSERT(!out.empty());
  SLUICE_ASSERT(out.size() <= max_count);
  SLUICE_ASSERT(out.size() == 1 || bytes <= max_bytes);
  return out;
}

void MemoryRaftLog::sync() {
  durable_entries_ = entries_;
  durable_index_ = last_index();
  check_invariants();
}

void MemoryRaftLog::power_loss() {
  entries_ = durable_entries_;
  starts_.clear();
  Index start = start_ + 1;
  for (const Entry& entry : entries_) {
    starts_.push_back(start);
    start += entry.count;
  }
  last_index_ = start - 1;
  durable_index_ = last_index();
  SLUICE_ASSERT(durable_entries_.size() == entries_.size());
  check_invariants();
}

bool MemoryRaftLog::spans_consistent() const {
  for (size_t k = 1; k < entries_.size(); ++k) {
    if (starts_[k] != starts_[k - 1] + entries_[k - 1].count) return false;
    if (entries_[k].term < entries_[k - 1].term) return false;
  }
  return true;
}

void MemoryRaftLog::check_invariants() const {
  SLUICE_ASSERT(entries_.size() == starts_.size());
  SLUICE_ASSERT(durable_index_ <= last_index_);
  SLUICE_ASSERT(durable_index_ >= start_);
  if (entries_.empty()) {
    SLUICE_ASSERT(last_index_ == start_);
    return;
  }
  SLUICE_ASSERT(starts_.front() == start_ + 1);
  SLUICE_ASSERT(entries_.front().term >= start_term_);
  SLUICE_ASSERT(last_index_ == starts_.back() + entries_.back().count - 1);
  SLUICE_ASSERT(is_entry_end(durable_index_));
  SLUICE_VERIFY(spans_consistent());
}

}  // namespace sluice::raft
