#include "core/env/file_system.h"

namespace sluice {

std::string parent_dir(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  std::string out(dir);
  if (out.back() != '/') out += '/';
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  out += name;
  return out;
}

}  // namespace sluice
