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
# Around the run it measures the page-cache anchor (page_cache_anchor.sh: writing new data into the page cache, in
# the harness's scratch dir) and prints, for each B1 cell, the broker's MB/s and CPU-s per GB against it: the mock
# writes nothing, so on a machine where that write is slow no file-writing broker can reach the mock's figures.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
harness="${SLUICE_SHARED_BENCH:-${root}/../shared/bench}"
export BENCH_BIN="${BENCH_BIN:-/tmp/sluice-bench-bin}"

if [[ ! -x "${harness}/compare.sh" ]]; then
  echo "kafka_compare: no harness at ${harness} (set SLUICE_SHARED_BENCH to the shared/bench directory)" >&2
  exit 2
fi

persisted=0
quick=0
out=''
args=()
previous=''
for arg in "$@"; do
  if [[ "${arg}" == "--persisted" ]]; then persisted=1; else args+=("${arg}"); fi
  [[ "${arg}" == "--quick" ]] && quick=1
  [[ "${previous}" == "--out" ]] && out="${arg}"
  previous="${arg}"
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
scratch="${SCRATCH:-/tmp/sluice-bench-scratch}"
anchor_mib=2048  # the volume of a B1 1 KiB run (2,000,000 records)
[[ ${quick} -eq 1 ]] && anchor_mib=256
if [[ -z "${out}" ]]; then
  out="$(mktemp /tmp/kafka-compare.XXXXXX.jsonl)"
  args+=(--out "${out}")
fi
echo "kafka_compare: page-cache anchor before the run (${anchor_mib} MiB)..."
anchor_before=$("${root}/bench/page_cache_anchor.sh" "${scratch}" "${anchor_mib}")
status=0
"${harness}/compare.sh" --broker-start "${broker}" "${args[@]}" || status=$?
echo "kafka_compare: page-cache anchor after the run..."
anchor_after=$("${root}/bench/page_cache_anchor.sh" "${scratch}" "${anchor_mib}")
/usr/bin/python3 "${root}/bench/page_cache_report.py" "${out}" "${anchor_before}" "${anchor_after}" || status=$?
exit "${status}"
