// FileSystem and File: every byte the core reads or writes on disk goes through these. Calls read as blocking but
// suspend only the calling fiber. Durability is explicit: File::sync and FileSystem::sync_dir are the only
// promises. Until then a crash may drop, tear or (for directory entries) forget anything.
//
// Paths are '/'-separated strings. In simulation they are relative to the node's disk; in the real world they
// are ordinary paths.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/base/status.h"

namespace sluice {

class File {
 public:
  virtual ~File() = default;

  // Reads up to out.size() bytes at `offset`; fewer only at end of file (0 at or past it).
  virtual Result<size_t> pread(uint64_t offset, MutableByteView out) = 0;
  // Reads up to `count` bytes at `offset` onto the end of `out`, which grows by the bytes read (fewer only at end
  // of file); unchanged on failure. A read buffer pread fills is zeroed first (std::vector has no uninitialised
  // growth): the simulated file copies its bytes in once instead. This default preads into `out` grown by `count`.
  virtual Result<size_t> pread_append(uint64_t offset, size_t count, Bytes& out);
  // Writes all of `data` at the current end of the file.
  virtual Status append(ByteView data) = 0;
  // Writes all of `data` at `offset`, extending the file when needed.
  virtual Status pwrite(uint64_t offset, ByteView data) = 0;
  // Writes the parts back to back at `offset`, as one pwrite of their concatenation would. The real file system
  // hands them to the kernel in one call (a produced batch goes to disk from the request buffer, with only its
  // base offset rewritten); this default joins them (unless there is one), so a simulated disk sees the same
  // single write.
  virtual Status pwrite_gathered(uint64_t offset, std::span<const ByteView> parts);
  virtual Result<uint64_t> size() = 0;
  virtual Status truncate(uint64_t size) = 0;
  // Extends the file to `size` bytes of zeros unless it is longer. The real file system writes the zeros, so that
  // the blocks are allocated and written now: a later write below `size` then changes neither the file's size
  // nor its block map, and the fdatasync after it has no metadata to journal (on ext4 a fallocated block would
  // still need its unwritten-to-written conversion journaled). This default extends with truncate. Durable, like
  // a write, only after sync().
  virtual Status preallocate(uint64_t size);
  // Makes the file's data and size durable (fdatasync). Its directory entry needs FileSystem::sync_dir.
  virtual Status sync() = 0;
  // Further calls fail with kClosed. Closing does not sync.
  virtual Status close() = 0;
};

enum class OpenMode : uint8_t {
  kRead,          // existing file, read only
  kReadWrite,     // existing file
  kCreate,        // read-write, created when missing
  kCreateNew,     // read-write, fails with kAlreadyExists when present
  kCreateTruncate,  // read-write, created or emptied
};

struct DiskSpace {
  uint64_t free_bytes = 0;   // available to this process (statvfs f_bavail)
  uint64_t total_bytes = 0;
};

struct DirEntry {
  std::string name;
  bool is_directory = false;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual Result<std::unique_ptr<File>> open(std::string_view path, OpenMode mode) = 0;
  virtual Status remove(std::string_view path) = 0;
  // Atomically replaces `to` when it exists.
  virtual Status rename(std::string_view from, std::string_view to) = 0;
  // Entries of a directory, sorted by name, without "." and "..".
  virtual Result<std::vector<DirEntry>> list(std::string_view dir) = 0;
  // Creates the directory and any missing parents; ok when it already exists.
  virtual Status create_dirs(std::string_view dir) = 0;
  virtual Status remove_dir(std::string_view dir) = 0;  // must be empty
  virtual Result<bool> exists(std::string_view path) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status sync_dir(std::string_view dir) = 0;
  virtual Result<uint64_t> free_bytes(std::string_view path) = 0;
  virtual Result<uint64_t> total_bytes(std::string_view path) = 0;
  // Both at once; the real file system answers with one statvfs (appends check disk pressure every time).
  virtual Result<DiskSpace> space(std::string_view path);
};

// "a/b/c.log" → "a/b"; "c.log" → ".".
std::string parent_dir(std::string_view path);
// "a/b/c.log" → "c.log"; "a/b/" → "b".
std::string file_name_of(std::string_view path);
// Joins with exactly one '/'.
std::string join_path(std::string_view dir, std::string_view name);

// Creates `dir` and its missing parents, then syncs every level's directory, so that a power loss cannot take the
// new directories away with what is later written in them.
Status create_dirs_durably(FileSystem& fs, const std::string& dir);

// Replaces `path` with `data` so that a crash leaves either the old or the new content: writes `temp_path`,
// syncs it, renames it over `path` and syncs the directory.
Status write_file_atomically(FileSystem& fs, const std::string& path, const std::string& temp_path, ByteView data);

}  // namespace sluice
