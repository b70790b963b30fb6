#!/usr/bin/env bash
# The 3-node loopback cluster against a single node (acks=all produce throughput, p50/p99 latency, their ratios)
# and leader failover time (SIGKILL to the first acks=all produce acknowledged after it, median of a few runs).
# Prints, never asserts. Needs no build beyond the sluice binary: the producer is $BENCH_BIN/bench_produce when
# ../shared/bench/build.sh has built it, else confluent-kafka's Python producer (Debian's python3-confluent-kafka).
#
#   bench/cluster_bench.sh [SLUICE_BINARY] [--reps N] [--count N] [--size BYTES] [--rate N] [--failovers N]
#   e.g. bench/cluster_bench.sh build/release/sluice --reps 3 --failovers 5     (about 2-3 min on 2 vCPUs)
#
# Setups and output: bench/cluster_bench.py's header. Ports are free loopback ports; data under $SCRATCH or /tmp.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
binary="build/release/sluice"
if [[ $# -gt 0 && "$1" != -* ]]; then
  binary="$1"
  shift
fi
if [[ ! -x "${binary}" ]]; then
  echo "cluster_bench: ${binary} is not an executable (build it: cmake --build --preset release --target sluice)" >&2
  exit 2
fi
python="${COMPAT_PYTHON:-/usr/bin/python3}"
if ! "${python}" -c 'import confluent_kafka' 2>/dev/null; then
  echo "cluster_bench: ${python} lacks confluent-kafka (apt-get install python3-confluent-kafka)" >&2
  exit 2
fi
exec "${python}" "${root}/bench/cluster_bench.py" "$(readlink -f "${binary}")" "$@"
