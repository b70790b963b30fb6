// The durability model under SimDisk, apart from paths and handles. A file inode keeps a DURABLE image (what
// the platters hold), a VOLATILE image (what reads see: the page cache) and, in order, the un-synced
// operations that lead from the first to the second. A directory inode keeps its durable entries, its
// volatile entries and, in order, the un-synced entry operations between them (a journaled file system's view
// of metadata).
//
// A sync commits operations to the durable side; a power loss keeps a random prefix of them (for a file, the
// next write torn at 512-byte sector granularity) and forgets the rest. LevelDB's fault env and
// FoundationDB's AsyncFileNonDurable are the models; the tear rule is ours: a tear never touches a byte the
// torn write did not cover, so synced bytes that nothing overwrote since always survive byte-exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/assert.h"
#include "core/base/bytes.h"
#include "core/env/random.h"

namespace sluice {

inline constexpr uint64_t kSimSectorBytes = 512;

using InodeId = uint64_t;
inline constexpr InodeId kNoInode = 0;
inline constexpr InodeId kRootInode = 1;

// One un-synced change to a file's data.
struct SimDataOp {
  enum class Kind : uint8_t { kWrite, kTruncate };
  Kind kind = Kind::kWrite;
  uint64_t offset = 0;  // kWrite: where the bytes go; kTruncate: the new size
  Bytes data;           // kWrite only, never empty

  uint64_t end() const { return kind == Kind::kWrite ? offset + data.size() : offset; }
};

// What a power loss did to one file.
struct SimTearReport {
  size_t ops_kept = 0;   // un-synced operations that survived whole
  size_t ops_lost = 0;   // un-synced operations that vanished whole
  bool torn = false;     // one write survived in part (and is not counted above)
  bool garbage = false;  // that write left one sector of garbage behind its surviving prefix
};

// The durable image is kept as a prefix of the volatile one while it is one (the usual life of a file: appends,
// then a sync): `durable_length_` bytes of data_, no copy. A change that makes the two differ below that length (an
// overwrite or truncate of synced bytes, a commit of bytes a later write has overwritten since, a power loss's
// tear) makes the durable image a buffer of its own, kept up to date by each commit from then on (a file written in
// place would otherwise be copied whole at every sync) until a power loss makes the two images one again. Both forms
// give the same images; the copy of every file cost a second buffer and a copy of every byte written.
class SimFileImage {
 public:
  uint64_t size() const { return data_.size(); }
  uint64_t durable_size() const { return durable_copy_ ? durable_copy_->size() : durable_length_; }
  ByteView data() const { return data_; }
  ByteView durable() const {
    return durable_copy_ ? ByteView(*durable_copy_) : ByteView(data_).first(durable_length_);
  }
  const std::deque<SimDataOp>& unsynced() const { return unsynced_; }
  uint64_t unsynced_bytes() const { return unsynced_bytes_; }
  // True after a failed sync: the page cache holds writes that will never reach the disk.
  bool diverged() const { return diverged_; }

  // Reads from the volatile image; fewer bytes only at its end.
  size_t read(uint64_t offset, MutableByteView out) const;
  // The same, appending up to `count` bytes to `out` in one copy; returns how many.
  size_t read_append(uint64_t offset, size_t count, Bytes& out) const;
  // REQUIRES: `bytes` is not empty.
  void write(uint64_t offset, ByteView bytes);
  void truncate(uint64_t new_size);

  // The oldest `count` un-synced operations reach the durable image (a sync, or the kernel's writeback).
  void commit(size_t count);
  void commit_all() { commit(unsynced_.size()); }
  // Writeback of the oldest operations until at most `max_bytes` of un-synced writes remain.
  size_t commit_until(uint64_t max_bytes);
  // A failed sync: the oldest `persisted` operations reached the disk anyway, the others never will, although
  // reads keep returning them until power is lost (Linux marks the pages clean after EIO: fsyncgate).
  void fail_sync(size_t persisted);
  // Keeps a random prefix of the un-synced operations and tears the next one; the result is both images.
  SimTearReport lose_power(Random& rng);

