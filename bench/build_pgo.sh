#!/usr/bin/env bash
# usage: bench/build_pgo.sh [BUILD_DIR]
#
# Builds BUILD_DIR/sluice (default build/pgo): the release build's code and flags (-O2, assertions on), optimized
# with GCC's profile-guided optimization. It builds an instrumented binary, trains it on the speed benchmark
# (bench/sim_1k_produce.toml, seeds 101 and 102: not the seeds bench/sim_speed.sh measures) and on every scenario
# in scenarios/ for up to 120 s, then builds again with the profile. The binary behaves exactly as the release one
# (same trace hashes; the profile only steers inlining, block layout and branch order): use it for long fuzz runs
# and `bench/sim_speed.sh build/pgo/sluice`. Takes two builds without ccache (about 12 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
dir="${1:-build/pgo}"
mkdir -p "${dir}"
profile="$(readlink -f "${dir}")/profile"
rm -rf "${profile}"
flags="-O2 -g0"

# One build directory for both steps: the profile's files are named after the objects' paths.
configure() {
  cmake -S . -B "${dir}" -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_TESTS=OFF \
    -DCCACHE_PROGRAM= "-DCMAKE_CXX_FLAGS_RELEASE=${flags} $1" "-DCMAKE_EXE_LINKER_FLAGS=$2" >/dev/null
}

build() {
  if ! cmake --build "${dir}" --target sluice >"${dir}/build.log" 2>&1; then
    tail -n 40 "${dir}/build.log"
    exit 1
  fi
}

echo "pgo: building the instrumented binary"
configure "-fprofile-generate -fprofile-update=single -fprofile-dir=${profile}" "-fprofile-generate"
build

echo "pgo: training"
for seed in 101 102; do
  "${dir}/sluice" sim --scenario bench/sim_1k_produce.toml --seed "${seed}" --quiet | grep '^simulated:'
done
args=()
for f in scenarios/*.toml; do args+=(--scenario "${f}"); done
"${dir}/sluice" fuzz "${args[@]}" --seeds 66 --time-budget 120 --trace-dir "$(mktemp -d)" 2>/dev/null | grep '^fuzz:'

echo "pgo: building with the profile"
# -fprofile-partial-training keeps what the training never ran optimized as usual, not for size.
configure "-fprofile-use -fprofile-dir=${profile} -fprofile-partial-training -Wno-missing-profile" ""
build
echo "pgo: ${dir}/sluice"
