// SimDisk: one simulated node's disk. It outlives the node's crashes and power losses; each boot of the node
// gets a SimFileSystem over it. Every operation completes at once in virtual time and never touches a
// Scheduler.
//
// Durability (see sim/sim_inode.h): File::sync makes one inode's data and size durable (fdatasync), sync_dir
// makes one directory's pending entry operations durable (and, with a rename's half, the other directory's up
// to its other half, as one journal commit would). Nothing else is durable: not a mkdir, not a create, not a
// rename. power_loss() keeps, per file, a random prefix of its un-synced writes with the next one torn at
// sector granularity, and per directory a random prefix of its un-synced entry operations. Handles opened
// before it fail.
//
// Faults: a capacity (ENOSPC as kNoSpace, nothing half-written), I/O errors (kIoError) with a probability per
// kind of operation or for the next N operations of a kind under a path prefix, damaged reads of intact files
// (corrupt_next_reads), and fsyncgate: after a failed
// sync a random prefix of the file's un-synced writes may have reached the disk, the rest never will, though
// reads still return them until power is lost. Randomness comes only from the fault streams handed in.
//
// Space is charged for the volatile size of every file that has a name or an open handle; a removed file's
// space comes back when its last handle closes. Paths are relative to the disk root; "./" and "/" in front
// are accepted, ".." is not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/file_system.h"
#include "core/env/random.h"
#include "sim/world/sim_inode.h"

namespace sluice {

enum class DiskOp : uint8_t {
  kRead = 0,      // File::pread
  kWrite = 1,     // File::append, pwrite, truncate
  kSync = 2,      // File::sync, FileSystem::sync_dir
  kMetadata = 3,  // open, remove, rename, list, create_dirs, remove_dir
};
inline constexpr size_t kDiskOpKinds = 4;
std::string_view disk_op_name(DiskOp op);

struct SimDiskOptions {
  uint64_t capacity_bytes = uint64_t{4} << 30;
  // The kernel's writeback: beyond this many un-synced bytes in one file its oldest writes reach the disk.
  // Kafka never fsyncs by default, so without it a long run would hold every byte three times.
  uint64_t writeback_bytes_max = uint64_t{64} << 20;
  // The same for a directory's un-synced entry operations (a journal commits every few seconds).
  size_t writeback_entry_ops_max = 4096;
};

struct SimDiskStats {
  uint64_t reads = 0;
  uint64_t bytes_read = 0;
  uint64_t writes = 0;  // appends, pwrites and truncates that succeeded
  uint64_t bytes_written = 0;
  uint64_t syncs = 0;         // successful File::sync
  uint64_t dir_syncs = 0;     // successful sync_dir
  uint64_t failed_syncs = 0;  // both kinds
  uint64_t injected_errors = 0;
  uint64_t no_space_errors = 0;
  uint64_t power_losses = 0;
  uint64_t torn_writes = 0;
  uint64_t garbage_sectors = 0;
  uint64_t corrupted_reads = 0;  // reads answered with damaged bytes (corrupt_next_reads)
  uint64_t lost_writes = 0;     // un-synced data operations dropped whole by power losses
  uint64_t lost_entry_ops = 0;  // un-synced directory operations forgotten by power losses
  uint64_t writeback_ops = 0;   // operations made durable without a sync
};

class SimDisk {
 public:
  explicit SimDisk(Random fault_rng, SimDiskOptions options = {});
  ~SimDisk();  // REQUIRES: every handle opened on this disk has been destroyed
  SimDisk(const SimDisk&) = delete;
  SimDisk& operator=(const SimDisk&) = delete;

  // --- Namespace, by path (SimFileSystem forwards here) ---
  // Opens a file for a handle: on success the caller owns one handle reference, released by close_handle or
  // forget_handle.
  Result<InodeId> open(std::string_view path, OpenMode mode);
  Status remove(std::string_view path);
  Status rename(std::string_view from, std::string_view to);
  Result<std::vector<DirEntry>> list(std::string_view dir);
  Status create_dirs(std::string_view dir);
  Status remove_dir(std::string_view dir);
  Result<bool> exists(std::string_view path);
  Status sync_dir(std::string_view dir);

  // --- Data, through a handle of the current generation (`path` is its name at open, for fault matching) ---
  Result<size_t> read(InodeId inode, std::string_view path, uint64_t offset, MutableByteView out);
  // read() onto the end of `out` (File::pread_append): the same faults, damage and counts as a read of `count`.
  Result<size_t> read_append(InodeId inode, std::string_view path, uint64_t offset, size_t count, Bytes& out);
  // Appends when `offset` is empty.
  Status write(InodeId inode, std::string_view path, std::optional<uint64_t> offset, ByteView data);
  Status truncate(InodeId inode, std::string_view path, uint64_t size);
  Status sync(InodeId inode, std::string_view path);
  uint64_t file_size(InodeId inode) const;
  void close_handle(InodeId inode);
  // The handle object is gone; `open` says it was neither closed nor killed by a power loss.
  void forget_handle(InodeId inode, uint64_t generation, bool open);

