// PosixFileSystem: FileSystem and File on POSIX calls. Calls that may wait on the device or on metadata
// locks (open, fdatasync, fsync of a directory, rename, unlink, ftruncate, mkdir, readdir, stat, statvfs) run
// on the EventLoop's workers through run_blocking, so the loop never stalls. pread copies what the page cache
// holds inline (preadv2 with RWF_NOWAIT) and hands the rest, a read that would wait on the device (a cold
// segment), to a worker; inline throughout when the scheduler has no offloader. pwrite and append run inline,
// since they normally touch only the page cache. Closing a file is inline too (it does not sync).
//
// Errors: ENOENT → kNotFound, EEXIST → kAlreadyExists, ENOSPC/EDQUOT → kNoSpace, anything else → kIoError.
// The message names the call, the path and the OS's text ("open /data/x.log: No such file or directory").
//
// REQUIRES: calls from fibers of the loop's scheduler, or from the loop's thread while it is not running.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/env/file_system.h"

namespace sluice {

class EventLoop;

class PosixFileSystem final : public FileSystem {
 public:
  explicit PosixFileSystem(EventLoop& loop) : loop_(loop) {}

  // Files are opened O_CLOEXEC and created 0644. A File must not outlive the loop.
  Result<std::unique_ptr<File>> open(std::string_view path, OpenMode mode) override;
  Status remove(std::string_view path) override;
  Status rename(std::string_view from, std::string_view to) override;
  Result<std::vector<DirEntry>> list(std::string_view dir) override;
  Status create_dirs(std::string_view dir) override;
  Status remove_dir(std::string_view dir) override;
  Result<bool> exists(std::string_view path) override;
  Status sync_dir(std::string_view dir) override;
  Result<uint64_t> free_bytes(std::string_view path) override;
  Result<uint64_t> total_bytes(std::string_view path) override;
  Result<DiskSpace> space(std::string_view path) override;

 private:
  EventLoop& loop_;
};

}  // namespace sluice
