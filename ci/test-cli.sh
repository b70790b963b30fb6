#!/usr/bin/env bash
# usage: ci/test-cli.sh SLUICE_BINARY
#
# Checks the `sluice` command line end to end (the ctest cli.sim_smoke_deterministic):
#   - `sluice --help` exits 0 and names the `serve` and `sim` subcommands;
#   - `sluice sim --selftest --seed 42` twice prints the same "trace hash: <hex>", and --seed 43 a different one;
#   - `sluice serve --listen not-an-address` exits non-zero with a message;
#   - `sluice serve` on a free loopback port with a temporary data dir listens, answers a Kafka ApiVersions request
#     written on a raw socket, and exits 0 within a few seconds of SIGTERM;
#   - `sluice serve --config FILE` with an unknown key exits 2 naming it.
# Every step has a time limit, so the script never hangs. Only 127.0.0.1 is ever contacted.
set -euo pipefail

readonly SIM_TIMEOUT_S=150  # one smoke simulation (x3): generous for ASan, and all under ctest's 600 s
readonly QUICK_TIMEOUT_S=20  # --help, and serve with a bad address
readonly START_TIMEOUT_S=20  # until serve listens
readonly ANSWER_TIMEOUT_S=10  # until serve answers a request
readonly STOP_TIMEOUT_S=5  # from SIGTERM to exit

sluice="${1:-}"
if [[ -z "${sluice}" || ! -x "${sluice}" ]]; then
  echo "usage: $0 SLUICE_BINARY   (an executable sluice)" >&2
  exit 2
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "${server_pid}" ]] && kill -0 "${server_pid}" 2>/dev/null; then
    kill -KILL "${server_pid}" 2>/dev/null || true
  fi
  rm -rf "${work}"
}
trap cleanup EXIT