  // --- Faults ---
  // The machine lost power: see the top of this file. Draws only from `fault_rng`.
  void power_loss(Random& fault_rng);
  // The kernel flushed some dirty state: a random prefix of every file's and directory's un-synced operations
  // becomes durable. Draws only from `rng`.
  void writeback(Random& rng);
  void set_capacity_bytes(uint64_t bytes) { options_.capacity_bytes = bytes; }
  // Each operation of kind `op` fails with kIoError with probability `p`, drawn from the disk's fault stream.
  void set_error_probability(DiskOp op, double p);
  // The next `count` operations of kind `op` on a path starting with `path_prefix` (any path when empty)
  // fail.
  void fail_next(DiskOp op, uint32_t count, std::string path_prefix = {});
  // The next reads of `count` files under `path_prefix`, one read of each, return damaged bytes: one flipped bit, or
  // one sector of the file within the read as zeros, drawn from the disk's fault stream. The file stays intact (a bad
  // cable, a controller's or DMA's fault, a flipped bit in a cache): the damage is transient, so a file's next read is
  // true (bad copies that repeat are a bad sector: corrupt-segment's lasting damage). A call replaces the rule
  // pending.
  void corrupt_next_reads(uint32_t count, std::string path_prefix = {});
  // The next read of `path` that covers byte `offset` of the file returns that byte XOR `mask` (the file stays
  // intact): one bad copy placed where a test wants it. A call replaces the rule pending.
  void flip_in_next_read(std::string path, uint64_t offset, uint8_t mask);
  // The process dies at the `count`-th next operation of kind `op` on a path starting with `path_prefix`: that
  // operation and every later one fail, changing nothing (no fsyncgate drop: the process, not the disk, is gone),
  // and `dying` runs once so the caller can crash the node at this instant. clear_faults() (or end_dying()) ends it.
  void die_at(DiskOp op, uint32_t count, std::string path_prefix, std::function<void()> dying);
  void end_dying();
  bool dying() const { return dying_; }
  void clear_faults();

  // --- Observation ---
  // Bumped by every power loss; handles remember the one they were opened in.
  uint64_t generation() const { return generation_; }
  uint64_t capacity_bytes() const { return options_.capacity_bytes; }
  uint64_t used_bytes() const { return used_bytes_; }
  uint64_t free_bytes() const;
  const SimDiskStats& stats() const { return stats_; }
  size_t inode_count() const { return inodes_.size(); }
  // Hash of the durable state (names, kinds, bytes), for run-twice determinism checks.
  uint64_t trace_state_hash() const;
  // One line per file and directory of the volatile namespace, with durable sizes and pending operations.
  std::string describe() const;
  // O(inodes + entries): accounting, names and pending operations agree. Tests call it; SLUICE_VERIFY wraps
  // it.
  bool consistent() const;

 private:
  struct FailRule {
    DiskOp op;
    uint32_t remaining;
    std::string path_prefix;
  };
  struct CorruptRule {
    uint32_t remaining;
    std::string path_prefix;
    std::set<InodeId> damaged;  // each file is damaged once at most
  };
  // Where a path leads: its parent directory, its last name, and what that name holds now (kNoInode if
  // nothing).
  struct Location {
    InodeId parent = kNoInode;
    std::string name;
    InodeId target = kNoInode;
  };

  Result<InodeId> walk(std::span<const std::string> parts, std::string_view path) const;
  Result<Location> locate(std::string_view path) const;
  Result<InodeId> locate_dir(std::string_view path) const;
  SimInode& inode(InodeId id);
  const SimInode& inode(InodeId id) const;
  SimInode& open_file(InodeId id);
  InodeId new_inode(bool is_dir);
  uint64_t next_txn() { return next_txn_++; }
  void link(InodeId parent, const std::string& name, InodeId target);
  void unlink(const Location& at);
  Status rename_checks(const Location& from, const Location& to, std::string_view from_path,
                       std::string_view to_path) const;
  void uncharge_if_unreferenced(SimInode& node);
  void resize_charge(uint64_t size_before, uint64_t size_after);
  Status reserve(uint64_t growth, std::string_view path);
  Status inject(DiskOp op, std::string_view path);
  void damage_read(uint64_t offset, MutableByteView bytes);
  // What follows a read of `bytes` at `offset`, in place: its counts and the damage rules.
  void after_read(InodeId id, std::string_view path, uint64_t offset, MutableByteView bytes);
  Status fail_file_sync(SimInode& node, Status error);
  void writeback_if_needed(InodeId dir);
  void collect();
  SimRefCounter ref_counter() { return SimRefCounter(inodes_, refs_); }
  void describe_dir(InodeId dir, const std::string& path, std::string& out) const;

  SimDiskOptions options_;
  Random fault_rng_;
  SimInodeTable inodes_;
  SimRefs refs_;  // what the next collection must look at
  InodeId next_inode_ = kRootInode + 1;
  uint64_t next_txn_ = 1;
  uint64_t generation_ = 1;
  uint64_t used_bytes_ = 0;
  uint64_t handle_objects_ = 0;  // SimFile objects alive, dead or not
  std::array<double, kDiskOpKinds> error_probability_{};
  std::vector<FailRule> fail_rules_;
  std::optional<CorruptRule> corrupt_rule_;
  struct FlipRule {
    std::string path;
    uint64_t offset;
    uint8_t mask;
  };
  std::optional<FlipRule> flip_rule_;
  std::optional<FailRule> die_rule_;
  std::function<void()> on_dying_;
  bool dying_ = false;
  SimDiskStats stats_;
};

}  // namespace sluice
