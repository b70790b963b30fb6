#!/usr/bin/env bash
# usage: ci/test-check-seam.sh ROOT
#
# Tests ci/check-seam.sh on a copy of ROOT/core: the clean copy passes, each planted violation fails and names
# the file it is in, and the same text inside comments does not fail.
set -euo pipefail

root="${1:-}"
if [[ -z "${root}" || ! -d "${root}/core" || ! -f "${root}/ci/check-seam.sh" ]]; then
  echo "usage: $0 ROOT   (ROOT/core and ROOT/ci/check-seam.sh must exist)" >&2
  exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
mkdir -p "${work}/ci"
cp -R "${root}/core" "${work}/core"
cp "${root}/ci/check-seam.sh" "${work}/ci/check-seam.sh"

passed=0
failed=0

fail() {
  echo "FAIL: $*" >&2
  failed=$((failed + 1))
}

# Runs the checker on the copy; sets `output` and `status`.
run_checker() {
  status=0
  output="$(bash "${work}/ci/check-seam.sh" "${work}" 2>&1)" || status=$?
}

expect_pass() {
  local name="$1"
  run_checker
  if [[ ${status} -eq 0 && "${output}" == "seam ok: "* ]]; then
    passed=$((passed + 1))
  else
    fail "${name}: expected the checker to pass (exit ${status}):"$'\n'"${output}"
  fi
}

# Plants `text` into a new file under core/DIR (default: planted), expects a failure that names the file, then
# removes the file.
expect_violation() {
  local name="$1" text="$2" dir="${3:-planted}"
  local file="core/${dir}/violation_$((passed + failed)).cc"
  mkdir -p "${work}/core/${dir}"
  printf '// Planted by ci/test-check-seam.sh.\nnamespace sluice {\n%s\n}  // namespace sluice\n' "${text}" \
    >"${work}/${file}"
  run_checker
  if [[ ${status} -ne 1 ]]; then
    fail "${name}: expected exit 1, got ${status}:"$'\n'"${output}"
  elif ! grep -qF "${file}:3:" <<<"${output}"; then
    fail "${name}: the report does not name ${file}:3:"$'\n'"${output}"
  else
    passed=$((passed + 1))
  fi
  rm -f "${work}/${file}"
  rm -rf "${work}/core/planted"
}

# Plants `text` (a violation that only comments or strings contain) and expects the checker to pass.
expect_ignored() {
  local name="$1" text="$2"
  mkdir -p "${work}/core/planted"
  printf 'namespace sluice {\n%s\n}  // namespace sluice\n' "${text}" >"${work}/core/planted/ignored.cc"
  expect_pass "${name}"
  rm -rf "${work}/core/planted"
}

expect_pass "the clean tree"

expect_violation "#include <thread>" '#include <thread>'
expect_violation "#include <sys/socket.h>" '#include <sys/socket.h>'
expect_violation "steady_clock::now()" 'auto start = std::chrono::steady_clock::now();'
expect_violation "std::random_device" 'std::random_device device;'
expect_violation '#include "sim/sim_world.h"' '#include "sim/sim_world.h"'
expect_violation '#include "net/real_env.h"' '  #  include "net/real_env.h"'
expect_violation "system_clock::now() with spaces" 'auto t = std::chrono::system_clock :: now();'
expect_violation "sleep()" 'void nap() { sleep(1); }'
expect_violation "::open()" 'int fd = ::open("/tmp/x", 0);'
expect_violation "std::thread" 'std::thread worker([] {});'
expect_violation "getenv()" 'const char* home = std::getenv("HOME");'
expect_violation "is_simulated" 'bool fast = env.is_simulated;'
expect_violation "spdlog outside log.cc" '#include <spdlog/spdlog.h>'
expect_violation "code after a closed block comment" '/* a comment */ int seed = std::rand();'
expect_violation "core/cluster including core/kafka" '#include "core/kafka/broker.h"' cluster
expect_violation "core/storage including core/cluster" '#include "core/cluster/partition.h"' storage
expect_violation "core/cluster/metadata including core/storage" '#include "core/storage/topic_config.h"' cluster/metadata
expect_violation "core/cluster/metadata including core/raft" '#include "core/raft/host.h"' cluster/metadata
expect_violation "core/cluster/metadata including the partition layer" '#include "core/cluster/partition.h"' \
  cluster/metadata
expect_violation "core/cluster/metadata including the Env" '#include "core/env/env.h"' cluster/metadata
expect_violation "core/cluster/metadata including a protocol message" '#include "core/protocol/messages/fetch.h"' \
  cluster/metadata

expect_ignored "violations in // comments" $'// #include <thread>\nint x = 1;  // std::chrono::steady_clock::now()'
expect_ignored "violations in /* */ comments" $'/*\n#include <sys/socket.h>\nstd::random_device d;\n*/'
expect_ignored "violations in strings" 'const char* help = "never call sleep(1) or std::rand()";'
expect_ignored "the core's own names" 'void f() { scheduler.sleep_for(d); clock_.now(); fs.open(p); logger.write(m); }'

echo "check-seam: ${passed} cases passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
