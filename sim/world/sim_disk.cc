#include "sim/world/sim_disk.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "core/base/assert.h"

namespace sluice {
namespace {

// Splits a path into names. Empty and "." components are skipped, so "", ".", "/" and "./" all name the root.
Result<std::vector<std::string>> split_path(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view part = path.substr(start, slash - start);
    if (part == "..") return invalid_argument(std::string(path) + ": '..' is not supported");
    if (!part.empty() && part != ".") parts.emplace_back(part);
    start = slash + 1;
  }
  return parts;
}

std::string normalized(std::string_view path) {
  Result<std::vector<std::string>> parts = split_path(path);
  if (!parts.ok()) return std::string(path);
  std::string out;
  for (const std::string& part : *parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

// Only the front is normalized: "data/topic-0/" must not match "data/topic-00".
std::string normalized_prefix(std::string_view prefix) {
  while (prefix.starts_with("./") || prefix.starts_with("/"))
    prefix.remove_prefix(prefix.front() == '/' ? 1 : 2);
  return std::string(prefix);
}

}  // namespace

std::string_view disk_op_name(DiskOp op) {
  switch (op) {
    case DiskOp::kRead:
      return "read";
    case DiskOp::kWrite:
      return "write";
    case DiskOp::kSync:
      return "sync";
    case DiskOp::kMetadata:
      return "metadata";
  }
  SLUICE_UNREACHABLE();
}

SimDisk::SimDisk(Random fault_rng, SimDiskOptions options) : options_(options), fault_rng_(fault_rng) {
  SimInode root;
  root.is_dir = true;
  inodes_.emplace(kRootInode, std::move(root));
  SLUICE_ASSERT(next_inode_ > kRootInode);
}

SimDisk::~SimDisk() {
  // A File outliving its disk would touch freed memory; destroy the node's fibers before its disk.
  SLUICE_ASSERT_MSG(handle_objects_ == 0, "SimDisk destroyed while File handles are alive");
}

Result<InodeId> SimDisk::walk(std::span<const std::string> parts, std::string_view path) const {
  InodeId dir = kRootInode;
  for (const std::string& part : parts) {
    SLUICE_ASSERT(inode(dir).is_dir);
    const InodeId next = inode(dir).dir.find(part);
    if (next == kNoInode) return not_found(std::string(path) + ": no such directory: " + part);
    if (!inode(next).is_dir) return not_found(std::string(path) + ": not a directory: " + part);
    dir = next;
  }
  return dir;
}

Result<SimDisk::Location> SimDisk::locate(std::string_view path) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> parts, split_path(path));
  if (parts.empty()) return invalid_argument(std::string(path) + ": the disk root has no name");
  SLUICE_ASSIGN_OR_RETURN(InodeId parent,
                          walk(std::span<const std::string>(parts).first(parts.size() - 1), path));
  Location at{parent, parts.back(), kNoInode};
  at.target = inode(parent).dir.find(at.name);
  return at;
}

Result<InodeId> SimDisk::locate_dir(std::string_view path) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> parts, split_path(path));
  return walk(parts, path);
}

SimInode& SimDisk::inode(InodeId id) { return inodes_.at(id); }

const SimInode& SimDisk::inode(InodeId id) const { return inodes_.at(id); }

SimInode& SimDisk::open_file(InodeId id) {
  SimInode& node = inode(id);
  SLUICE_ASSERT(!node.is_dir);
  SLUICE_ASSERT(node.open_handles > 0);
  return node;
}

InodeId SimDisk::new_inode(bool is_dir) {
  const InodeId id = next_inode_++;
  SimInode node;
  node.is_dir = is_dir;
  inodes_.emplace(id, std::move(node));
  return id;
}

void SimDisk::link(InodeId parent, const std::string& name, InodeId target) {
  SLUICE_ASSERT(inode(parent).dir.find(name) == kNoInode);
  SLUICE_ASSERT(inode(target).linked);
  inode(parent).dir.record(SimEntryOp{next_txn(), kNoInode, {SimEntryChange{name, target}}}, ref_counter());
  writeback_if_needed(parent);
}

