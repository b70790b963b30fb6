#include "net/posix_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <span>
#include <system_error>

#include "core/base/assert.h"
#include "net/event_loop.h"

namespace sluice {
namespace {

// The outcome of a system call run on a worker: the OS text is formed later, on the loop thread.
struct SysResult {
  int64_t value = 0;  // the call's return value (an fd, a size) when err == 0
  int err = 0;
};

SysResult sys_result(int64_t rc) { return rc < 0 ? SysResult{rc, errno} : SysResult{rc, 0}; }

Status errno_status(int err, std::string_view op, std::string_view path) {
  SLUICE_ASSERT(err != 0);
  std::string message =
      std::string(op) + " " + std::string(path) + ": " + std::system_category().message(err);
  switch (err) {
    case ENOENT: return not_found(std::move(message));
    case EEXIST: return already_exists(std::move(message));
    case ENOSPC:
    case EDQUOT: return no_space(std::move(message));
    default: return io_error(std::move(message));
  }
}

Status to_status(SysResult r, std::string_view op, std::string_view path) {
  return r.err == 0 ? Status() : errno_status(r.err, op, path);
}

// Reads until `out` is full or the file ends: the bytes read, or the error.
SysResult pread_fully(int fd, MutableByteView out, uint64_t offset) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysResult{static_cast<int64_t>(done), errno};
    }
    if (n == 0) break;  // end of file
    done += static_cast<size_t>(n);
  }
  return SysResult{static_cast<int64_t>(done), 0};
}

// Reads what the page cache holds, from the start of `out` on, without waiting on the device (RWF_NOWAIT: the
// read stops at the first page that is not cached). `*at_end` tells that the file ended.
SysResult pread_cached(int fd, MutableByteView out, uint64_t offset, bool* at_end) {
  size_t done = 0;
  *at_end = false;
  while (done < out.size()) {
    iovec part{out.data() + done, out.size() - done};
    const ssize_t n = ::preadv2(fd, &part, 1, static_cast<off_t>(offset + done), RWF_NOWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      // EAGAIN: the next page is not cached. EOPNOTSUPP: a file system without RWF_NOWAIT; read on a worker.
      if (errno == EAGAIN || errno == EOPNOTSUPP) break;
      return SysResult{static_cast<int64_t>(done), errno};
    }
    if (n == 0) {
      *at_end = true;
      break;
    }
    done += static_cast<size_t>(n);
  }
  return SysResult{static_cast<int64_t>(done), 0};
}

// Writes every part at `offset` on: one pwritev per IOV_MAX parts, resumed after a short write. 0 or an errno.
int pwritev_fully(int fd, std::span<iovec> pending, uint64_t offset) {
  uint64_t end = offset;
  size_t first = 0;
  while (first < pending.size()) {
    const int count = static_cast<int>(std::min<size_t>(pending.size() - first, IOV_MAX));
    const ssize_t n = ::pwritev(fd, pending.data() + first, count, static_cast<off_t>(end));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    SLUICE_ASSERT(n > 0);  // a regular file makes progress or fails
    end += static_cast<uint64_t>(n);
    for (size_t left = static_cast<size_t>(n); left > 0;) {  // drop what was written, trim a partial part
      iovec& part = pending[first];
      const size_t taken = std::min(left, part.iov_len);
      part.iov_base = static_cast<uint8_t*>(part.iov_base) + taken;
      part.iov_len -= taken;
      left -= taken;
      if (part.iov_len == 0) ++first;
    }
  }
  return 0;
}

// Owns the descriptor. Shared with calls in flight on workers, so the fd is never closed (and its number
// reused) under a running fdatasync, even if the File and its fiber are gone.
struct FileHandle {
  FileHandle(int file_fd, std::string file_path) : fd(file_fd), path(std::move(file_path)) {}
  ~FileHandle() { ::close(fd); }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;

  const int fd;
  const std::string path;
};

class PosixFile final : public File {
 public:
  PosixFile(EventLoop& loop, std::shared_ptr<FileHandle> handle) : loop_(loop), handle_(std::move(handle)) {
    SLUICE_ASSERT(handle_ != nullptr);
    SLUICE_ASSERT(handle_->fd >= 0);
  }

