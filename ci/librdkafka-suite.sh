#!/usr/bin/env bash
# usage: ci/librdkafka-suite.sh [TEST_NUMBER...]     e.g. ci/librdkafka-suite.sh 0001 0045
#
# librdkafka's own integration test suite (its source's tests/, built as test-runner) against `sluice serve`, the
# way its maintainers run it against a Kafka cluster: TEST_KAFKA_VERSION=3.9.0, quick mode (-Q), broker tests only
# (-L: the local, broker-less ones test the client alone). Opt-in, like the long fuzz: no ctest runs it.
#
# Steps: installs the Debian packages it needs (ci/install-deps.sh), fetches librdkafka's source as vendored by an
# npm package (integrity-checked) and builds the library and test-runner with make -j2 (once: both are cached in
# RDKAFKA_SUITE_CACHE), builds Sluice's release preset, starts build/release/sluice serve on a free 127.0.0.1 port
# with a fresh data dir and the settings of librdkafka's "default" test scenario (auto-created topics, 4
# partitions), writes a test.conf naming it, and runs each test number in a test-runner process of its own (a
# test that times out inside test-runner kills its whole process), RDKAFKA_SUITE_JOBS at once.
# Prints `ok:`/`FAIL:`/`skip:` per test (a failure with its reason and the end of its output), then
# `N passed, N failed, N skipped`; exits 1 when a test failed or did not finish, 2 on misuse.
#
# env: RDKAFKA_SUITE_BUDGET=S      seconds for the whole run (3600); tests not started by then are "not run"
#      RDKAFKA_SUITE_TEST_LIMIT=S  seconds one test number may take (600)
#      RDKAFKA_SUITE_JOBS=N        test-runner processes at once (2)
#      RDKAFKA_SUITE_ARGS="..."    test-runner flags instead of "-Q -L" (add -E to leave out the sockem tests)
#      RDKAFKA_SUITE_MULTIPLIER=F  test.timeout.multiplier in test.conf (2: the machine is shared and small)
#      RDKAFKA_SUITE_CACHE=DIR     where the source and the build are kept (build/librdkafka)
#      RDKAFKA_SUITE_KEEP=1        keep the scratch dir (broker log, data dir, each test's output)
#      RDKAFKA_SUITE_SKIP_BUILD=1  use build/release/sluice as it is
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly root
# shellcheck source=tests/compat/lib.sh
source "${root}/tests/compat/lib.sh"

# librdkafka 2.15.1 (tests/ included) is vendored by this npm package; the integrity is the registry's.
readonly RDKAFKA_VERSION=2.15.1
readonly NPM_PACKAGE=@confluentinc/kafka-javascript@1.10.1
readonly NPM_INTEGRITY=sha512-KVePUBn21EqCVP9mfxzEuM3SYJHHEF7X+iiC2e43QQgDSyEaksInmCGooT3w5q+cNAdkSCrK71j0ICfqoSqZLw==
readonly KAFKA_VERSION=3.9.0
# rapidjson-dev: the tests that check the statistics JSON (0053, 0098, 0101, 0110) need it.
readonly BUILD_PACKAGES=(build-essential pkg-config python3 openssl zlib1g-dev libssl-dev libzstd-dev liblz4-dev
  rapidjson-dev)
readonly CONFIGURE_FLAGS=(--disable-gssapi --disable-curl)

cache="${RDKAFKA_SUITE_CACHE:-${root}/build/librdkafka}"
budget="${RDKAFKA_SUITE_BUDGET:-3600}"
test_limit="${RDKAFKA_SUITE_TEST_LIMIT:-600}"
jobs_max="${RDKAFKA_SUITE_JOBS:-2}"
read -r -a runner_args <<<"${RDKAFKA_SUITE_ARGS:--Q -L}"
multiplier="${RDKAFKA_SUITE_MULTIPLIER:-2}"
for number in "$@"; do
  if ! [[ "${number}" =~ ^[0-9]{4}$ ]]; then
    echo "usage: $0 [TEST_NUMBER...]   (four digits, e.g. 0001)" >&2
    exit 2
  fi
