#include "sim/world/sim_file_system.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/base/assert.h"

namespace sluice {
namespace {

class SimFile final : public File {
 public:
  SimFile(SimDisk& disk, const SimFileSystem::Delay& delay, size_t& open_files, InodeId inode, std::string path,
          bool writable)
      : disk_(disk),
        delay_(delay),
        open_files_(open_files),
        inode_(inode),
        generation_(disk.generation()),
        path_(std::move(path)),
        writable_(writable) {
    SLUICE_ASSERT(inode_ != kNoInode);
  }
  ~SimFile() override {
    if (!closed_) uncount();
    disk_.forget_handle(inode_, generation_, !closed_);
  }
  SimFile(const SimFile&) = delete;
  SimFile& operator=(const SimFile&) = delete;

  Result<size_t> pread(uint64_t offset, MutableByteView out) override {
    SLUICE_TRY(usable());
    return disk_.read(inode_, path_, offset, out);
  }

  Result<size_t> pread_append(uint64_t offset, size_t count, Bytes& out) override {
    SLUICE_TRY(usable());
    return disk_.read_append(inode_, path_, offset, count, out);
  }

  Status append(ByteView data) override {
    SLUICE_TRY(usable_for_writing());
    wait(DiskOp::kWrite);
    return disk_.write(inode_, path_, std::nullopt, data);
  }

  Status pwrite(uint64_t offset, ByteView data) override {
    SLUICE_TRY(usable_for_writing());
    wait(DiskOp::kWrite);
    return disk_.write(inode_, path_, offset, data);
  }

  Result<uint64_t> size() override {
    SLUICE_TRY(usable());
    return disk_.file_size(inode_);
  }

  Status truncate(uint64_t size) override {
    SLUICE_TRY(usable_for_writing());
    wait(DiskOp::kWrite);
    return disk_.truncate(inode_, path_, size);
  }

  // fdatasync works on read-only descriptors too.
  Status sync() override {
    SLUICE_TRY(usable());
    wait(DiskOp::kSync);
    return disk_.sync(inode_, path_);
  }

  Status close() override {
    SLUICE_TRY(usable());
    closed_ = true;
    uncount();
    disk_.close_handle(inode_);
    return Status();
  }

 private:
  Status usable() {
    if (closed_) return closed(path_ + ": file closed");
    // Its inode may be gone; the disk knows the generation, so the destructor will not touch it either.
    if (generation_ != disk_.generation()) return io_error(path_ + ": handle from before power loss");
    return Status();
  }

  Status usable_for_writing() {
    SLUICE_TRY(usable());
    if (!writable_) return invalid_argument(path_ + ": opened read-only");
    return Status();
  }

  void uncount() {
    SLUICE_ASSERT(open_files_ > 0);
    --open_files_;
  }

  void wait(DiskOp op) {
    if (delay_) delay_(op);
  }

  SimDisk& disk_;
  const SimFileSystem::Delay& delay_;  // the file system's, which outlives its files
  size_t& open_files_;                 // the file system's count of open handles
  const InodeId inode_;
  const uint64_t generation_;
  const std::string path_;  // its name when opened; a later rename does not follow it (fault matching only)
  const bool writable_;
  bool closed_ = false;
};

}  // namespace

Result<std::unique_ptr<File>> SimFileSystem::open(std::string_view path, OpenMode mode) {
  if (open_file_limit_ > 0 && open_files_ >= open_file_limit_) {
    return io_error(std::string(path) + ": too many open files (EMFILE: " + std::to_string(open_files_) +
                    " open, the limit is " + std::to_string(open_file_limit_) + ")");
  }
  SLUICE_ASSIGN_OR_RETURN(InodeId inode, disk_.open(path, mode));
  ++open_files_;
  peak_open_files_ = std::max(peak_open_files_, open_files_);
  return std::unique_ptr<File>(
      std::make_unique<SimFile>(disk_, delay_, open_files_, inode, std::string(path), mode != OpenMode::kRead));
}

}  // namespace sluice