  Result<size_t> pread(uint64_t offset, MutableByteView out) override;
  Status append(ByteView data) override;
  Status pwrite(uint64_t offset, ByteView data) override;
  Status pwrite_gathered(uint64_t offset, std::span<const ByteView> parts) override;
  Status preallocate(uint64_t size) override;
  Result<uint64_t> size() override;
  Status truncate(uint64_t size) override;
  Status sync() override;
  Status close() override;

 private:
  Status closed_status() const { return closed("file " + closed_path_ + " is closed"); }
  // pwrite's and pwrite_gathered's one write path: `bytes` in `parts`, on a worker when that many.
  Status write_parts(uint64_t offset, std::span<iovec> parts, size_t bytes);

  EventLoop& loop_;
  std::shared_ptr<FileHandle> handle_;  // null once closed
  std::string closed_path_;
};

// What the page cache holds is copied inline: a handoff to a worker costs more than that memcpy, whatever the
// size. The rest (a cold segment, an index evicted) waits on the device, so it is read on a worker
// (run_blocking) and stalls only this fiber, not every connection of the node.
Result<size_t> PosixFile::pread(uint64_t offset, MutableByteView out) {
  if (handle_ == nullptr) return closed_status();
  // Setup code before the loop runs has nothing else to stall; without an offloader (a benchmark's before case)
  // every read is inline, as it used to be.
  if (!loop_.scheduler().in_fiber() || !loop_.scheduler().offloads()) {
    const SysResult r = pread_fully(handle_->fd, out, offset);
    if (r.err != 0) return errno_status(r.err, "pread", handle_->path);
    return static_cast<size_t>(r.value);
  }
  bool at_end = false;
  const SysResult cached = pread_cached(handle_->fd, out, offset, &at_end);
  if (cached.err != 0) return errno_status(cached.err, "pread", handle_->path);
  const size_t done = static_cast<size_t>(cached.value);
  if (at_end || done == out.size()) return done;
  // `out` is borrowed: the loop unwinds this fiber only after the worker returned (EventLoop::settle).
  const SysResult rest = loop_.run_blocking(
      [handle = handle_, rest = out.subspan(done), at = offset + done] { return pread_fully(handle->fd, rest, at); });
  if (rest.err != 0) return errno_status(rest.err, "pread", handle_ == nullptr ? closed_path_ : handle_->path);
  const size_t total = done + static_cast<size_t>(rest.value);
  SLUICE_ASSERT(total <= out.size());
  return total;
}

Status PosixFile::pwrite(uint64_t offset, ByteView data) {
  if (handle_ == nullptr) return closed_status();
  iovec part{const_cast<uint8_t*>(data.data()), data.size()};  // on the stack: index entries are written this way
  return write_parts(offset, std::span<iovec>(&part, data.empty() ? 0 : 1), data.size());
}

Status PosixFile::append(ByteView data) {
  // Not O_APPEND: on Linux it would make pwrite ignore its offset. The end is read from the file instead.
  SLUICE_ASSIGN_OR_RETURN(const uint64_t end, size());
  return pwrite(end, data);
}

// A write of this much or more goes to a worker: copying it into fresh page-cache pages holds the loop for tens
// of milliseconds on a slow guest (a 32 MiB produce batch), and a worker handoff costs microseconds. Smaller ones
// stay inline, where the handoff would cost more than the copy.
constexpr size_t kOffloadedWriteBytes = size_t{1} << 20;

Status PosixFile::pwrite_gathered(uint64_t offset, std::span<const ByteView> parts) {
  if (handle_ == nullptr) return closed_status();
  std::vector<iovec> pending;
  pending.reserve(parts.size());
  size_t bytes = 0;
  for (const ByteView part : parts) {
    if (!part.empty()) pending.push_back(iovec{const_cast<uint8_t*>(part.data()), part.size()});
    bytes += part.size();
  }
  return write_parts(offset, pending, bytes);
}

