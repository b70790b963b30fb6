#!/usr/bin/env bash
# The broker-level benchmark of issue 4: sluice against librdkafka's in-memory mock cluster, interleaved in one run,
# through ../shared/bench/compare.sh (one librdkafka producer and consumer, one partition; see its README).
#
#   bench/kafka_compare.sh [--persisted] [compare.sh options...]
#     --persisted   the topic is created with durability=persisted (fsync before ack) instead of auto-created
#                   with the default `replicated`
#   e.g. bench/kafka_compare.sh --reps 3 --out /tmp/cmp.jsonl
#        bench/kafka_compare.sh --persisted --quick
#
# It installs the harness's Debian packages if missing, builds the harness (into $BENCH_BIN) and the release preset,
# and prints compare.sh's tables and SUMMARY lines (ratios broker/mock). Nothing here is asserted.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
harness="${SLUICE_SHARED_BENCH:-${root}/../shared/bench}"
export BENCH_BIN="${BENCH_BIN:-/tmp/sluice-bench-bin}"

if [[ ! -x "${harness}/compare.sh" ]]; then
  echo "kafka_compare: no harness at ${harness} (set SLUICE_SHARED_BENCH to the shared/bench directory)" >&2
  exit 2
fi

persisted=0
args=()
for arg in "$@"; do
  if [[ "${arg}" == "--persisted" ]]; then persisted=1; else args+=("${arg}"); fi
done

missing=()
for package in librdkafka-dev kcat bc; do
  dpkg-query -W -f='${Status}' "${package}" 2>/dev/null | grep -q "install ok installed" || missing+=("${package}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  apt-get install -y "${missing[@]}"
fi
for program in bench_produce bench_consume mock_cluster create_topic fsync_append tcp_pingpong; do
  if [[ ! -x "${BENCH_BIN}/${program}" ]]; then
    (cd "${harness}" && ./build.sh)
    break
  fi
done

cd "${root}"
cmake --preset release >/dev/null
cmake --build --preset release --target sluice

broker="exec ${root}/build/release/sluice serve --data-dir {data_dir} --listen {bootstrap} --log-level warn"
if [[ ${persisted} -eq 1 ]]; then
  args+=(--create-topic '{bench_bin}/create_topic {bootstrap} {topic} 1 1 durability=persisted')
fi
exec "${harness}/compare.sh" --broker-start "${broker}" "${args[@]}"