void SimDisk::unlink(const Location& at) {
  SLUICE_ASSERT(at.target != kNoInode);
  SLUICE_ASSERT(inode(at.parent).dir.find(at.name) == at.target);
  inode(at.parent).dir.record(SimEntryOp{next_txn(), kNoInode, {SimEntryChange{at.name, kNoInode}}},
                               ref_counter());
  SimInode& node = inode(at.target);
  SLUICE_ASSERT(node.linked);
  node.linked = false;
  uncharge_if_unreferenced(node);
  writeback_if_needed(at.parent);
}

void SimDisk::uncharge_if_unreferenced(SimInode& node) {
  if (node.is_dir || node.linked || node.open_handles > 0) return;
  SLUICE_ASSERT(used_bytes_ >= node.file.size());
  used_bytes_ -= node.file.size();
}

void SimDisk::resize_charge(uint64_t size_before, uint64_t size_after) {
  if (size_after >= size_before) {
    used_bytes_ += size_after - size_before;
  } else {
    SLUICE_ASSERT(used_bytes_ >= size_before - size_after);
    used_bytes_ -= size_before - size_after;
  }
}

Status SimDisk::reserve(uint64_t growth, std::string_view path) {
  if (growth == 0) return Status();
  if (used_bytes_ > options_.capacity_bytes || growth > options_.capacity_bytes - used_bytes_) {
    ++stats_.no_space_errors;
    return no_space(std::string(path) + ": disk full (" + std::to_string(used_bytes_) + " of " +
                    std::to_string(options_.capacity_bytes) + " bytes used, " + std::to_string(growth) +
                    " more)");
  }
  return Status();
}

Status SimDisk::inject(DiskOp op, std::string_view path) {
  if (die_rule_.has_value() && die_rule_->op == op && normalized(path).starts_with(die_rule_->path_prefix) &&
      --die_rule_->remaining == 0) {
    die_rule_.reset();
    dying_ = true;
    SLUICE_PROBE("sim_disk.process_died_at_op");
    if (on_dying_) std::exchange(on_dying_, nullptr)();
  }
  if (dying_) return io_error(std::string(path) + ": the process is dying");
  if (!fail_rules_.empty()) {
    const std::string name = normalized(path);
    for (auto rule = fail_rules_.begin(); rule != fail_rules_.end(); ++rule) {
      if (rule->op != op || !name.starts_with(rule->path_prefix)) continue;
      SLUICE_ASSERT(rule->remaining > 0);
      if (--rule->remaining == 0) fail_rules_.erase(rule);
      ++stats_.injected_errors;
      return io_error(std::string(path) + ": injected " + std::string(disk_op_name(op)) + " error");
    }
  }
  const double p = error_probability_[static_cast<size_t>(op)];
  if (p > 0 && fault_rng_.chance(p)) {
    ++stats_.injected_errors;
    return io_error(std::string(path) + ": simulated " + std::string(disk_op_name(op)) + " error");
  }
  return Status();
}

void SimDisk::flip_in_next_read(std::string path, uint64_t offset, uint8_t mask) {
  SLUICE_ASSERT(mask != 0);
  flip_rule_ = FlipRule{normalized(path), offset, mask};
}

void SimDisk::damage_read(uint64_t offset, MutableByteView bytes) {
  SLUICE_ASSERT(!bytes.empty());
  ++stats_.corrupted_reads;
  if (fault_rng_.uniform(2) == 0) {
    bytes[fault_rng_.uniform(bytes.size())] ^= static_cast<uint8_t>(1U << fault_rng_.uniform(8));
    SLUICE_PROBE("sim_disk.read_bit_flipped");
    return;
  }
  // One sector of the file that the read covers comes back as zeros (a sector the device could not read and
  // answered from a zeroed buffer).
  const uint64_t first = offset / kSimSectorBytes;
  const uint64_t last = (offset + bytes.size() - 1) / kSimSectorBytes;
  const uint64_t sector = first + fault_rng_.uniform(last - first + 1);
  const uint64_t from = std::max(sector * kSimSectorBytes, offset) - offset;
  const uint64_t to = std::min((sector + 1) * kSimSectorBytes, offset + bytes.size()) - offset;
  SLUICE_ASSERT(from < to && to <= bytes.size());
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.begin() + static_cast<std::ptrdiff_t>(to), 0);
  SLUICE_PROBE("sim_disk.read_sector_zeroed");
}

