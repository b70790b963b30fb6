#!/usr/bin/env bash
# Anchor for `replicated` produce: what writing new data into the page cache costs on this machine, measured with
# dd (1 MiB writes, no fdatasync) in the directory the benchmark writes to.
#
#   bench/page_cache_anchor.sh DIR [MIB] [GAP_SECONDS]
#
# Prints one line: fresh_mb_s= fresh_cpu_s_per_gb= reused_mb_s= reused_cpu_s_per_gb= mib= gap_s=
#   fresh:  MIB written after GAP_SECONDS of quiet, as a broker started after the previous run writes its log;
#   reused: the same again right after deleting that file, into the pages it just freed.
# On a VM guest that hands freed memory back to its host (free page reporting: a few seconds after a free),
# the first touch of each such page is paid in the page-cache copy itself, so `fresh` can be several times
# slower than `reused`; on bare metal the two agree.
set -euo pipefail

dir=${1:?usage: page_cache_anchor.sh DIR [MIB] [GAP_SECONDS]}
mib=${2:-2048}
gap=${3:-10}
mkdir -p "${dir}"
file="${dir}/page-cache-anchor.dat"
rm -f "${file}"
sync
sleep "${gap}"

# "seconds cpu_seconds" of one dd writing MIB MiB of zeros into a new file
timed_write() {
  local TIMEFORMAT='%R %U %S' t
  t=$({ time dd if=/dev/zero of="${file}" bs=1M count="${mib}" status=none; } 2>&1)
  awk -v t="${t}" 'BEGIN { split(t, f, " "); printf "%s %.3f\n", f[1], f[2] + f[3] }'
}

fresh=$(timed_write)
rm -f "${file}"
reused=$(timed_write)
rm -f "${file}"

awk -v mib="${mib}" -v gap="${gap}" -v fresh="${fresh}" -v reused="${reused}" 'BEGIN {
  split(fresh, f, " "); split(reused, r, " "); bytes = mib * 1048576
  printf "fresh_mb_s=%.0f fresh_cpu_s_per_gb=%.3f reused_mb_s=%.0f reused_cpu_s_per_gb=%.3f mib=%d gap_s=%d\n",
    bytes / 1e6 / f[1], f[2] / (bytes / 1e9), bytes / 1e6 / r[1], r[2] / (bytes / 1e9), mib, gap
}'