// The parts are borrowed from the calling fiber, which the loop unwinds only after the worker returned
// (EventLoop::settle); the writer holds its log's append lock, so nobody reads or writes the range meanwhile.
Status PosixFile::write_parts(uint64_t offset, std::span<iovec> parts, size_t bytes) {
  const bool offload =
      bytes >= kOffloadedWriteBytes && loop_.scheduler().in_fiber() && loop_.scheduler().offloads();
  const auto write = [handle = handle_, parts, offset] { return pwritev_fully(handle->fd, parts, offset); };
  const int err = offload ? loop_.run_blocking(write) : write();
  if (err != 0) return errno_status(err, "pwrite", handle_ == nullptr ? closed_path_ : handle_->path);
  return Status();
}

Result<uint64_t> PosixFile::size() {
  if (handle_ == nullptr) return closed_status();
  struct stat st {};
  if (::fstat(handle_->fd, &st) != 0) return errno_status(errno, "fstat", handle_->path);
  SLUICE_ASSERT(st.st_size >= 0);
  return static_cast<uint64_t>(st.st_size);
}

Status PosixFile::truncate(uint64_t size) {
  if (handle_ == nullptr) return closed_status();
  const SysResult r = loop_.run_blocking([handle = handle_, size] {
    return sys_result(::ftruncate(handle->fd, static_cast<off_t>(size)));
  });
  return to_status(r, "ftruncate", handle_->path);
}

// Writes the zeros rather than fallocate them. fallocate leaves unwritten extents, and every write into one makes
// the next fdatasync journal its conversion to written: on ext4 that costs a journal commit per sync, about a
// third of a small sync (measured: 10k appends/s of 1 KiB, one syncer; fdatasync mean 157-197 us over zeros
// written ahead against 235-332 us over fallocated space, per-append latency p50 209-262 us against 322-480).
// The zeros cost one page-cache copy and one disk write per preallocated byte.
Status PosixFile::preallocate(uint64_t size) {
  if (handle_ == nullptr) return closed_status();
  const SysResult r = loop_.run_blocking([handle = handle_, size] {
    struct stat st {};
    if (::fstat(handle->fd, &st) != 0) return sys_result(-1);
    SLUICE_ASSERT(st.st_size >= 0);
    static const std::array<uint8_t, 256 * 1024> kZeros{};  // untouched .bss: reads map the shared zero page
    for (auto at = static_cast<uint64_t>(st.st_size); at < size;) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kZeros.size(), size - at));
      const ssize_t n = ::pwrite(handle->fd, kZeros.data(), chunk, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return sys_result(-1);
      SLUICE_ASSERT(n > 0);  // as pwrite_gathered: a regular file makes progress or fails
      at += static_cast<uint64_t>(n);
    }
    return SysResult{};
  });
  return to_status(r, "preallocate (writing zeros to)", handle_->path);
}

Status PosixFile::sync() {
  if (handle_ == nullptr) return closed_status();
  const SysResult r = loop_.run_blocking([handle = handle_] { return sys_result(::fdatasync(handle->fd)); });
  return to_status(r, "fdatasync", handle_->path);
}

Status PosixFile::close() {
  if (handle_ == nullptr) return Status();
  closed_path_ = handle_->path;
  handle_.reset();  // closes the fd, or lets the last call in flight close it
  return Status();
}

int open_flags(OpenMode mode) {
  switch (mode) {
    case OpenMode::kRead: return O_RDONLY;
    case OpenMode::kReadWrite: return O_RDWR;
    case OpenMode::kCreate: return O_RDWR | O_CREAT;
    case OpenMode::kCreateNew: return O_RDWR | O_CREAT | O_EXCL;
    case OpenMode::kCreateTruncate: return O_RDWR | O_CREAT | O_TRUNC;
  }
  SLUICE_UNREACHABLE();
}

