#!/usr/bin/env bash
# Cluster failover tests (issue 22): starts three `sluice serve` nodes as one cluster on free 127.0.0.1 ports
# (Kafka and raft), each with its own data dir and log, waits until every node answers Metadata with the three
# brokers and a controller, runs the tests of py/cluster_failover_tests.py one at a time (each kills a node and
# restarts it), then stops the nodes with SIGTERM and checks that each exits with status 0. Prints
# `ok: NAME` / `FAIL: NAME` (with the test's output and the nodes' log lines from that test on failure) and
# ends with `N passed, N failed`; exits 1 on any failure, 2 on misuse.
#
# usage: tests/compat/cluster_run.sh SLUICE_BINARY [TEST...]      (--list lists the tests)
# env:   COMPAT_KEEP=1          keep the scratch dir (cluster.json, node logs and data dirs, test output)
#        COMPAT_TIMEOUT_SCALE   multiply the time limits and the clients' timeouts (e.g. 3 under a sanitizer)
#        COMPAT_PYTHON          the Python with kafka-python and confluent-kafka (default /usr/bin/python3)
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
PY="${COMPAT_PYTHON:-/usr/bin/python3}"
CLUSTER="${HERE}/py/cluster.py"
TESTS=(kafka_python_acks_all_leader_sigkill confluent_acks_all_leader_sigkill group_offsets_survive_partition_failover
       group_offsets_survive_coordinator_sigkill)
LIMIT_S=150  # per test, before COMPAT_TIMEOUT_SCALE

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${TESTS[@]}"
  exit 0
fi
if [[ $# -lt 1 || "${1}" == -* ]]; then
  echo "usage: $0 SLUICE_BINARY [TEST...]   ($0 --list shows the tests)" >&2
  exit 2
fi
if [[ ! -x "$1" ]]; then
  echo "$0: $1 is not an executable" >&2
  exit 2
fi
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
selected=("$@")
[[ ${#selected[@]} -gt 0 ]] || selected=("${TESTS[@]}")
for name in "${selected[@]}"; do
  if [[ " ${TESTS[*]} " != *" ${name} "* ]]; then
    echo "$0: no test named ${name} (see $0 --list)" >&2
    exit 2
  fi
done
if ! "${PY}" -c 'import kafka, confluent_kafka' 2>/dev/null; then
  echo "$0: ${PY} lacks kafka-python or confluent-kafka; run ci/install-compat-deps.sh" >&2
  exit 2
fi

scale="${COMPAT_TIMEOUT_SCALE:-1}"
work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-cluster.XXXXXX")"
cleanup() {
  "${PY}" "${CLUSTER}" kill "${work}" 2>/dev/null
  if [[ "${COMPAT_KEEP:-0}" == 1 ]]; then
    echo "scratch dir kept: ${work}"
  else
    rm -rf "${work}"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
indent() { sed -e 's/^/    /'; }
log_sizes() { for k in 1 2 3; do stat -c %s "${work}/node-${k}.log" 2>/dev/null || echo 0; done; }
print_logs() {  # [OFFSET1 OFFSET2 OFFSET3]: each node's log from those byte offsets, last 40 lines
  local offsets=("${1:-0}" "${2:-0}" "${3:-0}") k
  for k in 1 2 3; do
    [[ -s "${work}/node-${k}.log" ]] || continue
    echo "  --- node ${k} log (last 40 lines$([[ ${offsets[k - 1]} -gt 0 ]] && echo ' since the test started'))"
    tail -c +"$((offsets[k - 1] + 1))" "${work}/node-${k}.log" | tail -n 40 | indent
  done
}
fail() {  # NAME REASON [OUTPUT_FILE [LOG OFFSETS...]]: the node logs only when offsets are given
  local name="$1" reason="$2" out="${3:-}"
  shift $(($# < 3 ? $# : 3))
  echo "FAIL: ${name} (${reason})"
  if [[ -n "${out}" && -s "${out}" ]]; then
    echo "  --- output (last 60 lines)"
    tail -n 60 "${out}" | indent
  fi
  [[ $# -eq 0 ]] || print_logs "$@"
  failed=$((failed + 1))
}

echo "cluster: binary ${binary}, scratch ${work}"
"${PY}" "${CLUSTER}" setup "${work}" "${binary}" 3 || exit 2
"${PY}" "${CLUSTER}" start "${work}" || { fail cluster_start "a node did not start" "" 0 0 0; exit 1; }
if ! reason="$("${PY}" "${CLUSTER}" wait-ready "${work}" $((30 * scale)))"; then
  fail cluster_ready "${reason}" "" 0 0 0
  for name in "${selected[@]}"; do fail "${name}" "not run: the cluster did not come up"; done
  echo "${passed} passed, ${failed} failed"
  exit 1
fi
echo "cluster: 3 nodes ready"

for name in "${selected[@]}"; do
  # A test that failed half-way may have left its node down: restart it before the next test.
  "${PY}" "${CLUSTER}" start-missing "${work}"
  if ! reason="$("${PY}" "${CLUSTER}" wait-ready "${work}" $((30 * scale)))"; then
    fail "${name}" "not run: the cluster is not ready: ${reason}" "" 0 0 0
    continue
  fi
  mapfile -t offsets < <(log_sizes)
  out="${work}/${name}.out"
  started="${EPOCHREALTIME}"
  (cd "${HERE}/py" && SLUICE_CLUSTER_DIR="${work}" COMPAT_TIMEOUT_SCALE="${scale}" PYTHONDONTWRITEBYTECODE=1 \
    timeout --kill-after=5 $((LIMIT_S * scale)) "${PY}" cluster_failover_tests.py "${name}") >"${out}" 2>&1 </dev/null
  status=$?
  elapsed="$(awk -v a="${started}" -v b="${EPOCHREALTIME}" 'BEGIN { printf "%.1f", b - a }')"
  # Every test restarts the node it kills: a node down now crashed, or the test failed before its restart.
  down="$("${PY}" "${CLUSTER}" down "${work}")"
  if [[ ${status} -eq 0 && -n "${down}" ]]; then
    fail "${name}" "passed, but left a node down: ${down}" "${out}" "${offsets[@]}"
  elif [[ ${status} -eq 0 ]]; then
    echo "ok: ${name} (${elapsed} s)"
    grep -E '^-- (failover time|node [0-9]+ back in the ISR)' "${out}" | indent
    passed=$((passed + 1))
  elif [[ ${status} -eq 124 || ${status} -eq 137 ]]; then
    fail "${name}" "timed out after ${elapsed} s (limit $((LIMIT_S * scale)) s)${down:+; down: ${down}}" "${out}" \
      "${offsets[@]}"
  else
    fail "${name}" "exit status ${status} after ${elapsed} s${down:+; down: ${down}}" "${out}" "${offsets[@]}"
  fi
done

if stop_out="$("${PY}" "${CLUSTER}" stop "${work}" 5)"; then
  echo "ok: cluster_sigterm"
  passed=$((passed + 1))
else
  fail cluster_sigterm "$(echo "${stop_out}" | grep -v 'status 0' | tr '\n' ' ')" "" 0 0 0
fi
echo "${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