  uint64_t durable_hash() const;
  // O(size): the volatile image is the durable one plus the un-synced operations (unless diverged).
  bool consistent() const;
  // Whether the durable image is a buffer of its own (for tests: both forms must give the same images).
  bool durable_copied() const { return durable_copy_.has_value(); }

 private:
  // The durable image becomes a buffer of its own (a no-op when it is one).
  void copy_durable();
  // Applies the oldest un-synced operation to the durable image.
  void commit_one(const SimDataOp& op);

  Bytes data_;
  uint64_t durable_length_ = 0;        // without durable_copy_: the durable image is data_'s first bytes
  std::optional<Bytes> durable_copy_;  // the durable image, when it is not a prefix of data_
  std::deque<SimDataOp> unsynced_;
  uint64_t unsynced_bytes_ = 0;  // sum of the un-synced writes' lengths
  bool diverged_ = false;
};

// Applies one operation to an image.
void apply_data_op(Bytes& image, const SimDataOp& op);
// Applies a sector-aligned prefix of the write `op` (possibly empty, never all of it), then maybe one sector
// of garbage confined to the bytes `op` covers. Returns whether garbage was written.
bool apply_torn_write(Bytes& image, const SimDataOp& op, Random& rng);

// One change to a directory entry: `name` now names `target`, or nothing when target is kNoInode.
struct SimEntryChange {
  std::string name;
  InodeId target = kNoInode;
};

// One un-synced directory operation (create, remove, mkdir, rmdir, rename). A rename inside one directory is
// a single operation of two changes; a rename across directories is one operation in each, sharing `txn`, and
// the two halves commit or vanish together. Txns grow with time, so a directory's operations have increasing
// txns.
struct SimEntryOp {
  uint64_t txn = 0;
  InodeId partner = kNoInode;  // the other directory of a cross-directory rename
  std::vector<SimEntryChange> changes;
};

using SimEntries = std::map<std::string, InodeId, std::less<>>;

class SimRefCounter;

class SimDirImage {
 public:
  const SimEntries& entries() const { return entries_; }
  const SimEntries& durable() const { return durable_; }
  const std::deque<SimEntryOp>& unsynced() const { return unsynced_; }

  InodeId find(std::string_view name) const;  // kNoInode when absent
  // Applies `op` to the volatile entries and queues it. Every method that changes the image tells `refs`
  // which references it gained and lost.
  void record(SimEntryOp op, SimRefCounter refs);
  // Commits the un-synced operations whose txn is at most `txn` (a prefix).
  void commit_through(uint64_t txn, SimRefCounter refs);
  // Commits the oldest `kept` operations, forgets the others.
  void lose_power(size_t kept, SimRefCounter refs);
  // Index of the un-synced operation of `txn`, or npos.
  size_t find_txn(uint64_t txn) const;
  // O(entries + operations): the volatile entries are the durable ones plus the un-synced operations.
  bool consistent() const;
  // Calls `f` once per reference this image holds: each volatile and durable entry, each un-synced
  // operation's targets and partner.
  template <typename F>
  void for_each_reference(F&& f) const;

 private:
  SimEntries durable_;
  SimEntries entries_;
  std::deque<SimEntryOp> unsynced_;
};

struct SimInode {
  bool is_dir = false;
  // Named in the volatile namespace. Without hard links an inode has at most one volatile name.
  bool linked = true;
  uint32_t open_handles = 0;  // current-generation handles only
  uint32_t dir_refs = 0;      // references to it from directory images (SimDirImage::for_each_reference)
  SimFileImage file;          // files only
  SimDirImage dir;            // directories only
};

// The inodes by id. Iterated in id order (a power loss draws its randomness walking them). Ids are never reused and
// count up from the root's, so a vector indexed by id finds an inode without a walk down the map's tree: every read
// and write of a simulated file looks its inode up (2 % of a run's wall time with thousands of segment files).
class SimInodeTable {
 public:
  using Map = std::map<InodeId, SimInode>;

  SimInodeTable() = default;
  SimInodeTable(const SimInodeTable&) = delete;  // by_id_ points into map_
  SimInodeTable& operator=(const SimInodeTable&) = delete;

