#include "core/base/assert.h"
#include "core/raft/raft_log.h"

namespace sluice::raft {

Term MemoryRaftLog::term_at(Index index) const {
  SLUICE_ASSERT(index <= last_index());
  return index == 0 ? 0 : entries_[index - 1].term;
}

void MemoryRaftLog::append(Index at, std::span<const Entry> entries) {
  SLUICE_ASSERT(at == last_index() + 1);
  SLUICE_ASSERT(!entries.empty());
  Term previous = term_at(at - 1);
  for (const Entry& entry : entries) {
    SLUICE_ASSERT(entry.term >= previous);
    previous = entry.term;
    entries_.push_back(entry);
  }
}

void MemoryRaftLog::truncate_suffix(Index from) {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  entries_.resize(from - 1);
  if (durable_index_ >= from) durable_index_ = from - 1;
}

std::vector<Entry> MemoryRaftLog::read(Index from, size_t max_count) const {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  SLUICE_ASSERT(max_count > 0);
  const Index end = std::min<Index>(last_index() + 1, from + max_count);
  return std::vector<Entry>(entries_.begin() + static_cast<ptrdiff_t>(from - 1),
                            entries_.begin() + static_cast<ptrdiff_t>(end - 1));
}

void MemoryRaftLog::sync() {
  durable_entries_ = entries_;
  durable_index_ = last_index();
}

void MemoryRaftLog::power_loss() {
  entries_ = durable_entries_;
  durable_index_ = last_index();
  SLUICE_ASSERT(durable_entries_.size() == entries_.size());
}

}  // namespace sluice::raft