done

say() { echo "librdkafka-suite: $*"; }
die() {
  echo "librdkafka-suite: $*" >&2
  exit 1
}

install_dependencies() {
  bash "${root}/ci/install-deps.sh" "${BUILD_PACKAGES[@]}" || die "could not install ${BUILD_PACKAGES[*]}"
  # npm fetches the source; a NodeSource nodejs bundles it (and conflicts with Debian's npm package).
  if ! command -v npm >/dev/null 2>&1; then
    bash "${root}/ci/install-deps.sh" nodejs npm || die "could not install nodejs and npm"
  fi
}

# The source tree: $cache/librdkafka-VERSION, unpacked from the npm package's deps/librdkafka.
fetch_source() {
  source_dir="${cache}/librdkafka-${RDKAFKA_VERSION}"
  [[ -f "${source_dir}/tests/test.c" ]] && return 0
  mkdir -p "${cache}/download"
  local tarball
  tarball="$(cd "${cache}/download" && npm pack --silent "${NPM_PACKAGE}" </dev/null | tail -n 1)" ||
    die "npm pack ${NPM_PACKAGE} failed"
  local integrity
  integrity="sha512-$(openssl dgst -sha512 -binary "${cache}/download/${tarball}" | base64 -w0)"
  [[ "${integrity}" == "${NPM_INTEGRITY}" ]] || die "${tarball}: integrity ${integrity}, expected ${NPM_INTEGRITY}"
  local unpack="${cache}/download/unpack"
  rm -rf "${unpack}" && mkdir -p "${unpack}"
  tar -xzf "${cache}/download/${tarball}" -C "${unpack}" package/deps/librdkafka || die "cannot unpack ${tarball}"
  grep -q "RD_KAFKA_VERSION 0x020f01ff" "${unpack}/package/deps/librdkafka/src/rdkafka.h" ||
    die "${tarball} does not hold librdkafka ${RDKAFKA_VERSION}"
  rm -rf "${source_dir}"
  mv "${unpack}/package/deps/librdkafka" "${source_dir}"
  rm -rf "${unpack}"
}

# The library without the optional dependencies the broker tests do not use (GSSAPI, libcurl for OIDC), then
# test-runner and the interceptor plugin 0066 loads. A finished build leaves a stamp naming what it was built with
# (the flags and packages), so a change of either builds again. (Logs are not named configure.*: mklove's configure
# takes such files for modules of its own.)
build_librdkafka() {
  local stamp="${source_dir}/.sluice-built" recipe="${CONFIGURE_FLAGS[*]}; ${BUILD_PACKAGES[*]}"
  [[ -x "${source_dir}/tests/test-runner" && "$(cat "${stamp}" 2>/dev/null)" == "${recipe}" ]] && return 0
  say "building librdkafka ${RDKAFKA_VERSION} in ${source_dir} (make -j2; a few CPU-minutes)"
  (
    cd "${source_dir}" &&
      rm -f config.cache &&
      ./configure "${CONFIGURE_FLAGS[@]}" >sluice-configure.log 2>&1 &&
      make -j2 libs >sluice-make.log 2>&1 &&
      make -j2 -C tests build >>sluice-make.log 2>&1
  ) || die "building librdkafka failed; see ${source_dir}/sluice-configure.log and ${source_dir}/sluice-make.log"
  echo "${recipe}" >"${stamp}"
}

build_sluice() {
  if [[ "${RDKAFKA_SUITE_SKIP_BUILD:-0}" != 1 ]]; then
    say "building Sluice (release preset)"
    (cd "${root}" && export CCACHE_BASEDIR="${root}" CCACHE_NOHASHDIR=true &&
      cmake --preset release >/dev/null && cmake --build --preset release) >"${work}/sluice-build.out" 2>&1 ||
      die "building Sluice failed: $(tail -n 20 "${work}/sluice-build.out")"
  fi
  binary="${root}/build/release/sluice"
  [[ -x "${binary}" ]] || die "${binary} is missing"
}

