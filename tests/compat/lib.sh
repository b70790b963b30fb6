# shellcheck shell=bash
# shellcheck disable=SC2034  # BROKER_* are read by the scripts that source this file
# Sourced by tests/compat/run.sh and by the shell tests. Bash only.
#
# Broker control (used by run.sh; a shell test may use it to run a broker of its own):
#   broker_start BINARY DATA_DIR LOG [PORT [FLAG...]]
#                                            start `sluice serve` on 127.0.0.1 (a free port unless PORT is given
#                                            and not empty), with any further serve FLAGs (e.g. --set k=v); wait up
#                                            to COMPAT_START_TIMEOUT s (10) until it accepts TCP; sets BROKER_PID,
#                                            BROKER_PORT, BROKER_BOOTSTRAP; 1 on failure
#   broker_alive                             0 while BROKER_PID runs
#   broker_stop [SECONDS]                    SIGTERM, wait up to SECONDS (5) for the exit; 0 when it exited
#                                            with status 0, 1 otherwise (then it is SIGKILLed); sets
#                                            BROKER_EXIT_STATUS
#   broker_kill                              SIGKILL and reap
# Test helpers:
#   topic_name PREFIX       a fresh topic name (PREFIX-<random>)
#   bounded SECONDS CMD...  run CMD with a time limit; on timeout say so on stderr and return 124
#   mktopic NAME [K=V...]   create a 1-partition topic through confluent-kafka's AdminClient

COMPAT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Debian's interpreter: the python3 first on PATH may be another one without Debian's packages.
COMPAT_PYTHON="${COMPAT_PYTHON:-/usr/bin/python3}"

free_port() {
  "${COMPAT_PYTHON}" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

broker_alive() {
  [[ -n "${BROKER_PID:-}" ]] && kill -0 "${BROKER_PID}" 2>/dev/null
}

broker_start() {
  local binary="$1" data_dir="$2" log="$3" port="${4:-}"
  shift $(($# < 4 ? $# : 4))
  [[ -n "${port}" ]] || port="$(free_port)"
  mkdir -p "$(dirname "${log}")"
  "${binary}" serve --listen "127.0.0.1:${port}" --data-dir "${data_dir}" "$@" >>"${log}" 2>&1 </dev/null &
  BROKER_PID=$!
  BROKER_PORT="${port}"
  BROKER_BOOTSTRAP="127.0.0.1:${port}"
  local deadline=$((SECONDS + ${COMPAT_START_TIMEOUT:-10}))
  while ((SECONDS < deadline)); do
    if ! broker_alive; then
      wait "${BROKER_PID}" 2>/dev/null
      echo "broker exited during startup (status $?)" >&2
      BROKER_PID=""
      return 1
    fi
    if port_open "${port}"; then
      return 0
    fi
    sleep 0.1
  done
  echo "broker not listening on 127.0.0.1:${port} after ${COMPAT_START_TIMEOUT:-10} s" >&2
  broker_kill
  return 1
}

broker_stop() {
  local limit="${1:-5}" i
  BROKER_EXIT_STATUS=""
  [[ -n "${BROKER_PID:-}" ]] || return 1
  kill -TERM "${BROKER_PID}" 2>/dev/null
  for ((i = 0; i < limit * 10; i++)); do
    broker_alive || break
    sleep 0.1
  done
  if broker_alive; then
    broker_kill
    BROKER_EXIT_STATUS="still running ${limit} s after SIGTERM (killed)"
    return 1
  fi
  wait "${BROKER_PID}" 2>/dev/null
  local status=$?
  BROKER_PID=""
  BROKER_EXIT_STATUS="${status}"
  [[ "${status}" -eq 0 ]]
}

broker_kill() {
  [[ -n "${BROKER_PID:-}" ]] || return 0
  kill -KILL "${BROKER_PID}" 2>/dev/null
  wait "${BROKER_PID}" 2>/dev/null
  BROKER_PID=""
}

topic_name() {
  printf '%s-%s\n' "$1" "$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
}

bounded() {
  local limit="$1"
  shift
  timeout --kill-after=2 "${limit}" "$@"
  local status=$?
  if [[ ${status} -eq 124 || ${status} -eq 137 ]]; then
    echo "timed out after ${limit} s: $*" >&2
    return 124
  fi
  return ${status}
}

mktopic() {
  bounded $((20 * ${COMPAT_TIMEOUT_SCALE:-1})) "${COMPAT_PYTHON}" "${COMPAT_DIR}/py/mktopic.py" "$@"
}
