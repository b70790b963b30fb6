# shellcheck shell=bash
# shellcheck disable=SC2034  # KCAT and scale are used by the scripts that source this file
# Sourced by the kcat tests: strict mode, lib.sh, and the kcat command line every test uses.
set -euo pipefail
# shellcheck source=tests/compat/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
: "${SLUICE_BOOTSTRAP:?run through tests/compat/run.sh or export SLUICE_BOOTSTRAP=127.0.0.1:PORT}"
case "${SLUICE_BOOTSTRAP}" in
  127.0.0.1:* | localhost:*) ;;
  *) echo "SLUICE_BOOTSTRAP must be a loopback address" >&2; exit 2 ;;
esac
WORK="${SLUICE_WORK_DIR:-$(mktemp -d)}"
mkdir -p "${WORK}"
# Short timeouts so that a broker which does not answer fails the test in seconds (COMPAT_TIMEOUT_SCALE stretches).
scale="${COMPAT_TIMEOUT_SCALE:-1}"
KCAT=(kcat -b "${SLUICE_BOOTSTRAP}" -X socket.timeout.ms=$((5000 * scale))
  -X socket.connection.setup.timeout.ms=$((3000 * scale)) -X api.version.request.timeout.ms=$((3000 * scale))
  -X reconnect.backoff.max.ms=500 -X message.timeout.ms=$((5000 * scale)) -X log_level=4)

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# expect_same EXPECTED_FILE ACTUAL_FILE WHAT
expect_same() {
  if ! cmp -s "$1" "$2"; then
    echo "--- $3 differs (expected vs actual):" >&2
    diff -u "$1" "$2" | head -n 40 >&2 || true
    fail "$3"
  fi
}