  SimInode* find(InodeId id) { return id < by_id_.size() ? by_id_[id] : nullptr; }
  const SimInode* find(InodeId id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }
  bool contains(InodeId id) const { return find(id) != nullptr; }
  SimInode& at(InodeId id) {
    SimInode* node = find(id);
    SLUICE_ASSERT(node != nullptr);
    return *node;
  }
  const SimInode& at(InodeId id) const {
    const SimInode* node = find(id);
    SLUICE_ASSERT(node != nullptr);
    return *node;
  }
  // REQUIRES: no inode has `id`.
  SimInode& emplace(InodeId id, SimInode node) {
    const auto [it, inserted] = map_.emplace(id, std::move(node));
    SLUICE_ASSERT(inserted);
    if (id >= by_id_.size()) by_id_.resize(id + 1, nullptr);
    SLUICE_ASSERT(by_id_[id] == nullptr);
    by_id_[id] = &it->second;
    return it->second;
  }
  // REQUIRES: an inode has `id`.
  void erase(InodeId id) {
    SLUICE_ASSERT(contains(id));
    by_id_[id] = nullptr;
    map_.erase(id);
  }
  size_t size() const { return map_.size(); }
  Map::iterator begin() { return map_.begin(); }
  Map::iterator end() { return map_.end(); }
  Map::const_iterator begin() const { return map_.begin(); }
  Map::const_iterator end() const { return map_.end(); }

 private:
  Map map_;
  std::vector<SimInode*> by_id_;  // null where no inode has the id (not yet, or no longer)
};

// What the reference counts say a collection must look at. Garbage is an inode that neither the root (through
// volatile, durable or un-synced entries) nor an open handle reaches. Counting each inode's references from
// directory images finds it where a count falls to zero, instead of walking the whole tree from the root at every
// sync_dir: with thousands of segment files that walk made syncs quadratic (15 % of a benchmark seed that drew
// 16 KiB segments). Counts alone miss one case, a cycle of directories no longer reachable from the root; it can
// only start where a directory loses a reference and keeps another, so that flags a walk.
struct SimRefs {
  std::vector<InodeId> unreferenced;  // counts that fell to zero, and files whose last handle closed
  bool walk_needed = false;
};

// Adjusts the counts of `table` as directory images change, noting in `refs` what may have become garbage. A
// pair of references, passed by value.
class SimRefCounter {
 public:
  SimRefCounter(SimInodeTable& table, SimRefs& refs) : table_(table), refs_(refs) {}
  void add(InodeId id);
  void drop(InodeId id);

 private:
  SimInodeTable& table_;
  SimRefs& refs_;
};

// Commits the operations of `dir` through `txn`, and with each half of a cross-directory rename the other
// half (and what precedes it there), as one journal commit would. Returns how many operations were committed.
size_t commit_dir_through(SimInodeTable& table, SimRefs& refs, InodeId dir, uint64_t txn);
// Commits the oldest `count` operations of `dir` the same way.
size_t commit_dir_prefix(SimInodeTable& table, SimRefs& refs, InodeId dir, size_t count);
// Power loss for every directory: a random prefix of each one's operations survives, both halves of a rename
// or neither. Returns how many operations were forgotten.
size_t lose_power_dirs(SimInodeTable& table, SimRefs& refs, Random& rng);
// Drops the garbage: the inodes `refs` lists that nothing references any more and that have no open handle
// (and what they alone referenced), or, when `refs` asks for a walk, every inode the root and the open handles
// do not reach. Returns how many.
size_t collect_garbage(SimInodeTable& table, SimRefs& refs);
// O(inodes + entries), for consistency checks: every inode's count matches the references held, and no inode is
// garbage.
bool refs_consistent(const SimInodeTable& table);

template <typename F>
void SimDirImage::for_each_reference(F&& f) const {
  for (const auto& [name, child] : entries_) f(child);
  for (const auto& [name, child] : durable_) f(child);
  for (const SimEntryOp& op : unsynced_) {
    if (op.partner != kNoInode) f(op.partner);  // keeps the other half of a pending rename addressable
    for (const SimEntryChange& change : op.changes) {
      if (change.target != kNoInode) f(change.target);
    }
  }
}

// Hash of the durable namespace reachable from the root: names, kinds and durable file bytes.
uint64_t durable_tree_hash(const SimInodeTable& table);

}  // namespace sluice
