#include "sim/world/sim_inode.h"

#include <algorithm>
#include <set>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/base/assert.h"

namespace sluice {
namespace {

// XXH3 seeded with the hash so far: the trace hash folds every durable byte of every simulated disk at the end of a
// run (megabytes), which a mix per 8-byte word made a chain of dependent multiplies.
uint64_t hash_bytes(uint64_t h, ByteView bytes) { return XXH3_64bits_withSeed(bytes.data(), bytes.size(), h); }

// Applies `op` to `entries`; with `refs`, counts the entries it replaces and adds.
void apply_entry_op(SimEntries& entries, const SimEntryOp& op, SimRefCounter* refs) {
  SLUICE_ASSERT(!op.changes.empty());
  for (const SimEntryChange& change : op.changes) {
    SLUICE_ASSERT(!change.name.empty());
    const auto found = entries.find(change.name);
    if (found != entries.end()) {
      if (refs != nullptr) refs->drop(found->second);
      if (change.target == kNoInode) {
        entries.erase(found);
      } else {
        found->second = change.target;
      }
    } else if (change.target != kNoInode) {
      entries.emplace(change.name, change.target);
    }
    if (refs != nullptr && change.target != kNoInode) refs->add(change.target);
  }
}

void add_op_references(const SimEntryOp& op, SimRefCounter& refs) {
  if (op.partner != kNoInode) refs.add(op.partner);
  for (const SimEntryChange& change : op.changes) {
    if (change.target != kNoInode) refs.add(change.target);
  }
}

void drop_op_references(const SimEntryOp& op, SimRefCounter& refs) {
  if (op.partner != kNoInode) refs.drop(op.partner);
  for (const SimEntryChange& change : op.changes) {
    if (change.target != kNoInode) refs.drop(change.target);
  }
}

uint64_t hash_dir(const SimInodeTable& table, InodeId dir, uint64_t h, int depth) {
  // Every inode has at most one durable name (renames commit atomically), so the reachable tree is finite;
  // the bound only turns a modelling bug into an assertion instead of a stack overflow.
  SLUICE_ASSERT(depth < 4096);
  const SimInode& node = table.at(dir);
  SLUICE_ASSERT(node.is_dir);
  for (const auto& [name, child] : node.dir.durable()) {
    h = hash_bytes(h, as_bytes(name));
    const SimInode& entry = table.at(child);
    h = entry.is_dir ? hash_dir(table, child, mix64(h ^ 1), depth + 1) : mix64(h ^ entry.file.durable_hash());
  }
  return mix64(h ^ 0xd1);  // closes the directory, so moving an entry up a level changes the hash
}

}  // namespace

void apply_data_op(Bytes& image, const SimDataOp& op) {
  if (op.kind == SimDataOp::Kind::kTruncate) {
    SLUICE_ASSERT(op.data.empty());
    image.resize(op.offset);
    return;
  }
  SLUICE_ASSERT(!op.data.empty());
  if (image.size() < op.offset) image.resize(op.offset);  // a write past the end leaves a hole of zeros
  // What exists is overwritten and the rest appended: an append, the usual write, zero-fills nothing first.
  const size_t overwritten = std::min<size_t>(op.data.size(), image.size() - op.offset);
  std::copy_n(op.data.begin(), overwritten, image.begin() + static_cast<ptrdiff_t>(op.offset));
  image.insert(image.end(), op.data.begin() + static_cast<ptrdiff_t>(overwritten), op.data.end());
  SLUICE_ASSERT(image.size() >= op.end());
}

bool apply_torn_write(Bytes& image, const SimDataOp& op, Random& rng) {
  SLUICE_ASSERT(op.kind == SimDataOp::Kind::kWrite);
  SLUICE_ASSERT(!op.data.empty());
  const uint64_t end = op.end();
  const uint64_t first_sector = op.offset / kSimSectorBytes;
  const uint64_t end_sector = (end + kSimSectorBytes - 1) / kSimSectorBytes;
  SLUICE_ASSERT(end_sector > first_sector);
  // Fewer sectors than the write touches: a whole survival is the "survived fully" case, not a tear.
  const uint64_t kept_sectors = rng.uniform(end_sector - first_sector);
  const uint64_t cut =
      kept_sectors == 0 ? op.offset : std::min(end, (first_sector + kept_sectors) * kSimSectorBytes);
  SLUICE_ASSERT(cut >= op.offset);
  SLUICE_ASSERT(cut < end);
  SLUICE_ASSERT(cut == op.offset || cut % kSimSectorBytes == 0);
  if (cut > op.offset) {
    const auto prefix_end = op.data.begin() + static_cast<ptrdiff_t>(cut - op.offset);
    apply_data_op(image, SimDataOp{SimDataOp::Kind::kWrite, op.offset, Bytes(op.data.begin(), prefix_end)});
  }
  if (!rng.chance(0.5)) return false;
  // The sector in flight: garbage (random, or zeros as from a size update without its data), but only over
  // bytes this write covered; the rest of the sector keeps its durable content.
  const uint64_t garbage_end = std::min(end, (cut / kSimSectorBytes + 1) * kSimSectorBytes);
  SLUICE_ASSERT(garbage_end > cut);
  SLUICE_ASSERT(garbage_end - cut <= kSimSectorBytes);
  Bytes garbage(garbage_end - cut, 0);
  if (rng.chance(0.5)) {
    for (uint8_t& byte : garbage) byte = static_cast<uint8_t>(rng.next_u64());
  }
  apply_data_op(image, SimDataOp{SimDataOp::Kind::kWrite, cut, std::move(garbage)});
  return true;
}

size_t SimFileImage::read(uint64_t offset, MutableByteView out) const {
  if (offset >= data_.size()) return 0;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), data_.size() - offset));
  std::copy_n(data_.begin() + static_cast<ptrdiff_t>(offset), n, out.begin());
  SLUICE_ASSERT(n <= out.size());
  return n;
}

