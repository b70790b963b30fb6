#include "net/open_file_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace sluice {
namespace {

uint64_t from_rlim(rlim_t value) { return value == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(value); }

// The most a soft limit may be when the hard one is unlimited (setrlimit refuses more than fs.nr_open).
rlim_t kernel_nr_open() {
  std::ifstream in("/proc/sys/fs/nr_open");
  uint64_t value = 0;
  if (in >> value && value > 0) return static_cast<rlim_t>(value);
  return 1024 * 1024;  // the kernel's default nr_open
}

}  // namespace

Result<OpenFileLimit> open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return io_error(std::string("getrlimit: ") + std::strerror(errno));
  return OpenFileLimit{from_rlim(limit.rlim_cur), from_rlim(limit.rlim_max)};
}

Result<OpenFileLimit> raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return io_error(std::string("getrlimit: ") + std::strerror(errno));
  const rlim_t target = limit.rlim_max == RLIM_INFINITY ? kernel_nr_open() : limit.rlim_max;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= target) return open_file_limit();
  limit.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return io_error("setrlimit(RLIMIT_NOFILE, " + std::to_string(target) + "): " + std::strerror(errno));
  }
  return open_file_limit();
}

}  // namespace sluice
