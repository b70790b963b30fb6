#include "core/cluster/partition_raft_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/base/assert.h"
#include "core/base/big_endian.h"
#include "core/storage/record_batch.h"

namespace sluice::cluster {
namespace {

constexpr int16_t kControlRecordVersion = 0;
constexpr int16_t kLeaderChangeControlType = 2;
constexpr int16_t kLeaderChangeMessageVersion = 0;
// PartitionRaftLog::read reads the log this much at a time.
constexpr size_t kReadChunkBytes = 64 * 1024;

void put_i16(Bytes& out, int16_t value) {
  out.push_back(static_cast<uint8_t>(static_cast<uint16_t>(value) >> 8));
  out.push_back(static_cast<uint8_t>(value & 0xff));
}

void put_i32(Bytes& out, int32_t value) {
  const auto v = static_cast<uint32_t>(value);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>((v >> shift) & 0xff));
}

// The batch's span of raft indexes: every offset it covers, records or not (a compacted batch keeps its range).
raft::Index batch_index_count(const storage::BatchHeader& header) {
  SLUICE_ASSERT(header.last_offset_delta >= 0);
  return static_cast<raft::Index>(header.last_offset_delta) + 1;
}

}  // namespace

Bytes leader_change_batch(int32_t leader_id, int64_t timestamp_ms) {
  storage::Record record;
  record.timestamp = timestamp_ms;
  record.offset = 0;
  Bytes key;
  put_i16(key, kControlRecordVersion);
  put_i16(key, kLeaderChangeControlType);
  record.key = std::move(key);
  // LeaderChangeMessage v0 (flexible): version, LeaderId, Voters (compact array), GrantingVoters (compact array),
  // no tagged fields. The voters are left empty: Sluice's membership lives in the cluster metadata.
  Bytes value;
  put_i16(value, kLeaderChangeMessageVersion);
  put_i32(value, leader_id);
  value.push_back(1);  // Voters: compact length 0 + 1
  value.push_back(1);  // GrantingVoters
  value.push_back(0);  // tagged fields
  record.value = std::move(value);
  storage::BatchOptions options;
  options.control = true;
  Result<Bytes> batch = storage::build_batch({record}, options);
  SLUICE_ASSERT(batch.ok());
  return std::move(*batch);
}

PartitionRaftLog::PartitionRaftLog(Env env, storage::PartitionLog& log, int32_t leader_id)
    : env_(env), log_(log), leader_id_(leader_id) {}

void PartitionRaftLog::poison(const Status& why) const {
  SLUICE_ASSERT(!why.ok());
  if (!failure_.ok()) return;
  kept_end_ = raft_index_for_end_offset(log_.log_end_offset());
  failure_ = why;
  env_.log.error("partition log {} stops serving its raft group: {}", log_.dir(), why.to_string());
}

raft::Index PartitionRaftLog::last_index() const {
  if (poisoned()) return unwritten_.empty() ? kept_end_ : unwritten_.back().first + unwritten_.back().count - 1;
  return raft_index_for_end_offset(log_.log_end_offset());
}

const PartitionRaftLog::Unwritten* PartitionRaftLog::unwritten_at(raft::Index index) const {
  if (!poisoned() || index <= kept_end_) return nullptr;
  for (const Unwritten& entry : unwritten_) {
    if (index >= entry.first && index < entry.first + entry.count) return &entry;
  }
  SLUICE_ASSERT(false);  // the view is gap-free from kept_end_ + 1 to last_index()
  return nullptr;
}

raft::Term PartitionRaftLog::term_at(raft::Index index) const {
  SLUICE_ASSERT(index <= last_index());
  if (index == 0) return 0;
  if (const Unwritten* entry = unwritten_at(index); entry != nullptr) return entry->term;
  if (reset_start_.has_value() && index <= *reset_start_) return reset_term_;
  const int64_t offset = offset_of_raft_index(index);
  std::optional<int32_t> epoch;
  if (offset >= log_.log_start_offset()) {
    epoch = log_.epoch_at(offset);
  } else if (log_.log_start_offset() == log_.log_end_offset()) {
    // An empty log: its last epoch is the one in force at the log start, which the epoch cache keeps (retention
    // and restart_at leave the entry covering the start). Exact for the last index, which elections compare.
    epoch = log_.latest_epoch();
  } else {
    // Below the log start the epoch of the first batch kept stands for the prefix, an upper bound: raft compares
    // terms only above the commit index, and anchors an append from the log start on its first entry.
    epoch = log_.epoch_at(log_.log_start_offset());
  }
  if (!epoch.has_value() || *epoch < 0) return 0;
  return static_cast<raft::Term>(*epoch);
}