void SimDisk::writeback_if_needed(InodeId dir) {
  const size_t queued = inode(dir).dir.unsynced().size();
  if (queued <= options_.writeback_entry_ops_max) return;
  stats_.writeback_ops += commit_dir_prefix(inodes_, refs_, dir, queued / 2);
  collect();
}

// The whole-disk consistency check runs at power loss, not here: sync_dir is a hot step.
void SimDisk::collect() { collect_garbage(inodes_, refs_); }

Result<InodeId> SimDisk::open(std::string_view path, OpenMode mode) {
  SLUICE_TRY(inject(DiskOp::kMetadata, path));
  SLUICE_ASSIGN_OR_RETURN(Location at, locate(path));
  if (at.target == kNoInode) {
    if (mode == OpenMode::kRead || mode == OpenMode::kReadWrite) {
      return not_found(std::string(path) + ": no such file");
    }
    at.target = new_inode(/*is_dir=*/false);
    link(at.parent, at.name, at.target);
  } else {
    SimInode& node = inode(at.target);
    if (node.is_dir) return invalid_argument(std::string(path) + ": is a directory");
    if (mode == OpenMode::kCreateNew) return already_exists(std::string(path) + ": exists");
    if (mode == OpenMode::kCreateTruncate && node.file.size() > 0) {
      const uint64_t size_before = node.file.size();
      node.file.truncate(0);
      resize_charge(size_before, 0);
    }
  }
  SimInode& node = inode(at.target);
  SLUICE_ASSERT(!node.is_dir);
  SLUICE_ASSERT(node.linked);
  ++node.open_handles;
  ++handle_objects_;
  return at.target;
}

Status SimDisk::remove(std::string_view path) {
  SLUICE_TRY(inject(DiskOp::kMetadata, path));
  SLUICE_ASSIGN_OR_RETURN(Location at, locate(path));
  if (at.target == kNoInode) return not_found(std::string(path) + ": no such file");
  if (inode(at.target).is_dir)
    return invalid_argument(std::string(path) + ": is a directory (use remove_dir)");
  // The inode stays: open handles may still use it, and the un-synced removal may yet be undone by a power
  // loss.
  unlink(at);
  return Status();
}

Status SimDisk::rename_checks(const Location& from, const Location& to, std::string_view from_path,
                              std::string_view to_path) const {
  if (from.target == kNoInode) return not_found(std::string(from_path) + ": no such file or directory");
  const bool moves_dir = inode(from.target).is_dir;
  if (to.target != kNoInode && to.target != from.target) {
    const SimInode& replaced = inode(to.target);
    if (replaced.is_dir != moves_dir) {
      return invalid_argument(std::string(to_path) +
                              ": a rename cannot replace a file by a directory or back");
    }
    if (replaced.is_dir && !replaced.dir.entries().empty()) {
      return invalid_argument(std::string(to_path) + ": directory not empty");
    }
  }
  if (moves_dir) {
    // Paths have neither ".." nor links, so the name says whether `to` lies inside `from`.
    const std::string from_name = normalized(from_path);
    const std::string to_name = normalized(to_path);
    if (to_name.size() > from_name.size() && to_name.starts_with(from_name) &&
        to_name[from_name.size()] == '/') {
      return invalid_argument(std::string(to_path) + ": cannot move a directory inside itself");
    }
  }
  return Status();
}

