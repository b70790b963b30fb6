// SimFileSystem: the FileSystem a simulated node's Env hands to the core, over the node's SimDisk. One per
// boot; the disk outlives it. Its File handles have POSIX semantics (a removed file stays readable and
// writable through handles opened before), fail with kClosed after close(), and fail with kIoError once the
// disk lost power after they were opened: a handle never reaches across a power loss.
//
// Like a process's RLIMIT_NOFILE, an optional limit on the handles open at once (closed or destroyed ones stop
// counting): past it open() fails with kIoError ("too many open files", EMFILE), so that a test can show the broker
// keeps its descriptors bounded.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "core/env/file_system.h"
#include "sim/world/sim_disk.h"

namespace sluice {

class SimFileSystem final : public FileSystem {
 public:
  // Called before each write, truncate, sync and sync_dir. SimNode makes it sleep the calling fiber for a
  // drawn latency, so that virtual time passes inside I/O and a crash can strike between an append and its
  // sync. Unset (tests of the disk itself), operations take no time.
  using Delay = std::function<void(DiskOp)>;

  explicit SimFileSystem(SimDisk& disk) : disk_(disk) {}
  void set_delay(Delay delay) { delay_ = std::move(delay); }

  Result<std::unique_ptr<File>> open(std::string_view path, OpenMode mode) override;
  Status remove(std::string_view path) override { return disk_.remove(path); }
  Status rename(std::string_view from, std::string_view to) override { return disk_.rename(from, to); }
  Result<std::vector<DirEntry>> list(std::string_view dir) override { return disk_.list(dir); }
  Status create_dirs(std::string_view dir) override { return disk_.create_dirs(dir); }
  Status remove_dir(std::string_view dir) override { return disk_.remove_dir(dir); }
  Result<bool> exists(std::string_view path) override { return disk_.exists(path); }
  Status sync_dir(std::string_view dir) override {
    if (delay_) delay_(DiskOp::kSync);
    return disk_.sync_dir(dir);
  }
  // One disk per node: every path reports the same device.
  Result<uint64_t> free_bytes(std::string_view path) override { return disk_.free_bytes(); }
  Result<uint64_t> total_bytes(std::string_view path) override { return disk_.capacity_bytes(); }

  SimDisk& disk() { return disk_; }
  // 0: no limit (the default).
  void set_open_file_limit(size_t limit) { open_file_limit_ = limit; }
  size_t open_files() const { return open_files_; }
  size_t peak_open_files() const { return peak_open_files_; }

 private:
  SimDisk& disk_;
  Delay delay_;
  size_t open_file_limit_ = 0;
  size_t open_files_ = 0;  // handles neither closed nor destroyed; the files decrement it
  size_t peak_open_files_ = 0;
};

}  // namespace sluice
