#include "core/base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace sluice {
namespace {

AssertFailureHook& failure_hook() {
  static AssertFailureHook hook;
  return hook;
}

bool g_verify_enabled = false;
bool g_failing = false;

}  // namespace

void assert_fail(const char* expression, const char* message, const char* file, int line) {
  std::fprintf(stderr, "\nsluice: assertion failed: %s%s%s\n  at %s:%d\n", expression,
               message ? " — " : "", message ? message : "", file, line);
  std::fflush(stderr);
  // A second failure inside the hook must not recurse.
  if (!g_failing && failure_hook()) {
    g_failing = true;
    failure_hook()();
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::abort();
}

AssertFailureHook set_assert_failure_hook(AssertFailureHook hook) {
  AssertFailureHook previous = std::move(failure_hook());
  failure_hook() = std::move(hook);
  return previous;
}

bool verify_enabled() { return g_verify_enabled; }
void set_verify_enabled(bool enabled) { g_verify_enabled = enabled; }

}  // namespace sluice

// The linker defines these bounds for any section whose name is a valid C identifier.
extern "C" {
extern sluice::ProbeSite __start_sluice_probes[] __attribute__((weak));
extern sluice::ProbeSite __stop_sluice_probes[] __attribute__((weak));
}

namespace sluice {

std::span<ProbeSite> probe_sites() {
  if (__start_sluice_probes == nullptr) return {};
  return std::span<ProbeSite>(__start_sluice_probes, __stop_sluice_probes);
}

void reset_probe_hits() {
  for (ProbeSite& site : probe_sites()) site.hits = 0;
}

}  // namespace sluice