Status SimDisk::rename(std::string_view from_path, std::string_view to_path) {
  SLUICE_TRY(inject(DiskOp::kMetadata, from_path));
  SLUICE_ASSIGN_OR_RETURN(Location from, locate(from_path));
  SLUICE_ASSIGN_OR_RETURN(Location to, locate(to_path));
  SLUICE_TRY(rename_checks(from, to, from_path, to_path));
  if (from.target == to.target) return Status();  // POSIX: a rename onto the same inode does nothing
  const uint64_t txn = next_txn();
  if (from.parent == to.parent) {
    inode(from.parent)
        .dir.record(SimEntryOp{txn,
                               kNoInode,
                               {SimEntryChange{from.name, kNoInode}, SimEntryChange{to.name, from.target}}},
                    ref_counter());
  } else {
    // Two halves, one txn: they survive a power loss together or not at all.
    inode(from.parent).dir.record(SimEntryOp{txn, to.parent, {SimEntryChange{from.name, kNoInode}}},
                                  ref_counter());
    inode(to.parent).dir.record(SimEntryOp{txn, from.parent, {SimEntryChange{to.name, from.target}}},
                                ref_counter());
  }
  SLUICE_ASSERT(inode(to.parent).dir.find(to.name) == from.target);
  SLUICE_ASSERT(inode(from.parent).dir.find(from.name) == kNoInode);
  if (to.target != kNoInode) {
    SimInode& replaced = inode(to.target);
    SLUICE_ASSERT(replaced.linked);
    replaced.linked = false;
    uncharge_if_unreferenced(replaced);
  }
  writeback_if_needed(from.parent);
  writeback_if_needed(to.parent);
  return Status();
}

Result<std::vector<DirEntry>> SimDisk::list(std::string_view dir) {
  SLUICE_TRY(inject(DiskOp::kMetadata, dir));
  SLUICE_ASSIGN_OR_RETURN(InodeId id, locate_dir(dir));
  std::vector<DirEntry> out;
  for (const auto& [name, child] : inode(id).dir.entries())
    out.push_back(DirEntry{name, inode(child).is_dir});
  return out;
}

Status SimDisk::create_dirs(std::string_view dir) {
  SLUICE_TRY(inject(DiskOp::kMetadata, dir));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> parts, split_path(dir));
  InodeId current = kRootInode;
  for (const std::string& part : parts) {
    InodeId next = inode(current).dir.find(part);
    if (next == kNoInode) {
      next = new_inode(/*is_dir=*/true);
      link(current, part, next);
    } else if (!inode(next).is_dir) {
      return already_exists(std::string(dir) + ": " + part + " is a file");
    }
    current = next;
  }
  SLUICE_ASSERT(inode(current).is_dir);
  return Status();
}

Status SimDisk::remove_dir(std::string_view dir) {
  SLUICE_TRY(inject(DiskOp::kMetadata, dir));
  SLUICE_ASSIGN_OR_RETURN(Location at, locate(dir));
  if (at.target == kNoInode) return not_found(std::string(dir) + ": no such directory");
  if (!inode(at.target).is_dir) return invalid_argument(std::string(dir) + ": not a directory");
  if (!inode(at.target).dir.entries().empty())
    return invalid_argument(std::string(dir) + ": directory not empty");
  unlink(at);
  return Status();
}

Result<bool> SimDisk::exists(std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> parts, split_path(path));
  InodeId current = kRootInode;
  for (const std::string& part : parts) {
    if (!inode(current).is_dir) return false;
    current = inode(current).dir.find(part);
    if (current == kNoInode) return false;
  }
  return true;
}

Status SimDisk::sync_dir(std::string_view dir) {
  SLUICE_ASSIGN_OR_RETURN(InodeId id, locate_dir(dir));
  const Status injected = inject(DiskOp::kSync, dir);
  if (dying_) return injected;
  const size_t queued = inode(id).dir.unsynced().size();
  if (!injected.ok()) {
    // A failed sync_dir promises nothing: any prefix of the operations may have been committed anyway.
    ++stats_.failed_syncs;
    const size_t persisted = queued == 0 ? 0 : static_cast<size_t>(fault_rng_.uniform(queued + 1));
    commit_dir_prefix(inodes_, refs_, id, persisted);
    collect();
    return injected;
  }
  const size_t committed = commit_dir_prefix(inodes_, refs_, id, queued);
  SLUICE_ASSERT(committed >= queued);
  SLUICE_ASSERT(inode(id).dir.unsynced().empty());
  ++stats_.dir_syncs;
  collect();
  return Status();
}

Result<size_t> SimDisk::read(InodeId id, std::string_view path, uint64_t offset, MutableByteView out) {
  const SimInode& node = open_file(id);
  SLUICE_TRY(inject(DiskOp::kRead, path));
  const size_t n = node.file.read(offset, out);
  SLUICE_ASSERT(n <= out.size());
  after_read(id, path, offset, out.first(n));
  return n;
}

