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
// The gain depends on the host: where the guest's balloon reports free memory back (virtio free page reporting),
// the host reclaims free 2 MiB blocks, and every huge page touched again costs it 512 faults, so a single `sim`
// run was ~10 % slower with them than with MIMALLOC_LARGE_OS_PAGES=0 on such a guest, and a fuzz run the same
// (bench/README.md, seventh round).
#ifdef SLUICE_MIMALLOC

#include <mimalloc.h>

#include <cstring>

namespace {

constexpr long kReservedKiB = 1L << 20;  // 1 GiB of address space; pages are touched as the heap grows

bool simulator_command(int argc, char** argv) {
  return argc >= 2 && (std::strcmp(argv[1], "sim") == 0 || std::strcmp(argv[1], "fuzz") == 0);
}

void use_large_pages_in_the_simulator(int argc, char** argv, char** envp) {
  if (!simulator_command(argc, argv) || envp == nullptr) return;
  for (int i = 0; envp[i] != nullptr; ++i) {
    if (std::strncmp(envp[i], "MIMALLOC_LARGE_OS_PAGES=", 24) == 0) return;
  }
  mi_option_set(mi_option_large_os_pages, 1);
  mi_option_set(mi_option_reserve_os_memory, kReservedKiB);
}

}  // namespace

__attribute__((section(".preinit_array"), used)) static void (*const kBeforeMimallocStarts)(int, char**, char**) =
    use_large_pages_in_the_simulator;

#endif
