// Assertions, expensive checks and probes (TigerBeetle's and FoundationDB's policy, in C++).
//
// SLUICE_ASSERT(cond)          always on, release builds included. On failure it prints the expression, file and
//                              line, runs the failure hook (the simulator's prints the seed and the replay command),
//                              then aborts. For programmer errors only: never for disk or network input.
// SLUICE_VERIFY(cond)          an O(n) consistency check; evaluated only when verification is enabled (tests and
//                              simulation switch it on), so it may be expensive. Never on an O(1) hot step.
// SLUICE_PROBE("name")         marks a rare path. Every probe site is registered at link time, so a simulation run
//                              can list the probes that never fired (FoundationDB's CODE_PROBE).
//
// The failure hook and the verify switch are process-wide by necessity: an assertion can fire anywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace sluice {

[[noreturn]] void assert_fail(const char* expression, const char* message, const char* file, int line);

// The hook runs once, before abort. Returns the previous hook so scoped installers can restore it.
using AssertFailureHook = std::function<void()>;
AssertFailureHook set_assert_failure_hook(AssertFailureHook hook);

bool verify_enabled();
void set_verify_enabled(bool enabled);

// One per SLUICE_PROBE site, placed in the "sluice_probes" linker section.
struct ProbeSite {
  const char* name;
  const char* file;
  int line;
  uint64_t hits;
};

// Every probe site linked into this program (hit or not).
std::span<ProbeSite> probe_sites();
void reset_probe_hits();

}  // namespace sluice

#define SLUICE_ASSERT(cond)                                                        \
  (__builtin_expect(static_cast<bool>(cond), 1)                                    \
       ? static_cast<void>(0)                                                      \
       : ::sluice::assert_fail(#cond, nullptr, __FILE__, __LINE__))

#define SLUICE_ASSERT_MSG(cond, msg)                                               \
  (__builtin_expect(static_cast<bool>(cond), 1)                                    \
       ? static_cast<void>(0)                                                      \
       : ::sluice::assert_fail(#cond, (msg), __FILE__, __LINE__))

#define SLUICE_UNREACHABLE() ::sluice::assert_fail("unreachable", nullptr, __FILE__, __LINE__)

#define SLUICE_VERIFY(cond)                                                        \
  do {                                                                             \
    if (::sluice::verify_enabled() && !static_cast<bool>(cond)) {                  \
      ::sluice::assert_fail(#cond, "verify", __FILE__, __LINE__);                  \
    }                                                                              \
  } while (0)

// The empty asm takes the site's address: without it the optimizer holds the site unreachable from anywhere else
// (`used` keeps it, yet no code names it), so a count read through probe_sites() in the same translation unit
// could miss the increments before it (Probe.SitesAreListedBeforeAndCountedAfterTheyFire failed at -O2).
#define SLUICE_PROBE(name)                                                               \
  do {                                                                                   \
    __attribute__((section("sluice_probes"), used)) static ::sluice::ProbeSite           \
        sluice_probe_site_ = {(name), __FILE__, __LINE__, 0};                            \
    asm volatile("" : : "r"(&sluice_probe_site_));                                       \
    ++sluice_probe_site_.hits;                                                           \
  } while (0)
