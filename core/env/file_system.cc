#include "core/env/file_system.h"

namespace sluice {

std::string parent_dir(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string file_name_of(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  std::string out(dir);
  if (out.back() != '/') out += '/';
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  out += name;
  return out;
}

Status write_file_atomically(FileSystem& fs, const std::string& path, const std::string& temp_path, ByteView data) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(temp_path, OpenMode::kCreateTruncate));
  SLUICE_TRY(file->append(data));
  SLUICE_TRY(file->sync());
  SLUICE_TRY(file->close());
  SLUICE_TRY(fs.rename(temp_path, path));
  return fs.sync_dir(parent_dir(path));
}

Status create_dirs_durably(FileSystem& fs, const std::string& dir) {
  if (Status s = fs.create_dirs(dir); !s.ok()) return s;
  for (std::string level = dir;;) {
    const std::string parent = parent_dir(level);
    if (Status s = fs.sync_dir(parent); !s.ok()) return s;
    if (parent == "." || parent == "/") return fs.sync_dir(dir);
    level = parent;
  }
}

Result<size_t> File::pread_append(uint64_t offset, size_t count, Bytes& out) {
  const size_t had = out.size();
  out.resize(had + count);
  Result<size_t> got = pread(offset, MutableByteView(out).subspan(had));
  out.resize(had + (got.ok() ? *got : 0));
  return got;
}

Status File::pwrite_gathered(uint64_t offset, std::span<const ByteView> parts) {
  return parts.size() == 1 ? pwrite(offset, parts.front()) : pwrite(offset, concat(parts));
}

Status File::preallocate(uint64_t size) {
  SLUICE_ASSIGN_OR_RETURN(const uint64_t current, this->size());
  return current < size ? truncate(size) : Status();
}

Result<DiskSpace> FileSystem::space(std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(const uint64_t free, free_bytes(path));
  SLUICE_ASSIGN_OR_RETURN(const uint64_t total, total_bytes(path));
  return DiskSpace{free, total};
}

}  // namespace sluice