raft::Index PartitionRaftLog::durable_index() const {
  if (reset_start_.has_value()) return std::min(*reset_start_, last_index());  // as reset_to promises; never leaves
  const raft::Index durable = raft_index_for_end_offset(std::min(log_.durable_end_offset(), log_.log_end_offset()));
  return poisoned() ? std::min(durable, kept_end_) : durable;
}

void PartitionRaftLog::append(raft::Index at, std::span<const raft::Entry> entries) {
  SLUICE_ASSERT(at == last_index() + 1);
  SLUICE_ASSERT(!entries.empty());
  if (poisoned()) return append_unwritten(entries);
  // The log refuses a batch set larger than segment.bytes (a produce's limit, Kafka's RecordListTooLarge), and a
  // follower catching up, or a leader with many proposals in one Ready, can hold far more: the entries go in
  // chunks of whole batches, each within segment.bytes (a single batch above it still goes alone and is refused).
  const auto limit = static_cast<size_t>(std::max<int64_t>(log_.settings().segment_bytes, 1));
  // One append of whole batches from raft index `chunk_at`. On failure the log is poisoned and `rest` (the entries
  // from `chunk_at` on) are kept as unwritten: false.
  const auto append_chunk = [this](raft::Index chunk_at, ByteView bytes, std::span<const raft::Entry> rest) {
    SLUICE_ASSERT(chunk_at == last_index() + 1);
    SLUICE_ASSERT(!bytes.empty() && !rest.empty());
    Result<storage::AppendResult> appended = log_.append_as_replica(bytes);
    if (!appended.ok()) {
      poison(appended.status());
      SLUICE_ASSERT(kept_end_ == chunk_at - 1);  // a failed append leaves the log as it was
      append_unwritten(rest);
      return false;
    }
    SLUICE_ASSERT(appended->base_offset == offset_of_raft_index(chunk_at));
    return true;
  };
  Bytes batches;
  raft::Index chunk_at = at;  // the first index of the chunk in `batches`
  size_t chunk_first = 0;     // its first entry
  raft::Index index = at;
  raft::Term previous_term = term_at(at - 1);
  for (size_t i = 0; i < entries.size(); ++i) {
    const raft::Entry& entry = entries[i];
    SLUICE_ASSERT(entry.count >= 1);
    SLUICE_ASSERT(entry.term >= previous_term);
    SLUICE_ASSERT(entry.term <= static_cast<raft::Term>(INT32_MAX));
    previous_term = entry.term;
    const Bytes marker = entry.payload.empty() ? leader_change_batch(leader_id_, to_unix_ms(env_.clock.wall_now()))
                                               : Bytes();
    const ByteView payload = entry.payload.empty() ? ByteView(marker) : as_bytes(entry.payload);
    SLUICE_ASSERT(!entry.payload.empty() || entry.count == 1);
    if (!batches.empty() && batches.size() + payload.size() > limit) {
      if (!append_chunk(chunk_at, batches, entries.subspan(chunk_first))) return;
      batches.clear();
      chunk_at = index;
      chunk_first = i;
    }
    const size_t first = batches.size();
    batches.insert(batches.end(), payload.begin(), payload.end());
    const MutableByteView batch(batches.data() + first, batches.size() - first);
    Result<storage::BatchHeader> header = storage::parse_batch_header(batch);
    // A proposer hands whole, validated batches, and a leader sends what its own log holds.
    SLUICE_ASSERT(header.ok());
    SLUICE_ASSERT(header->size_bytes() == batch.size());
    SLUICE_ASSERT(batch_index_count(*header) == entry.count);
    storage::set_base_offset(batch, offset_of_raft_index(index));
    storage::set_partition_leader_epoch(batch, static_cast<int32_t>(entry.term));
    index += entry.count;
  }
  if (!append_chunk(chunk_at, batches, entries.subspan(chunk_first))) return;
  SLUICE_ASSERT(last_index() == index - 1);
}

void PartitionRaftLog::append_unwritten(std::span<const raft::Entry> entries) {
  SLUICE_ASSERT(poisoned());
  for (const raft::Entry& entry : entries) {
    SLUICE_ASSERT(entry.count >= 1);
    unwritten_.push_back(Unwritten{last_index() + 1, entry.count, entry.term});
  }
}

void PartitionRaftLog::truncate_unwritten(raft::Index from) {
  SLUICE_ASSERT(poisoned());
  while (!unwritten_.empty() && unwritten_.back().first >= from) unwritten_.pop_back();
  SLUICE_ASSERT(unwritten_.empty() || unwritten_.back().first + unwritten_.back().count == from);
  kept_end_ = std::min(kept_end_, from - 1);
  SLUICE_ASSERT(last_index() == from - 1);
}

