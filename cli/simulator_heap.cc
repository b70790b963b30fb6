// The simulator's heap on 2 MiB pages. A simulated run keeps its history, its simulated disks and the checkers'
// indexes in memory (about 200 MB for bench/sim_1k_produce.toml), and on this kind of guest the first touch of
// each fresh 4 KiB page costs the kernel microseconds: page faults were a sixth of a benchmark run, and TLB misses
// a further part of its user time (bench/README.md). With transparent huge pages one fault maps 512 pages.
//
// mimalloc decides whether it may map large pages once, when it starts, which is before main and before any
// constructor of this program. A function in .preinit_array runs earlier still (before every shared library's
// constructors) and is handed argv: for `sim` and `fuzz` it sets mimalloc's two options, which only writes them to
// its option table. `serve` keeps small pages: its memory should stay as small as its buffers. A
// MIMALLOC_LARGE_OS_PAGES the user set wins; without transparent huge pages the kernel maps small pages as before.
// Except where the guest's balloon reports free memory back to its host (virtio free page reporting): the host then
// reclaims free 2 MiB blocks, and every huge page touched again costs it 512 faults. On two such guests a single
// `sim` run was 9-17 % slower with huge pages than with small ones (and a fuzz run the same either way), so there
// the heap keeps small pages (bench/README.md, seventh and eighth rounds).
#ifdef SLUICE_MIMALLOC

#include <fcntl.h>
#include <mimalloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

// True when a virtio balloon device offers free page reporting (VIRTIO_BALLOON_F_REPORTING, feature bit 5, which
// sysfs lists as one '0' or '1' per bit). Reads with open and read only: this runs before mimalloc starts, and a
// call that allocates would start it.
bool balloon_reports_free_pages() {
  constexpr char kDriver[] = "/sys/bus/virtio/drivers/virtio_balloon";
  constexpr int kReportingBit = 5;
  constexpr int kDevices = 64;  // virtio devices are numbered from 0 in probe order; a guest has a handful
  if (access(kDriver, F_OK) != 0) return false;
  for (int device = 0; device < kDevices; ++device) {
    char path[sizeof(kDriver) + 32];
    std::snprintf(path, sizeof(path), "%s/virtio%d/features", kDriver, device);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char bits[kReportingBit + 1];
    const ssize_t got = read(fd, bits, sizeof(bits));
    close(fd);
    if (got == static_cast<ssize_t>(sizeof(bits)) && bits[kReportingBit] == '1') return true;
  }
  return false;
}

constexpr long kReservedKiB = 1L << 20;  // 1 GiB of address space; pages are touched as the heap grows

bool simulator_command(int argc, char** argv) {
  return argc >= 2 && (std::strcmp(argv[1], "sim") == 0 || std::strcmp(argv[1], "fuzz") == 0);
}

void use_large_pages_in_the_simulator(int argc, char** argv, char** envp) {
  if (!simulator_command(argc, argv) || envp == nullptr) return;
  for (int i = 0; envp[i] != nullptr; ++i) {
    if (std::strncmp(envp[i], "MIMALLOC_LARGE_OS_PAGES=", 24) == 0) return;
  }
  if (balloon_reports_free_pages()) return;
  mi_option_set(mi_option_large_os_pages, 1);
  mi_option_set(mi_option_reserve_os_memory, kReservedKiB);
}

}  // namespace

__attribute__((section(".preinit_array"), used)) static void (*const kBeforeMimallocStarts)(int, char**, char**) =
    use_large_pages_in_the_simulator;

#endif