size_t SimFileImage::read_append(uint64_t offset, size_t count, Bytes& out) const {
  if (offset >= data_.size()) return 0;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(count, data_.size() - offset));
  const auto from = data_.begin() + static_cast<ptrdiff_t>(offset);
  out.insert(out.end(), from, from + static_cast<ptrdiff_t>(n));
  return n;
}

void SimFileImage::write(uint64_t offset, ByteView bytes) {
  SLUICE_ASSERT(!bytes.empty());
  if (offset < durable_length_) copy_durable();  // synced bytes change in the page cache only
  const uint64_t size_before = data_.size();
  SimDataOp op{SimDataOp::Kind::kWrite, offset, Bytes(bytes.begin(), bytes.end())};
  apply_data_op(data_, op);
  SLUICE_ASSERT(data_.size() == std::max(size_before, op.end()));
  unsynced_bytes_ += bytes.size();
  unsynced_.push_back(std::move(op));
}

void SimFileImage::truncate(uint64_t new_size) {
  // Equal sizes make the truncate a no-op after every prefix that includes it, unless a failed sync has split
  // the page cache from the durable story.
  if (new_size == data_.size() && !diverged_) return;
  if (new_size < durable_length_) copy_durable();
  SimDataOp op{SimDataOp::Kind::kTruncate, new_size, {}};
  apply_data_op(data_, op);
  SLUICE_ASSERT(data_.size() == new_size);
  unsynced_.push_back(std::move(op));
}

void SimFileImage::copy_durable() {
  if (durable_copy_) return;
  SLUICE_ASSERT(durable_length_ <= data_.size());
  durable_copy_.emplace(data_.begin(), data_.begin() + static_cast<ptrdiff_t>(durable_length_));
  durable_length_ = 0;  // unused while the copy is
}

void SimFileImage::commit_one(const SimDataOp& op) {
  if (!durable_copy_) {
    SLUICE_ASSERT(durable_length_ <= data_.size());
    // A prefix still: the write appends to the durable image, and the page cache holds its bytes as written (no
    // later write has overwritten them since).
    const bool appends = op.kind == SimDataOp::Kind::kWrite && op.offset == durable_length_ &&
                         op.end() <= data_.size() &&
                         std::equal(op.data.begin(), op.data.end(), data_.begin() + static_cast<ptrdiff_t>(op.offset));
    if (appends) {
      durable_length_ = op.end();
      return;
    }
    if (op.kind == SimDataOp::Kind::kTruncate && op.offset == durable_length_) return;  // to its own size
    copy_durable();
  }
  apply_data_op(*durable_copy_, op);
}

