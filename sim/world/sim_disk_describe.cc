// SimDisk's observation: describe() for failure reports and consistent() for tests and SLUICE_VERIFY.
#include <map>
#include <string>

#include "sim/world/sim_disk.h"

namespace sluice {

void SimDisk::describe_dir(InodeId dir, const std::string& path, std::string& out) const {
  const SimDirImage& image = inode(dir).dir;
  out += (path.empty() ? "." : path) + "/";
  if (!image.unsynced().empty()) out += "  unsynced_entry_ops=" + std::to_string(image.unsynced().size());
  out += '\n';
  for (const auto& [name, child] : image.entries()) {
    const std::string child_path = path.empty() ? name : path + "/" + name;
    const SimInode& node = inode(child);
    if (node.is_dir) {
      describe_dir(child, child_path, out);
      continue;
    }
    out += child_path + "  size=" + std::to_string(node.file.size()) +
           " durable=" + std::to_string(node.file.durable_size());
    if (!node.file.unsynced().empty()) out += " unsynced_ops=" + std::to_string(node.file.unsynced().size());
    if (node.file.diverged()) out += " diverged";
    out += '\n';
  }
}

std::string SimDisk::describe() const {
  std::string out = "SimDisk generation=" + std::to_string(generation_) +
                    " used=" + std::to_string(used_bytes_) + "/" + std::to_string(options_.capacity_bytes) +
                    " inodes=" + std::to_string(inodes_.size()) +
                    " state_hash=" + std::to_string(trace_state_hash()) + "\n";
  describe_dir(kRootInode, "", out);
  return out;
}

bool SimDisk::consistent() const {
  if (!inodes_.contains(kRootInode) || !inode(kRootInode).is_dir) return false;
  uint64_t used = 0;
  std::map<InodeId, int> names;  // volatile names per inode
  for (const auto& [id, node] : inodes_) {
    if (!node.is_dir) {
      if (node.linked || node.open_handles > 0) used += node.file.size();
      continue;
    }
    if (!node.dir.consistent()) return false;
    for (const auto& [name, child] : node.dir.entries()) {
      if (!inodes_.contains(child)) return false;
      ++names[child];
    }
    for (const auto& [name, child] : node.dir.durable()) {
      if (!inodes_.contains(child)) return false;
    }
    for (const SimEntryOp& op : node.dir.unsynced()) {
      if (op.partner == kNoInode) continue;
      if (!inodes_.contains(op.partner)) return false;
      if (inode(op.partner).dir.find_txn(op.txn) == static_cast<size_t>(-1)) return false;
    }
  }
  if (used != used_bytes_) return false;
  for (const auto& [id, node] : inodes_) {
    if (id == kRootInode) continue;
    const int count = names.contains(id) ? names.at(id) : 0;
    if (count > 1 || (count == 1) != node.linked) return false;
  }
  return refs_consistent(inodes_);  // and no garbage left behind
}

}  // namespace sluice