// mkdir -p, on a worker. Returns the errno of the first failing component, with the path that failed.
std::pair<int, std::string> make_dirs(const std::string& dir) {
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    const std::string prefix = dir.substr(0, pos);
    if (prefix.empty() || prefix == "/") continue;
    if (::mkdir(prefix.c_str(), 0755) == 0) continue;
    const int err = errno;
    struct stat st {};
    if (err == EEXIST && ::stat(prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    return {err, prefix};
  }
  return {0, ""};
}

struct Listing {
  int err = 0;
  std::vector<DirEntry> entries;
};

Listing read_dir(const std::string& dir) {
  Listing listing;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    listing.err = errno;
    return listing;
  }
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(d);
    if (entry == nullptr) {
      listing.err = errno;
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {  // some file systems do not fill d_type
      struct stat st {};
      is_dir = ::fstatat(::dirfd(d), entry->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
    }
    listing.entries.push_back(DirEntry{std::string(name), is_dir});
  }
  ::closedir(d);
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return listing;
}

struct Space {
  int err = 0;
  uint64_t free = 0;
  uint64_t total = 0;
};

Space stat_space(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return Space{errno, 0, 0};
  const uint64_t block = st.f_frsize;
  return Space{0, static_cast<uint64_t>(st.f_bavail) * block, static_cast<uint64_t>(st.f_blocks) * block};
}

}  // namespace

Result<std::unique_ptr<File>> PosixFileSystem::open(std::string_view path, OpenMode mode) {
  const int flags = open_flags(mode) | O_CLOEXEC;
  const SysResult r = loop_.run_blocking([p = std::string(path), flags] {
    return sys_result(::open(p.c_str(), flags, 0644));
  });
  if (r.err != 0) return errno_status(r.err, "open", path);
  auto handle = std::make_shared<FileHandle>(static_cast<int>(r.value), std::string(path));
  return std::unique_ptr<File>(std::make_unique<PosixFile>(loop_, std::move(handle)));
}

Status PosixFileSystem::remove(std::string_view path) {
  const SysResult r = loop_.run_blocking([p = std::string(path)] { return sys_result(::unlink(p.c_str())); });
  return to_status(r, "unlink", path);
}

Status PosixFileSystem::rename(std::string_view from, std::string_view to) {
  const SysResult r = loop_.run_blocking([f = std::string(from), t = std::string(to)] {
    return sys_result(::rename(f.c_str(), t.c_str()));
  });
  return to_status(r, "rename", std::string(from) + " -> " + std::string(to));
}

Result<std::vector<DirEntry>> PosixFileSystem::list(std::string_view dir) {
  Listing listing = loop_.run_blocking([d = std::string(dir)] { return read_dir(d); });
  if (listing.err != 0) return errno_status(listing.err, "list", dir);
  return std::move(listing.entries);
}

Status PosixFileSystem::create_dirs(std::string_view dir) {
  SLUICE_ASSERT(!dir.empty());
  const auto [err, failed] = loop_.run_blocking([d = std::string(dir)] { return make_dirs(d); });
  return err == 0 ? Status() : errno_status(err, "mkdir", failed);
}

Status PosixFileSystem::remove_dir(std::string_view dir) {
  const SysResult r = loop_.run_blocking([d = std::string(dir)] { return sys_result(::rmdir(d.c_str())); });
  return to_status(r, "rmdir", dir);
}

Result<bool> PosixFileSystem::exists(std::string_view path) {
  const SysResult r = loop_.run_blocking([p = std::string(path)] {
    struct stat st {};
    return sys_result(::stat(p.c_str(), &st));
  });
  if (r.err == ENOENT || r.err == ENOTDIR) return false;
  if (r.err != 0) return errno_status(r.err, "stat", path);
  return true;
}

Status PosixFileSystem::sync_dir(std::string_view dir) {
  const SysResult r = loop_.run_blocking([d = std::string(dir)] {
    const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sys_result(fd);
    const SysResult synced = sys_result(::fsync(fd));
    ::close(fd);
    return synced;
  });
  return to_status(r, "fsync dir", dir);
}

// statvfs runs on the loop thread, like pread and pwrite: it reads the file system's counters without I/O on a
// local disk, and the disk-pressure check calls it on every append, where two worker round trips (thread hops on
// a busy vCPU) cost more than the append itself.
Result<DiskSpace> PosixFileSystem::space(std::string_view path) {
  const Space space = stat_space(std::string(path));
  if (space.err != 0) return errno_status(space.err, "statvfs", path);
  return DiskSpace{space.free, space.total};
}

Result<uint64_t> PosixFileSystem::free_bytes(std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(const DiskSpace disk, space(path));
  return disk.free_bytes;
}

Result<uint64_t> PosixFileSystem::total_bytes(std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(const DiskSpace disk, space(path));
  return disk.total_bytes;
}

}  // namespace sluice