void PartitionRaftLog::truncate_suffix(raft::Index from) {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  if (poisoned()) return truncate_unwritten(from);
  if (offset_of_raft_index(from) < log_.high_watermark() && cut_hook_) cut_hook_(offset_of_raft_index(from));
  if (Status s = log_.truncate_to(offset_of_raft_index(from)); !s.ok()) {
    poison(s);
    return truncate_unwritten(from);
  }
  SLUICE_ASSERT(last_index() == from - 1);
}

raft::Index PartitionRaftLog::entry_start(raft::Index index) const {
  SLUICE_ASSERT(index >= 1);
  SLUICE_ASSERT(index <= last_index());
  if (const Unwritten* entry = unwritten_at(index); entry != nullptr) return entry->first;
  if (reset_start_.has_value() && index <= *reset_start_) return index;
  const int64_t offset = offset_of_raft_index(index);
  if (offset < log_.log_start_offset()) {
    // Below the raft log start there are no batches to align to; above it, the first batch begins below the log
    // start offset.
    const raft::Index start = log_start();
    return index <= start ? index : start + 1;
  }
  Result<int64_t> base = log_.batch_base_offset_containing(offset);
  if (!base.ok()) {
    // Retention or DeleteRecords (which run beside the raft driver) may have moved the start past it meanwhile.
    if (offset < log_.log_start_offset()) return entry_start(index);
    // Or, asked off the driver (RaftHost::wait_committed on a producer's fiber), the driver's truncation cut the
    // entry meanwhile: nothing is left to align to, and nothing is wrong with the log.
    if (offset >= log_.log_end_offset()) return index;
    poison(base.status());
    return index;
  }
  SLUICE_ASSERT(*base <= offset);
  return static_cast<raft::Index>(*base) + 1;
}

std::vector<raft::Entry> PartitionRaftLog::read(raft::Index from, size_t max_count, size_t max_bytes) const {
  SLUICE_ASSERT(from >= 1);
  SLUICE_ASSERT(from <= last_index());
  SLUICE_ASSERT(max_count > 0);
  if (!failure_.ok()) return {};
  // Raft reads above the log start, but retention and DeleteRecords move it beside the raft driver (on their own
  // fibers, while a call here waits for the disk): a read the start passed returns nothing, without failing.
  if (from <= log_start()) {
    SLUICE_PROBE("partition_raft_log.read_below_log_start");
    return {};
  }
  std::vector<raft::Entry> entries;
  raft::Index expected = from;
  size_t bytes = 0;
  // In chunks: a probe or a catching-up follower asks for max_bytes (a MiB) but often takes a few entries, and
  // reading the whole MiB each time made every append cost a MiB copy.
  while (entries.size() < max_count && expected <= last_index() && bytes < max_bytes) {
    // The first batch kept may begin below the log start offset: the log reads it from there.
    const int64_t offset = std::max(offset_of_raft_index(expected), log_.log_start_offset());
    const size_t chunk = std::max<size_t>(std::min(kReadChunkBytes, max_bytes - bytes), 1);
    Result<storage::ReadResult> data = log_.read(offset, chunk, log_.log_end_offset());
    if (!data.ok() && offset_of_raft_index(expected) < log_.log_start_offset()) {
      SLUICE_PROBE("partition_raft_log.read_below_log_start");
      return entries;  // the start moved past it meanwhile (above)
    }
    if (!data.ok()) {
      poison(data.status());
      return {};
    }
    size_t consumed = 0;
    Result<std::vector<storage::BatchSpan>> spans = storage::split_batches(data->records, &consumed);
    if (!spans.ok() || spans->empty()) {
      poison(spans.ok() ? Status(Code::kCorruption, fmt::format("no batch at offset {} of {}", offset, log_.dir()))
                        : spans.status());
      return {};
    }
    for (const storage::BatchSpan& span : *spans) {
      const storage::BatchHeader& header = span.header;
      if (entries.size() >= max_count) break;
      if (!entries.empty() && bytes + header.size_bytes() > max_bytes) return entries;  // always at least one
      // Read from an entry start: the first batch begins exactly there, and batches follow each other (a replica's
      // cleaner keeps every batch's range). Unless the log start moved past `expected` meanwhile (above).
      if (static_cast<raft::Index>(header.base_offset) + 1 != expected) {
        SLUICE_ASSERT(offset_of_raft_index(expected) < log_.log_start_offset());
        SLUICE_PROBE("partition_raft_log.read_below_log_start");
        return entries;
      }
      raft::Entry entry;
      entry.term = header.partition_leader_epoch < 0 ? 0 : static_cast<raft::Term>(header.partition_leader_epoch);
      entry.count = batch_index_count(header);
      const auto* data_bytes = reinterpret_cast<const char*>(data->records.data() + span.position);
      entry.payload.assign(data_bytes, header.size_bytes());
      expected += entry.count;
      bytes += header.size_bytes();
      entries.push_back(std::move(entry));
    }
  }
  SLUICE_ASSERT(entries.size() <= max_count);
  SLUICE_ASSERT(expected - 1 <= last_index());
  return entries;
}