passed=0
failed=0
pass() {
  echo "ok: $*"
  passed=$((passed + 1))
}
# fail MESSAGE [OUTPUT_FILE]: counts a failure and shows the end of the output it concerns.
fail() {
  echo "FAIL: $1"
  if [[ $# -gt 1 && -f "$2" ]]; then
    tail -n 40 "$2" | sed -e 's/^/    | /'
  fi
  failed=$((failed + 1))
}

# run LIMIT_S OUTPUT_FILE COMMAND...: runs with a time limit, no stdin, both streams to the file; sets `status`.
run() {
  local limit="$1" out="$2"
  shift 2
  status=0
  timeout --kill-after=5 "${limit}" "$@" >"${out}" 2>&1 </dev/null || status=$?
}

# --- --help ---
run "${QUICK_TIMEOUT_S}" "${work}/help.txt" "${sluice}" --help
if [[ ${status} -ne 0 ]]; then
  fail "sluice --help exited ${status}" "${work}/help.txt"
elif ! grep -qw serve "${work}/help.txt" || ! grep -qw sim "${work}/help.txt"; then
  fail "sluice --help does not mention both 'serve' and 'sim'" "${work}/help.txt"
else
  pass "sluice --help names serve and sim"
fi

# --- sim: the same seed gives the same trace hash, another seed another ---
# sim_hash SEED NAME: runs one simulation and sets `hash` to its trace hash, or to "" after a failure.
sim_hash() {
  local out="${work}/sim-$2.txt"
  hash=""
  run "${SIM_TIMEOUT_S}" "${out}" "${sluice}" sim --selftest --seed "$1"
  if [[ ${status} -ne 0 ]]; then
    local why=""
    if [[ ${status} -eq 124 ]]; then
      why=", timed out after ${SIM_TIMEOUT_S} s"
    fi
    fail "sluice sim --selftest --seed $1 ($2) exited ${status}${why}" "${out}"
    return 0
  fi
  hash="$(grep -oE 'trace hash: *[0-9A-Fa-f]+' "${out}" | head -n 1 | sed -E 's/^trace hash: *//')" || true
  if [[ -z "${hash}" ]]; then
    fail "sluice sim --selftest --seed $1 ($2) printed no 'trace hash: <hex>' line" "${out}"
  fi
}

sim_hash 42 "first run"
hash_42a="${hash}"
sim_hash 42 "second run"
hash_42b="${hash}"
sim_hash 43 "other seed"
hash_43="${hash}"
if [[ -n "${hash_42a}" && -n "${hash_42b}" ]]; then
  if [[ "${hash_42a}" == "${hash_42b}" ]]; then
    pass "sluice sim --selftest --seed 42 is deterministic (trace hash ${hash_42a})"
  else
    fail "sluice sim --selftest --seed 42 gave two trace hashes: ${hash_42a} and ${hash_42b}"
  fi
fi
if [[ -n "${hash_42a}" && -n "${hash_43}" ]]; then
  if [[ "${hash_42a}" != "${hash_43}" ]]; then
    pass "sluice sim --selftest --seed 43 gives another trace hash (${hash_43})"
  else
    fail "sluice sim --selftest --seed 42 and --seed 43 gave the same trace hash ${hash_43}"
  fi
fi

# --- log inspect: an empty data directory, a missing one, and --json ---
mkdir -p "${work}/empty-data"
run "${QUICK_TIMEOUT_S}" "${work}/inspect.txt" "${sluice}" log inspect "${work}/empty-data"
if [[ ${status} -eq 0 ]] && grep -q "no partitions" "${work}/inspect.txt"; then
  pass "sluice log inspect on an empty data directory says so"
else
  fail "sluice log inspect on an empty data directory exited ${status}" "${work}/inspect.txt"
fi
run "${QUICK_TIMEOUT_S}" "${work}/inspect-missing.txt" "${sluice}" log inspect "${work}/no-such-dir"
if [[ ${status} -ne 0 ]] && grep -q "NotFound" "${work}/inspect-missing.txt"; then
  pass "sluice log inspect on a missing directory fails with NotFound"
else
  fail "sluice log inspect on a missing directory exited ${status}" "${work}/inspect-missing.txt"
fi
run "${QUICK_TIMEOUT_S}" "${work}/inspect-json.txt" "${sluice}" log inspect --json "${work}/empty-data"
if [[ ${status} -eq 0 ]] && [[ "$(tr -d '[:space:]' < "${work}/inspect-json.txt")" == "[]" ]]; then
  pass "sluice log inspect --json prints a JSON array"
else
  fail "sluice log inspect --json exited ${status}" "${work}/inspect-json.txt"
fi

# --- serve: a bad address is refused ---
run "${QUICK_TIMEOUT_S}" "${work}/bad-address.txt" "${sluice}" serve --listen not-an-address \
  --data-dir "${work}/bad-address-data"
if [[ ${status} -eq 0 ]]; then
  fail "sluice serve --listen not-an-address exited 0" "${work}/bad-address.txt"
elif [[ ${status} -eq 124 || ${status} -eq 137 ]]; then
  fail "sluice serve --listen not-an-address did not exit within ${QUICK_TIMEOUT_S} s" "${work}/bad-address.txt"
elif [[ ! -s "${work}/bad-address.txt" ]]; then
  fail "sluice serve --listen not-an-address exited ${status} without a message"
else
  pass "sluice serve --listen not-an-address exits ${status}: $(head -n 1 "${work}/bad-address.txt")"
fi

# --- serve: listens, accepts and logs a connection, stops on SIGTERM with exit 0 ---
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# is_listening PORT: true when a TCP socket listens on PORT (IPv4 or IPv6), read from /proc with no tools needed.
is_listening() {
  local hex
  hex="$(printf '%04X' "$1")"
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v port=":${hex}" \
    '$4 == "0A" && substr($2, length($2) - 4) == port { found = 1 } END { exit !found }'
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds or the time is up.
wait_for() {
  local tries=$(($1 * 10))
  shift
  while ((tries-- > 0)); do
    if "$@"; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

server_alive() { kill -0 "${server_pid}" 2>/dev/null; }
server_gone() { ! server_alive; }

# api_versions PORT: sends ApiVersions v0 (correlation id 7) on a raw socket and prints how many APIs the answer
# lists; fails unless the answer carries correlation id 7 and error code 0.
api_versions() {
  timeout "${ANSWER_TIMEOUT_S}" python3 -c '
import socket, struct, sys
request = struct.pack(">hhih", 18, 0, 7, 3) + b"cli"
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as s:
    s.sendall(struct.pack(">i", len(request)) + request)
    def read(n):
        data = b""
        while len(data) < n:
            chunk = s.recv(n - len(data))
            if not chunk:
                sys.exit("connection closed after %d of %d bytes" % (len(data), n))
            data += chunk
        return data
    body = read(struct.unpack(">i", read(4))[0])
correlation_id, error_code, count = struct.unpack(">ihi", body[:10])
if correlation_id != 7 or error_code != 0:
    sys.exit("correlation id %d, error code %d" % (correlation_id, error_code))
print(count)
' "$1"
}

serve_check() {
  local port log="${work}/serve.log" status
  port="$(free_port)"
  "${sluice}" serve --listen "127.0.0.1:${port}" --data-dir "${work}/serve-data" --log-level info \
    >"${log}" 2>&1 </dev/null &
  server_pid=$!

  if ! wait_for "${START_TIMEOUT_S}" is_listening "${port}"; then
    if server_alive; then
      fail "sluice serve did not listen on 127.0.0.1:${port} within ${START_TIMEOUT_S} s" "${log}"
    else
      status=0
      wait "${server_pid}" || status=$?
      fail "sluice serve exited ${status} before listening on 127.0.0.1:${port}" "${log}"
    fi
    return 0
  fi
  pass "sluice serve listens on 127.0.0.1:${port}"

  local apis
  if apis="$(api_versions "${port}" 2>"${work}/api-versions.txt")"; then
    pass "sluice serve answers ApiVersions v0 on 127.0.0.1:${port} (${apis} APIs)"
  else
    fail "sluice serve did not answer ApiVersions: $(tail -n 1 "${work}/api-versions.txt")" "${log}"
  fi

  kill -TERM "${server_pid}"
  if ! wait_for "${STOP_TIMEOUT_S}" server_gone; then
    fail "sluice serve still runs ${STOP_TIMEOUT_S} s after SIGTERM" "${log}"
    kill -KILL "${server_pid}" 2>/dev/null || true
    wait "${server_pid}" 2>/dev/null || true
    return 0
  fi
  status=0
  wait "${server_pid}" || status=$?
  if [[ ${status} -eq 0 ]]; then
    pass "sluice serve exits 0 on SIGTERM"
  else
    fail "sluice serve exited ${status} on SIGTERM (want 0)" "${log}"
  fi
}
serve_check

# --- serve: a configuration error exits 2 and names the key ---
printf '# a typo\nnum.partition=3\n' >"${work}/bad.properties"
run "${QUICK_TIMEOUT_S}" "${work}/bad-config.txt" "${sluice}" serve --config "${work}/bad.properties" \
  --listen 127.0.0.1:0 --data-dir "${work}/bad-config-data"
if [[ ${status} -eq 2 ]] && grep -q "num.partition" "${work}/bad-config.txt"; then
  pass "sluice serve with an unknown config key exits 2: $(head -n 1 "${work}/bad-config.txt")"
else
  fail "sluice serve with an unknown config key exited ${status} (want 2 and the key named)" "${work}/bad-config.txt"
fi

echo "cli: ${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