void SimFileImage::commit(size_t count) {
  SLUICE_ASSERT(count <= unsynced_.size());
  for (size_t i = 0; i < count; ++i) {
    const SimDataOp& op = unsynced_.front();
    commit_one(op);
    SLUICE_ASSERT(unsynced_bytes_ >= op.data.size());
    unsynced_bytes_ -= op.data.size();
    unsynced_.pop_front();
  }
  if (unsynced_.empty()) {
    SLUICE_ASSERT(unsynced_bytes_ == 0);
    // The byte-for-byte comparison is consistent(), checked at power loss: here it would make every sync
    // O(file size).
    SLUICE_ASSERT(diverged_ || durable_size() == data_.size());
    // A copy stays, although the images are equal again: a file written in place (an index preallocated, then
    // filled) would otherwise be copied whole at each sync. Until a power loss, it is the two buffers of before.
  }
}

size_t SimFileImage::commit_until(uint64_t max_bytes) {
  size_t count = 0;
  uint64_t remaining = unsynced_bytes_;
  while (remaining > max_bytes) {
    SLUICE_ASSERT(count < unsynced_.size());
    remaining -= unsynced_[count].data.size();
    ++count;
  }
  commit(count);
  SLUICE_ASSERT(unsynced_bytes_ <= max_bytes);
  return count;
}

void SimFileImage::fail_sync(size_t persisted) {
  SLUICE_ASSERT(persisted <= unsynced_.size());
  commit(persisted);
  if (!unsynced_.empty()) diverged_ = true;
  unsynced_.clear();
  unsynced_bytes_ = 0;
}

SimTearReport SimFileImage::lose_power(Random& rng) {
  SimTearReport report;
  const size_t count = unsynced_.size();
  report.ops_kept = count == 0 ? 0 : static_cast<size_t>(rng.uniform(count + 1));
  commit(report.ops_kept);
  if (!unsynced_.empty()) {
    const SimDataOp& next = unsynced_.front();
    // A truncate is one metadata update: it happens whole or not at all, so it is simply lost here.
    report.torn = next.kind == SimDataOp::Kind::kWrite;
    if (report.torn) {
      copy_durable();
      report.garbage = apply_torn_write(*durable_copy_, next, rng);
    }
    report.ops_lost = unsynced_.size() - (report.torn ? 1 : 0);
  }
  SLUICE_ASSERT(report.ops_kept + report.ops_lost + (report.torn ? 1 : 0) == count);
  unsynced_.clear();
  unsynced_bytes_ = 0;
  diverged_ = false;
  if (durable_copy_) {
    data_ = std::move(*durable_copy_);
    durable_copy_.reset();
  } else {
    data_.resize(durable_length_);
  }
  durable_length_ = data_.size();
  return report;
}

uint64_t SimFileImage::durable_hash() const { return hash_bytes(0x5eed, durable()); }

bool SimFileImage::consistent() const {
  uint64_t bytes = 0;
  for (const SimDataOp& op : unsynced_) {
    if ((op.kind == SimDataOp::Kind::kWrite) == op.data.empty()) return false;
    bytes += op.data.size();
  }
  if (bytes != unsynced_bytes_) return false;
  if (!durable_copy_ && durable_length_ > data_.size()) return false;
  if (diverged_) return true;
  const ByteView durable_image = durable();
  Bytes replay(durable_image.begin(), durable_image.end());
  for (const SimDataOp& op : unsynced_) apply_data_op(replay, op);
  return replay == data_;
}

InodeId SimDirImage::find(std::string_view name) const {
  const auto found = entries_.find(name);
  return found == entries_.end() ? kNoInode : found->second;
}

void SimDirImage::record(SimEntryOp op, SimRefCounter refs) {
  SLUICE_ASSERT(op.txn > 0);
  SLUICE_ASSERT(unsynced_.empty() || unsynced_.back().txn < op.txn);
  // The queued operation references its targets first, so no count touches zero on the way.
  add_op_references(op, refs);
  apply_entry_op(entries_, op, &refs);
  unsynced_.push_back(std::move(op));
}

