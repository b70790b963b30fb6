#!/usr/bin/env bash
# Real-client compatibility harness: starts `sluice serve` on a free 127.0.0.1 port with a fresh data dir,
# runs the tests named in tests.list (all by default) against it, each with its own time limit, and stops
# the broker with SIGTERM. Prints `ok: NAME` / `FAIL: NAME` (with the test's output and the broker's log
# lines from that test on failure) and ends with `N passed, N failed`; exits 1 on any failure, 2 on misuse.
#
# usage: tests/compat/run.sh SLUICE_BINARY [TEST...]     (tests/compat/run.sh --list  lists the tests)
# env:   COMPAT_JOBS=N        run up to N tests at once (default 4; they share the broker, each on its own topics)
#        COMPAT_KEEP=1        keep the scratch dir (broker log, data dir, per-test output) and print its path
#        COMPAT_TIMEOUT_SCALE multiply every time limit and client timeout (e.g. 3 under a sanitizer build)
# Needs ci/install-compat-deps.sh to have run.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
# shellcheck source=tests/compat/lib.sh
source "${HERE}/lib.sh"

names=()
limits=()
commands=()
while read -r name limit command; do
  [[ -z "${name}" || "${name}" == \#* ]] && continue
  names+=("${name}")
  limits+=("${limit}")
  commands+=("${command}")
done <"${HERE}/tests.list"

if [[ "${1:-}" == "--list" ]]; then
  for i in "${!names[@]}"; do printf '%-40s %4s s  %s\n' "${names[$i]}" "${limits[$i]}" "${commands[$i]}"; done
  exit 0
fi
if [[ $# -lt 1 || "${1}" == -* ]]; then
  echo "usage: $0 SLUICE_BINARY [TEST...]   ($0 --list shows the tests)" >&2
  exit 2
fi
if [[ ! -x "$1" ]]; then
  echo "$0: $1 is not an executable (build it: cmake --preset dev && cmake --build --preset dev --target sluice)" >&2
  exit 2
fi
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift

selected=()
if [[ $# -eq 0 ]]; then
  selected=("${!names[@]}")
else
  for wanted in "$@"; do
    found=""
    for i in "${!names[@]}"; do
      if [[ "${names[$i]}" == "${wanted}" ]]; then found="${i}"; fi
    done
    if [[ -z "${found}" ]]; then
      echo "$0: no test named ${wanted} (see $0 --list)" >&2
      exit 2
    fi
    selected+=("${found}")
  done
fi

for tool in kcat node timeout "${COMPAT_PYTHON}"; do
  if ! command -v "${tool}" >/dev/null 2>&1; then
    echo "$0: ${tool} not found; run ci/install-compat-deps.sh" >&2
    exit 2
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-compat.XXXXXX")"
data_dir="${work}/data"
broker_log="${work}/broker.log"
cleanup() {
  if declare -F stop_tests >/dev/null; then stop_tests; fi
  broker_kill
  if [[ "${COMPAT_KEEP:-0}" == 1 ]]; then
    echo "scratch dir kept: ${work}"
  else
    rm -rf "${work}"
  fi
}
trap cleanup EXIT

passed=0
failed=0
indent() { sed -e 's/^/    /'; }
report_fail() {  # NAME REASON [OUTPUT_FILE] [BROKER_LOG_OFFSET]
  echo "FAIL: $1 ($2)"
  if [[ -n "${3:-}" && -s "$3" ]]; then
    echo "  --- output (last 60 lines)"
    tail -n 60 "$3" | indent
  fi
  if [[ -n "${4:-}" && -s "${broker_log}" ]]; then
    local lines
    lines="$(tail -c +"$(($4 + 1))" "${broker_log}" | tail -n 20)"
    if [[ -n "${lines}" ]]; then
      echo "  --- broker log while the test ran (last 20 lines; other tests may run alongside)"
      printf '%s\n' "${lines}" | indent
    fi
  fi
  failed=$((failed + 1))
}

echo "compat: broker ${binary}, scratch ${work}"
if ! broker_start "${binary}" "${data_dir}" "${broker_log}" 2>"${work}/start.err"; then
  report_fail broker_start "$(cat "${work}/start.err")" "${broker_log}"
  for i in "${selected[@]}"; do report_fail "${names[$i]}" "not run: the broker did not start"; done
  echo "${passed} passed, ${failed} failed"
  exit 1
fi
echo "compat: broker pid ${BROKER_PID} listening on ${BROKER_BOOTSTRAP}"

scale="${COMPAT_TIMEOUT_SCALE:-1}"
jobs_max="${COMPAT_JOBS:-4}"
declare -A running=() started_at=() log_offsets=()  # by pid of the test's `timeout` process

launch() {  # INDEX: start one test in the background
  local i="$1" name="${names[$1]}" pid
  local test_work="${work}/tests/${name}"
  mkdir -p "${test_work}"
  (
    cd "${HERE}" || exit 1
    exec env SLUICE_BOOTSTRAP="${BROKER_BOOTSTRAP}" SLUICE_BINARY="${binary}" SLUICE_DATA_DIR="${data_dir}" \
      SLUICE_BROKER_LOG="${broker_log}" SLUICE_WORK_DIR="${test_work}" SLUICE_COMPAT_DIR="${HERE}" \
      COMPAT_PYTHON="${COMPAT_PYTHON}" COMPAT_TIMEOUT_SCALE="${scale}" PYTHONDONTWRITEBYTECODE=1 \
      timeout --kill-after=5 "$((limits[i] * scale))" bash -c "${commands[$i]}"
  ) >"${work}/${name}.out" 2>&1 </dev/null &
  pid=$!
  running[${pid}]="${i}"
  started_at[${pid}]="${EPOCHREALTIME}"
  log_offsets[${pid}]="$(stat -c %s "${broker_log}" 2>/dev/null || echo 0)"
}

reap_one() {  # wait for the next test to end and report it
  local pid status i name elapsed out
  while true; do
    wait -n -p pid
    status=$?
    if [[ -n "${running[${pid}]:-}" ]]; then break; fi
    if [[ "${pid}" == "${BROKER_PID:-}" ]]; then
      echo "compat: the broker exited (status ${status})"
      BROKER_PID=""
    fi
  done
  i="${running[${pid}]}"
  name="${names[$i]}"
  out="${work}/${name}.out"
  elapsed="$(awk -v a="${started_at[${pid}]}" -v b="${EPOCHREALTIME}" 'BEGIN { printf "%.1f", b - a }')"
  if ! broker_alive; then
    report_fail "${name}" "the broker died while the test ran, after ${elapsed} s" "${out}" "${log_offsets[${pid}]}"
  elif [[ ${status} -eq 0 ]]; then
    echo "ok: ${name} (${elapsed} s)"
    passed=$((passed + 1))
  elif [[ ${status} -eq 124 || ${status} -eq 137 ]]; then
    report_fail "${name}" "timed out after $((limits[i] * scale)) s" "${out}" "${log_offsets[${pid}]}"
  else
    report_fail "${name}" "exit status ${status}, after ${elapsed} s" "${out}" "${log_offsets[${pid}]}"
  fi
  unset "running[${pid}]" "started_at[${pid}]" "log_offsets[${pid}]"
}

stop_tests() {  # on interruption: end the running tests (each `timeout` leads its own process group)
  local pid
  for pid in "${!running[@]}"; do kill -TERM -- "-${pid}" 2>/dev/null; done
}
trap 'stop_tests; exit 130' INT TERM

for i in "${selected[@]}"; do
  while ((${#running[@]} >= jobs_max)); do reap_one; done
  if ! broker_alive; then
    # A test killed it (and failed for it): let the others end, then restart on the same data dir and port.
    while ((${#running[@]} > 0)); do reap_one; done
    [[ -n "${BROKER_PID:-}" ]] && wait "${BROKER_PID}" 2>/dev/null
    echo "compat: broker not running, restarting it on the same data dir"
    if ! broker_start "${binary}" "${data_dir}" "${broker_log}" "${BROKER_PORT}" 2>"${work}/start.err"; then
      report_fail "${names[$i]}" "not run: broker restart failed: $(cat "${work}/start.err")"
      continue
    fi
  fi
  launch "${i}"
done
while ((${#running[@]} > 0)); do reap_one; done

# Graceful shutdown is part of the contract: SIGTERM must stop the broker, with status 0, within 5 s.
if broker_alive; then
  log_offset="$(stat -c %s "${broker_log}" 2>/dev/null || echo 0)"
  if broker_stop 5; then
    echo "ok: broker_sigterm"
    passed=$((passed + 1))
  else
    report_fail broker_sigterm "after SIGTERM: ${BROKER_EXIT_STATUS}" "" "${log_offset}"
  fi
fi

echo "${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