Result<size_t> SimDisk::read_append(InodeId id, std::string_view path, uint64_t offset, size_t count, Bytes& out) {
  const SimInode& node = open_file(id);
  SLUICE_TRY(inject(DiskOp::kRead, path));
  const size_t had = out.size();
  const size_t n = node.file.read_append(offset, count, out);
  SLUICE_ASSERT(n <= count);
  SLUICE_ASSERT(out.size() == had + n);
  after_read(id, path, offset, MutableByteView(out).subspan(had));
  return n;
}

void SimDisk::after_read(InodeId id, std::string_view path, uint64_t offset, MutableByteView bytes) {
  const size_t n = bytes.size();
  ++stats_.reads;
  stats_.bytes_read += n;
  // Transient damage, not a bad sector: each file is damaged once per rule, so its next read is true.
  if (n > 0 && corrupt_rule_.has_value() && !corrupt_rule_->damaged.contains(id) &&
      normalized(path).starts_with(corrupt_rule_->path_prefix)) {
    damage_read(offset, bytes);
    corrupt_rule_->damaged.insert(id);
    if (--corrupt_rule_->remaining == 0) corrupt_rule_.reset();
  }
  if (flip_rule_.has_value() && offset <= flip_rule_->offset && flip_rule_->offset - offset < n &&
      normalized(path) == flip_rule_->path) {
    ++stats_.corrupted_reads;
    bytes[flip_rule_->offset - offset] ^= flip_rule_->mask;
    flip_rule_.reset();
  }
}

Status SimDisk::write(InodeId id, std::string_view path, std::optional<uint64_t> offset, ByteView data) {
  SimInode& node = open_file(id);
  SLUICE_TRY(inject(DiskOp::kWrite, path));
  const uint64_t size_before = node.file.size();
  const uint64_t at = offset.value_or(size_before);
  if (data.empty()) return Status();  // POSIX: a zero-length write changes nothing, not even the size
  if (at > std::numeric_limits<uint64_t>::max() - data.size()) {
    return invalid_argument(std::string(path) + ": write past the largest offset");
  }
  const uint64_t end = at + data.size();
  SLUICE_TRY(reserve(end > size_before ? end - size_before : 0, path));
  node.file.write(at, data);
  SLUICE_ASSERT(node.file.size() == std::max(size_before, end));
  resize_charge(size_before, node.file.size());
  ++stats_.writes;
  stats_.bytes_written += data.size();
  if (node.file.unsynced_bytes() > options_.writeback_bytes_max) {
    stats_.writeback_ops += node.file.commit_until(options_.writeback_bytes_max / 2);
  }
  return Status();
}

Status SimDisk::truncate(InodeId id, std::string_view path, uint64_t size) {
  SimInode& node = open_file(id);
  SLUICE_TRY(inject(DiskOp::kWrite, path));
  const uint64_t size_before = node.file.size();
  SLUICE_TRY(reserve(size > size_before ? size - size_before : 0, path));
  node.file.truncate(size);
  SLUICE_ASSERT(node.file.size() == size);
  resize_charge(size_before, size);
  ++stats_.writes;
  return Status();
}

Status SimDisk::sync(InodeId id, std::string_view path) {
  SimInode& node = open_file(id);
  const Status injected = inject(DiskOp::kSync, path);
  if (dying_) return injected;
  if (!injected.ok()) return fail_file_sync(node, injected);
  node.file.commit_all();
  SLUICE_ASSERT(node.file.unsynced().empty());
  ++stats_.syncs;
  return Status();
}

Status SimDisk::fail_file_sync(SimInode& node, Status error) {
  SLUICE_ASSERT(!error.ok());
  const size_t queued = node.file.unsynced().size();
  const size_t persisted = queued == 0 ? 0 : static_cast<size_t>(fault_rng_.uniform(queued + 1));
  if (persisted < queued) SLUICE_PROBE("sim_disk.fsyncgate_dropped_writes");
  node.file.fail_sync(persisted);
  SLUICE_ASSERT(node.file.unsynced().empty());
  ++stats_.failed_syncs;
  return error;
}

uint64_t SimDisk::file_size(InodeId id) const {
  const SimInode& node = inode(id);
  SLUICE_ASSERT(!node.is_dir);
  SLUICE_ASSERT(node.open_handles > 0);
  return node.file.size();
}