void SimDirImage::commit_through(uint64_t txn, SimRefCounter refs) {
  while (!unsynced_.empty() && unsynced_.front().txn <= txn) {
    apply_entry_op(durable_, unsynced_.front(), &refs);
    drop_op_references(unsynced_.front(), refs);
    unsynced_.pop_front();
  }
  if (unsynced_.empty()) SLUICE_VERIFY(durable_ == entries_);
}

void SimDirImage::lose_power(size_t kept, SimRefCounter refs) {
  const size_t queued = unsynced_.size();
  SLUICE_ASSERT(kept <= queued);
  if (kept > 0) commit_through(unsynced_[kept - 1].txn, refs);
  SLUICE_ASSERT(unsynced_.size() == queued - kept);  // txns strictly increase, so exactly `kept` committed
  for (const auto& [name, child] : durable_) refs.add(child);  // the new volatile entries, counted first
  for (const SimEntryOp& op : unsynced_) drop_op_references(op, refs);
  unsynced_.clear();
  for (const auto& [name, child] : entries_) refs.drop(child);
  entries_ = durable_;
}

size_t SimDirImage::find_txn(uint64_t txn) const {
  // Txns increase along the queue.
  const auto found = std::lower_bound(unsynced_.begin(), unsynced_.end(), txn,
                                      [](const SimEntryOp& op, uint64_t value) { return op.txn < value; });
  if (found == unsynced_.end() || found->txn != txn) return static_cast<size_t>(-1);
  return static_cast<size_t>(found - unsynced_.begin());
}

bool SimDirImage::consistent() const {
  SimEntries replay = durable_;
  uint64_t last_txn = 0;
  for (const SimEntryOp& op : unsynced_) {
    if (op.txn <= last_txn || op.changes.empty()) return false;
    last_txn = op.txn;
    apply_entry_op(replay, op, nullptr);
  }
  return replay == entries_;
}

size_t commit_dir_through(SimInodeTable& table, SimRefs& refs, InodeId dir, uint64_t txn) {
  SimRefCounter counter(table, refs);
  size_t committed = 0;
  std::vector<std::pair<InodeId, uint64_t>> work{{dir, txn}};
  // Each push stands for an operation committed here, and an operation commits once: the loop is bounded.
  while (!work.empty()) {
    const auto [id, through] = work.back();
    work.pop_back();
    SimInode& node = table.at(id);
    SLUICE_ASSERT(node.is_dir);
    for (const SimEntryOp& op : node.dir.unsynced()) {
      if (op.txn > through) break;
      if (op.partner != kNoInode) work.emplace_back(op.partner, op.txn);
      ++committed;
    }
    node.dir.commit_through(through, counter);
  }
  return committed;
}

size_t commit_dir_prefix(SimInodeTable& table, SimRefs& refs, InodeId dir, size_t count) {
  const SimInode& node = table.at(dir);
  SLUICE_ASSERT(node.is_dir);
  SLUICE_ASSERT(count <= node.dir.unsynced().size());
  if (count == 0) return 0;
  const size_t committed = commit_dir_through(table, refs, dir, node.dir.unsynced()[count - 1].txn);
  SLUICE_ASSERT(committed >= count);
  return committed;
}

size_t lose_power_dirs(SimInodeTable& table, SimRefs& refs, Random& rng) {
  std::map<InodeId, size_t> kept;
  for (const auto& [id, node] : table) {
    if (!node.is_dir || node.dir.unsynced().empty()) continue;
    kept[id] = static_cast<size_t>(rng.uniform(node.dir.unsynced().size() + 1));
  }
  // A rename whose other half did not survive does not survive either. Cuts only shrink, so this ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [id, cut] : kept) {
      const std::deque<SimEntryOp>& ops = table.at(id).dir.unsynced();
      for (size_t i = 0; i < cut; ++i) {
        if (ops[i].partner == kNoInode) continue;
        const size_t other = table.at(ops[i].partner).dir.find_txn(ops[i].txn);
        SLUICE_ASSERT(other != static_cast<size_t>(-1));  // the halves commit together, so both are queued
        SLUICE_ASSERT(kept.contains(ops[i].partner));
        if (other >= kept.at(ops[i].partner)) {
          cut = i;
          changed = true;
          break;
        }
      }
    }
  }
  SimRefCounter counter(table, refs);
  size_t forgotten = 0;
  for (const auto& [id, cut] : kept) {
    SimDirImage& dir = table.at(id).dir;
    forgotten += dir.unsynced().size() - cut;
    dir.lose_power(cut, counter);
  }
  return forgotten;
}

