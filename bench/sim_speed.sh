#!/usr/bin/env bash
# usage: bench/sim_speed.sh [SLUICE] [SEEDS]
#
# The simulator's speed, printed as ratios (never asserted): simulated seconds per wall second and events per wall
# second of bench/sim_1k_produce.toml (one broker at 1,000 produce requests per simulated second, a consumer and a
# group) over SEEDS seeds (default 5), against the 100x target; then the default fuzz's seeds per minute (every
# scenario in scenarios/, round robin, 60 s). SLUICE defaults to build/release/sluice.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
sluice="${1:-build/release/sluice}"
seeds="${2:-5}"
total_sim=0
total_wall=0
total_events=0
for seed in $(seq 1 "${seeds}"); do
  line="$("${sluice}" sim --scenario bench/sim_1k_produce.toml --seed "${seed}" --quiet | grep '^simulated:')"
  sim="$(sed -E 's/^simulated: ([0-9.]+) s in ([0-9.]+) s.*/\1/' <<<"${line}")"
  wall="$(sed -E 's/^simulated: ([0-9.]+) s in ([0-9.]+) s.*/\2/' <<<"${line}")"
  events="$(sed -E 's/.*; ([0-9]+) events.*/\1/' <<<"${line}")"
  echo "seed ${seed}: ${line#simulated: }"
  total_sim="$(python3 -c "print(${total_sim} + ${sim})")"
  total_wall="$(python3 -c "print(${total_wall} + ${wall})")"
  total_events="$(python3 -c "print(${total_events} + ${events})")"
done
python3 - "${total_sim}" "${total_wall}" "${total_events}" <<'PY'
import sys
sim, wall, events = map(float, sys.argv[1:])
speed = sim / wall
print(f"1k produce/s, consumer, group: {speed:.0f} simulated s per wall s ({speed / 100:.1f}x the 100x target), "
      f"{events / wall:,.0f} events per wall s")
PY
args=()
for f in scenarios/*.toml; do args+=(--scenario "${f}"); done
"${sluice}" fuzz "${args[@]}" --seeds 1000000 --time-budget 60 --trace-dir "$(mktemp -d)" 2>/dev/null | grep '^fuzz:'