# The test numbers test.c registers, without the manual ones (test-runner skips those unless named).
all_test_numbers() {
  sed -n 's/^ *_TEST(\([0-9]\{4\}\)_[A-Za-z0-9_]*, *\([^,)]*\).*/\1 \2/p' "${source_dir}/tests/test.c" |
    awk '$2 != "TEST_F_MANUAL" && !seen[$1]++ { print $1 }'
}

work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-rdkafka.XXXXXX")"
broker_log="${work}/broker.log"
cleanup() {
  stop_tests
  broker_kill
  if [[ "${RDKAFKA_SUITE_KEEP:-0}" == 1 ]]; then
    say "scratch dir kept: ${work}"
  else
    rm -rf "${work}"
  fi
}
declare -A running=()  # pid of a test's `timeout` → its test number
stop_tests() {
  local pid
  for pid in "${!running[@]}"; do kill -TERM -- "-${pid}" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

install_dependencies
fetch_source
build_librdkafka
build_sluice

numbers=("$@")
[[ ${#numbers[@]} -gt 0 ]] || mapfile -t numbers < <(all_test_numbers)

broker_flags=(--set auto.create.topics.enable=true --set num.partitions=4)
broker_start "${binary}" "${work}/data" "${broker_log}" "" "${broker_flags[@]}" || die "the broker did not start"
say "broker pid ${BROKER_PID} on ${BROKER_BOOTSTRAP}; librdkafka ${RDKAFKA_VERSION}; scratch ${work}"
# test-runner's test.conf, in the scratch dir (RDKAFKA_TEST_CONF names it) so that runs against two brokers can share
# one build.
test_conf="${work}/test.conf"
cat >"${test_conf}" <<CONF
# Written by Sluice's ci/librdkafka-suite.sh for its broker run.
bootstrap.servers=${BROKER_BOOTSTRAP}
test.timeout.multiplier=${multiplier}
test.topic.random=true
CONF

passed=0
failed=0
skipped=0
filtered=0
failures=()
deadline=$((SECONDS + budget))

launch() {  # NUMBER: one test-runner for that number, in the background, in its own process group
  local number="$1" limit=$((deadline - SECONDS))
  ((limit > test_limit)) && limit="${test_limit}"
  (
    cd "${source_dir}/tests" || exit 1
    exec env TESTS="${number}" RDKAFKA_TEST_CONF="${test_conf}" TEST_KAFKA_VERSION="${KAFKA_VERSION}" \
      RDKAFKA_GITVER="${RDKAFKA_VERSION}" LD_LIBRARY_PATH="${source_dir}/src:${source_dir}/src-cpp" \
      timeout --kill-after=5 "${limit}" stdbuf -oL ./test-runner "${runner_args[@]}"
  ) >"${work}/${number}.out" 2>&1 </dev/null &
  running[$!]="${number}"
}

# The summary table test-runner prints at its end, one line per test it did not silently skip:
# "| NAME | STATE | 1.234s | reason" under "TEST <date> (...) SUMMARY". The last table wins (a timed-out test makes
# one before the process ends).
summary_rows() {
  sed -e 's/\x1b\[[0-9;]*m//g' "$1" |
    awk -F'|' '/^TEST [0-9]+ .* SUMMARY$/ { n = 0 }
               NF >= 5 && $3 ~ /^ *(PASSED|FAILED|SKIPPED|RUNNING|DNS) *$/ {
                 name = $2; state = $3; reason = $5
                 for (i = 6; i <= NF; i++) reason = reason "|" $i
                 gsub(/^ +| +$/, "", name); gsub(/ /, "", state); gsub(/^ +| +$/, "", reason)
                 if (name != "<MAIN>") rows[++n] = name "\t" state "\t" reason }
               END { for (i = 1; i <= n; i++) print rows[i] }'
}

report() {  # NUMBER STATUS
  local number="$1" status="$2" out="${work}/$1.out" name state reason seen=0
  while IFS=$'\t' read -r name state reason; do
    seen=1
    case "${state}" in
      PASSED) echo "ok: ${name}" && passed=$((passed + 1)) ;;
      SKIPPED)
        # Tests left out by the flags (-L: the local ones) or by the scenario (those of "noautocreate" and "ak23",
        # listed with no reason because TESTS names them) are not part of the run; other skips are counted.
        if [[ -z "${reason}" || "${reason}" == "Filtered due to negative test flags" ]]; then
          filtered=$((filtered + 1))
        else
          echo "skip: ${name}: ${reason}"
          skipped=$((skipped + 1))
        fi
        ;;
      *)
        [[ "${state}" == FAILED ]] || reason="still ${state} when test-runner ended: ${reason}"
        echo "FAIL: ${name}: ${reason}"
        failed=$((failed + 1))
        failures+=("${name}: ${reason}")
        ;;
    esac
  done < <(summary_rows "${out}")
  if ((seen == 0)); then
    local why="exit status ${status}, no summary"
    [[ ${status} -eq 124 || ${status} -eq 137 ]] && why="did not finish in its time limit"
    echo "FAIL: ${number}: ${why}"
    failed=$((failed + 1))
    failures+=("${number}: ${why}")
  fi
  if ((seen == 0)) || [[ ${status} -ne 0 ]]; then
    echo "  --- ${number}: test-runner exit status ${status}; last 15 lines of its output"
    grep -v '^|' "${out}" | tail -n 15 | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^/    /'
  fi
}

# Reports the next test-runner to end. Polls rather than `wait -n`: a job that ends while the shell runs a
# foreground command is reaped then, and `wait -n` does not return for it.
reap_one() {
  local pid status
  while true; do
    for pid in "${!running[@]}"; do
      kill -0 "${pid}" 2>/dev/null && continue
      wait "${pid}"
      status=$?
      report "${running[${pid}]}" "${status}"
      unset "running[${pid}]"
      return 0
    done
    if [[ -n "${BROKER_PID:-}" ]] && ! broker_alive; then
      wait "${BROKER_PID}"
      say "the broker exited (status $?); its log ends with:"
      tail -n 20 "${broker_log}" | sed -e 's/^/    /'
      BROKER_PID=""
    fi
    sleep 0.5
  done
}

not_run=0
for number in "${numbers[@]}"; do
  while ((${#running[@]} >= jobs_max)); do reap_one; done
  why_not=""
  ((SECONDS < deadline)) || why_not="the time budget was spent"
  broker_alive || why_not="the broker is down"
  if [[ -n "${why_not}" ]]; then
    not_run=$((not_run + 1))
    failures+=("${number}: not run: ${why_not}")
    continue
  fi
  launch "${number}"
done
while ((${#running[@]} > 0)); do reap_one; done
failed=$((failed + not_run))
if ((not_run > 0)); then echo "FAIL: ${not_run} test numbers not run"; fi

if broker_alive && ! broker_stop 10; then
  echo "FAIL: broker_sigterm: ${BROKER_EXIT_STATUS}"
  failures+=("broker_sigterm: ${BROKER_EXIT_STATUS}")
  failed=$((failed + 1))
fi

say "librdkafka ${RDKAFKA_VERSION} test-runner ${runner_args[*]}, TEST_KAFKA_VERSION=${KAFKA_VERSION}:" \
  "$((SECONDS / 60)) min, ${filtered} tests left out by the flags or the scenario"
if ((${#failures[@]} > 0)); then
  say "failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
((failed == 0))