raft::Index PartitionRaftLog::last_index_with_term_at_most(raft::Index at_or_below, raft::Term term) const {
  SLUICE_ASSERT(at_or_below <= last_index());
  if (at_or_below == 0) return 0;
  if (poisoned()) return RaftLog::last_index_with_term_at_most(at_or_below, term);  // walks the view
  const int32_t epoch = term > static_cast<raft::Term>(INT32_MAX) ? INT32_MAX : static_cast<int32_t>(term);
  const int64_t offset = log_.last_offset_with_epoch_at_most(offset_of_raft_index(at_or_below), epoch);
  if (offset < 0) return 0;
  SLUICE_ASSERT(offset <= offset_of_raft_index(at_or_below));
  return static_cast<raft::Index>(offset) + 1;
}

raft::Index PartitionRaftLog::log_start() const {
  if (reset_start_.has_value()) return *reset_start_;
  const int64_t start = log_.log_start_offset();
  if (poisoned()) return std::min(raft_index_for_end_offset(start), last_index());
  if (start == log_.log_end_offset()) return raft_index_for_end_offset(start);
  Result<int64_t> base = log_.batch_base_offset_containing(start);
  if (!base.ok()) {
    // Moved meanwhile (retention beside the driver), or a truncation beside this lookup emptied the log.
    if (log_.log_start_offset() != start || log_.log_end_offset() == start) return log_start();
    poison(base.status());
    return raft_index_for_end_offset(start);
  }
  // The batch holding the start, or the first after it when compaction left a gap there (up to the log end).
  SLUICE_ASSERT(*base <= log_.log_end_offset());
  const auto index = static_cast<raft::Index>(*base);
  SLUICE_ASSERT(index <= last_index());
  return index;
}

void PartitionRaftLog::advance_start(raft::Index through) {
  SLUICE_ASSERT(through <= last_index());
  if (!failure_.ok()) return;
  const auto offset = static_cast<int64_t>(through);  // indexes up to `through` are the offsets below it
  if (offset <= log_.log_start_offset()) return;
  // `through` is committed: the high watermark reaches it at this round's end anyway (Partition::on_commit).
  if (log_.high_watermark() < offset) log_.set_high_watermark(offset);
  const int64_t before = log_.log_start_offset();
  if (Status s = log_.advance_log_start(offset); !s.ok()) return poison(s);
  if (Result<size_t> removed = log_.remove_segments_below_log_start(); !removed.ok()) return poison(removed.status());
  SLUICE_ASSERT(log_.log_start_offset() == offset);
  SLUICE_ASSERT(log_.log_start_offset() > before);
}

void PartitionRaftLog::reset_to(raft::Index start, raft::Term term) {
  SLUICE_ASSERT(term <= static_cast<raft::Term>(INT32_MAX));
  const auto offset = static_cast<int64_t>(start);
  SLUICE_ASSERT(offset >= log_.log_start_offset());
  if (poisoned()) return reset_unwritten(start, term);
  const int32_t epoch = term == 0 ? storage::kUndefinedEpoch : static_cast<int32_t>(term);
  if (Status s = log_.restart_at(offset, epoch); !s.ok()) {
    poison(s);
    return reset_unwritten(start, term);
  }
  SLUICE_ASSERT(last_index() == start);
  SLUICE_ASSERT(durable_index() == start);
  SLUICE_ASSERT(term_at(start) == term);
}

void PartitionRaftLog::reset_unwritten(raft::Index start, raft::Term term) {
  SLUICE_ASSERT(poisoned());
  unwritten_.clear();
  kept_end_ = start;  // answered by the reset, not by the real log
  reset_start_ = start;
  reset_term_ = term;
  SLUICE_ASSERT(last_index() == start);
}

Status PartitionRaftLog::sync() {
  if (!failure_.ok()) return failure_;
  if (Status s = log_.flush(); !s.ok()) {
    poison(s);
    return s;
  }
  SLUICE_ASSERT(durable_index() == last_index());
  return Status();
}

Result<std::unique_ptr<PartitionGroupStorage>> PartitionGroupStorage::open(Env env, storage::PartitionLog& log,
                                                                           int32_t node_id) {
  SLUICE_ASSIGN_OR_RETURN(raft::HardStateFile hard_state,
                          raft::HardStateFile::open(env.fs, log.dir() + "/" + kHardStateFileName));
  return std::unique_ptr<PartitionGroupStorage>(
      new PartitionGroupStorage(env, log, node_id, std::move(hard_state)));
}

Status PartitionGroupStorage::status() const {
  if (!log_.status().ok()) return log_.status();
  return hard_state_.status();
}

}  // namespace sluice::cluster