void SimDisk::close_handle(InodeId id) {
  SimInode& node = open_file(id);
  --node.open_handles;
  if (node.open_handles > 0 || node.linked) return;
  uncharge_if_unreferenced(node);  // the last handle of a removed file: its space comes back
  refs_.unreferenced.push_back(id);
  collect();
}

void SimDisk::forget_handle(InodeId id, uint64_t generation, bool open) {
  SLUICE_ASSERT(handle_objects_ > 0);
  SLUICE_ASSERT(generation <= generation_);
  --handle_objects_;
  if (open && generation == generation_) close_handle(id);
}

void SimDisk::power_loss(Random& rng) {
  ++generation_;
  ++stats_.power_losses;
  for (auto& [id, node] : inodes_) {
    node.open_handles = 0;
    node.linked = false;  // the volatile namespace is gone; survivors get their names back below
  }
  stats_.lost_entry_ops += lose_power_dirs(inodes_, refs_, rng);
  // Collect first, so that files nobody can reach any more draw nothing. No handle is open: walk the tree.
  refs_.walk_needed = true;
  collect_garbage(inodes_, refs_);
  used_bytes_ = 0;
  for (auto& [id, node] : inodes_) {
    node.linked = true;  // every inode left has its one durable name, now also its volatile one
    if (node.is_dir) continue;
    const SimTearReport report = node.file.lose_power(rng);
    if (report.torn) SLUICE_PROBE("sim_disk.torn_write");
    stats_.lost_writes += report.ops_lost;
    stats_.torn_writes += report.torn ? 1 : 0;
    stats_.garbage_sectors += report.garbage ? 1 : 0;
    used_bytes_ += node.file.size();
    SLUICE_ASSERT(node.file.unsynced().empty());
    SLUICE_ASSERT(node.file.size() == node.file.durable_size());
  }
  SLUICE_VERIFY(consistent());
}

void SimDisk::writeback(Random& rng) {
  for (auto& [id, node] : inodes_) {
    const size_t queued = node.is_dir ? node.dir.unsynced().size() : node.file.unsynced().size();
    if (queued == 0) continue;
    // A directory's commit may pull other directories' operations along; count what remains when we get
    // there.
    const size_t count = static_cast<size_t>(rng.uniform(queued + 1));
    if (node.is_dir) {
      stats_.writeback_ops += commit_dir_prefix(inodes_, refs_, id, count);
    } else {
      node.file.commit(count);
      stats_.writeback_ops += count;
    }
  }
  collect();
}

void SimDisk::set_error_probability(DiskOp op, double p) {
  SLUICE_ASSERT(static_cast<size_t>(op) < kDiskOpKinds);
  SLUICE_ASSERT(p >= 0.0 && p <= 1.0);
  error_probability_[static_cast<size_t>(op)] = p;
}

void SimDisk::fail_next(DiskOp op, uint32_t count, std::string path_prefix) {
  if (count == 0) return;
  fail_rules_.push_back(FailRule{op, count, normalized_prefix(path_prefix)});
}

void SimDisk::corrupt_next_reads(uint32_t count, std::string path_prefix) {
  corrupt_rule_.reset();
  if (count > 0) corrupt_rule_ = CorruptRule{count, normalized_prefix(path_prefix), {}};
}

void SimDisk::die_at(DiskOp op, uint32_t count, std::string path_prefix, std::function<void()> dying) {
  SLUICE_ASSERT_MSG(count > 0, "the first matching operation is count 1");
  die_rule_ = FailRule{op, count, normalized_prefix(path_prefix)};
  on_dying_ = std::move(dying);
}

void SimDisk::end_dying() {
  die_rule_.reset();
  on_dying_ = nullptr;
  dying_ = false;
}

void SimDisk::clear_faults() {
  fail_rules_.clear();
  corrupt_rule_.reset();
  error_probability_.fill(0.0);
  end_dying();
}

uint64_t SimDisk::free_bytes() const {
  return used_bytes_ >= options_.capacity_bytes ? 0 : options_.capacity_bytes - used_bytes_;
}

uint64_t SimDisk::trace_state_hash() const { return durable_tree_hash(inodes_); }

}  // namespace sluice