void SimRefCounter::add(InodeId id) {
  SimInode& node = table_.at(id);
  ++node.dir_refs;
  SLUICE_ASSERT(node.dir_refs > 0);
}

void SimRefCounter::drop(InodeId id) {
  SimInode& node = table_.at(id);
  SLUICE_ASSERT(node.dir_refs > 0);
  --node.dir_refs;
  if (node.dir_refs == 0) {
    refs_.unreferenced.push_back(id);
  } else if (node.is_dir) {
    refs_.walk_needed = true;  // the start of an unreachable cycle, perhaps
  }
}

namespace {

// Drops what a dying inode referenced; the counts of the inodes it alone kept fall to zero.
void release_references(const SimInode& node, SimRefCounter& counter) {
  SLUICE_ASSERT(!node.linked);
  SLUICE_ASSERT(node.open_handles == 0);
  if (node.is_dir) node.dir.for_each_reference([&](InodeId child) { counter.drop(child); });
}

std::set<InodeId> reachable(const SimInodeTable& table) {
  SLUICE_ASSERT(table.contains(kRootInode));
  std::set<InodeId> marked{kRootInode};
  std::vector<InodeId> work{kRootInode};
  for (const auto& [id, node] : table) {
    if (node.open_handles > 0 && marked.insert(id).second) work.push_back(id);
  }
  while (!work.empty()) {
    const SimInode& node = table.at(work.back());
    work.pop_back();
    if (!node.is_dir) continue;
    node.dir.for_each_reference([&](InodeId child) {
      if (marked.insert(child).second) work.push_back(child);
    });
  }
  return marked;
}

// The walk: everything the root and the open handles do not reach goes, together.
size_t collect_unreachable(SimInodeTable& table, SimRefs& refs) {
  const std::set<InodeId> marked = reachable(table);
  SimRefCounter counter(table, refs);
  std::vector<InodeId> garbage;
  for (const auto& [id, node] : table) {
    if (marked.contains(id)) continue;
    garbage.push_back(id);
    if (!node.is_dir) continue;
    // Only the references to survivors need counting: the others go with it.
    node.dir.for_each_reference([&](InodeId child) {
      if (marked.contains(child)) counter.drop(child);
    });
  }
  for (const InodeId id : garbage) {
    const SimInode& node = table.at(id);
    SLUICE_ASSERT(!node.linked);
    SLUICE_ASSERT(node.open_handles == 0);
    table.erase(id);
  }
  // What a survivor's count says now is settled: it is reachable.
  refs.unreferenced.clear();
  refs.walk_needed = false;
  return garbage.size();
}

}  // namespace

size_t collect_garbage(SimInodeTable& table, SimRefs& refs) {
  SimRefCounter counter(table, refs);
  size_t dropped = 0;
  while (!refs.walk_needed && !refs.unreferenced.empty()) {
    const InodeId id = refs.unreferenced.back();
    refs.unreferenced.pop_back();
    const SimInode* found = table.find(id);
    if (found == nullptr) continue;  // listed twice, and gone already
    const SimInode& node = *found;
    if (node.dir_refs > 0 || node.open_handles > 0) continue;  // referenced again, or open
    SLUICE_ASSERT(id != kRootInode);  // nothing references the root, so nothing drops it
    release_references(node, counter);
    table.erase(id);
    ++dropped;
  }
  if (refs.walk_needed) dropped += collect_unreachable(table, refs);
  return dropped;
}

bool refs_consistent(const SimInodeTable& table) {
  std::map<InodeId, uint32_t> counted;
  for (const auto& [id, node] : table) {
    if (node.is_dir) node.dir.for_each_reference([&](InodeId child) { ++counted[child]; });
  }
  for (const auto& [id, node] : table) {
    const uint32_t expected = counted.contains(id) ? counted.at(id) : 0;
    if (node.dir_refs != expected) return false;
  }
  return reachable(table).size() == table.size();
}

uint64_t durable_tree_hash(const SimInodeTable& table) { return hash_dir(table, kRootInode, 0x0d15c, 0); }

}  // namespace sluice
