#!/usr/bin/env bash
# usage: ci/fuzz.sh [SECONDS] [TARGET...]   (default 20 s each; `ci/fuzz.sh 600` for a longer run)
#
# Builds the libFuzzer targets with Debian's clang, AddressSanitizer and UBSan into build/fuzz/ and runs each named
# TARGET (default: all) for SECONDS:
#   request  fuzz/request_fuzzer.cc  every request decoder, with an encode round trip
#   frame    fuzz/frame_fuzzer.cc    a client's byte stream: FrameReader and read_frame against a model, the request
#                                    header and the dispatch step of a connection
#   batch    fuzz/batch_fuzzer.cc    record batches: the header, the record reader, decode_records, produce
#                                    validation, every codec (decompression bombs included), the codec rewrite
#   loader   fuzz/loader_fuzzer.cc   a partition directory in memory: LogLoader (the recovery scan, .index and
#                                    .timeindex, .swap, partition.state), leader-epoch-checkpoint,
#                                    cleaner-offset-checkpoint, then reads of what loaded; LogLoader::repair
# It compiles core/base, core/env, core/protocol and the loader's part of core/storage into one archive (each
# target links what it uses) and links fmt, spdlog, Boost.Context and the codecs; a generated build.ninja keeps the
# objects, so a run after no source change rebuilds nothing, and compiles go through ccache when it is installed
# (./x sets CCACHE_BASEDIR, so a fresh clone in another folder, as CI makes, reuses what earlier builds compiled; the
# first build costs about three CPU-minutes: ctest's first fuzz entry pays it). The request types are found in
# core/protocol/messages/*.h (every top-level `struct <Name>Request` or `using <Name>Request = ...`), so a new
# message is fuzzed with no change here.
#
# Inputs of TARGET: build/fuzz/seeds/TARGET/ (written by fuzz/seed_corpus.cc with our own encoders and writers,
# regenerated each run), fuzz/regressions/TARGET/ (committed inputs that once found a bug), fuzz/corpus/ for
# `request` (committed request frames from kafka-python) and build/fuzz/corpus/TARGET/ (what earlier runs found;
# kept). A crash, sanitizer report, timeout (-timeout) or oversized allocation (-malloc_limit_mb, -rss_limit_mb)
# fails the run (exit 1) and leaves the reproducer in build/fuzz/artifacts/; replay it with
# `build/fuzz/TARGET_fuzzer build/fuzz/artifacts/crash-...`.
#
# Needs clang++ and libclang_rt.fuzzer: Debian 12 packages clang and libclang-rt-14-dev. Set CXX_FUZZ to use
# another clang++, SLUICE_FUZZ_DIR for another build directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-20}"
shift || true
all_targets=(request frame batch loader)
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=("${all_targets[@]}")
fi
out="${SLUICE_FUZZ_DIR:-${root}/build/fuzz}"
cxx="${CXX_FUZZ:-clang++}"
launcher=""
if [[ -z "${CCACHE_DISABLE:-}" ]] && command -v ccache >/dev/null 2>&1; then
  launcher="ccache"
fi

if ! [[ "${seconds}" =~ ^[0-9]+$ ]] || [[ "${seconds}" -lt 1 ]]; then
  echo "usage: $0 [SECONDS] [TARGET...]   (a positive number of seconds, default 20; targets: ${all_targets[*]})" >&2
  exit 2
fi
for target in "${targets[@]}"; do
  if [[ " ${all_targets[*]} " != *" ${target} "* ]]; then
    echo "fuzz: unknown target ${target} (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done
if ! command -v "${cxx}" >/dev/null 2>&1; then
  echo "fuzz: ${cxx} not found; install Debian's clang and libclang-rt-14-dev (ci/install-deps.sh)" >&2
  exit 1
fi
if ! command -v ninja >/dev/null 2>&1; then
  echo "fuzz: ninja not found (ninja-build)" >&2
  exit 1
fi
if ! libs="$(pkg-config --libs spdlog fmt zlib snappy liblz4 libzstd libisal)" ||
  ! defines="$(pkg-config --cflags spdlog)"; then
  echo "fuzz: pkg-config does not find the libraries the core links (ci/install-deps.sh)" >&2
  exit 1
fi
mkdir -p "${out}/gen" "${out}/corpus" "${out}/seeds" "${out}/artifacts"

# Writes $2 into $1 only when it differs, so that ninja sees no change when there is none.
write_if_changed() {
  if [[ ! -f "$1" ]] || [[ "$(cat "$1")" != "$2" ]]; then
    printf '%s\n' "$2" >"$1"
  fi
}

# --- The request structs: the message headers and an X-macro list of their top-level *Request types. ---
# request_types HEADER: the names of `struct <Name>Request {` (not templates: their aliases count instead) and
# `using <Name>Request =` at the top level of HEADER.
request_types() {
  awk '/^template/ { template = 1; next }
       /^struct [A-Z][A-Za-z0-9]*Request \{/ && !template { print $2 }
       /^using [A-Z][A-Za-z0-9]*Request =/ { print $2 }
       { template = 0 }' "$1"
}
generate_requests() {
  local header name includes="" list=""
  for header in "${root}"/core/protocol/messages/*.h; do
    includes+="#include \"core/protocol/messages/$(basename "${header}")\""$'\n'
    while read -r name; do
      list+=" \\"$'\n'"  X(${name})"
    done < <(request_types "${header}")
  done
  write_if_changed "${out}/gen/fuzz_requests.h" "// Generated by ci/fuzz.sh from core/protocol/messages/*.h.
#pragma once

${includes}
#define SLUICE_FUZZ_REQUESTS(X)${list}"
}
generate_requests

# --- build.ninja: objects with depfiles, one archive of the core parts the targets use, one binary per target. ---
# The storage files the loader and batch targets reach (the rest of core/storage, the partition log, the log
# manager and the cleaner, would only triple the build); a link error naming a storage symbol means this list needs
# the file that defines it.
readonly storage_sources=(batch_header batch_validation cleaner_checkpoint compression leader_epoch_cache log_format
  log_loader offset_index record_codec record_reader segment segment_file_cache segment_read time_index)
generate_ninja() {
  local sources=() source
  for source in "${root}"/core/{base,env,protocol,protocol/messages}/*.cc; do
    [[ -e "${source}" ]] && sources+=("${source#"${root}/"}")
  done
  for source in "${storage_sources[@]}"; do
    sources+=("core/storage/${source}.cc")
  done
  local text objects="" build_lines="" target
  for source in "${sources[@]}"; do
    objects+=" obj/${source%.cc}.o"
    build_lines+="build obj/${source%.cc}.o: cc ${root}/${source}"$'\n'
  done
  for source in request_fuzzer frame_fuzzer batch_fuzzer loader_fuzzer seed_corpus storage_seeds; do
    build_lines+="build obj/fuzz/${source}.o: cc ${root}/fuzz/${source}.cc"$'\n'
  done
  for target in "${all_targets[@]}"; do
    build_lines+="build ${target}_fuzzer: link obj/fuzz/${target}_fuzzer.o libcore.a"$'\n'
    build_lines+="  extra = -fsanitize=fuzzer"$'\n'
  done
  text="# Generated by ci/fuzz.sh; rewritten when the sources change.
cxx = ${cxx}
launcher = ${launcher}
sanitize = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
warnings = -Wall -Wextra -Wno-unused-parameter
cflags = -std=c++20 -O1 -g \$warnings \$sanitize -fsanitize=fuzzer-no-link ${defines} -I${root} -I${out}/gen
libs = ${libs} -lboost_context
rule cc
  command = \$launcher \$cxx -MMD -MF \$out.d \$cflags -c \$in -o \$out
  depfile = \$out.d
  deps = gcc
  description = CXX \$in
rule archive
  command = rm -f \$out && ar qcs \$out \$in
  description = AR \$out
rule link
  command = \$cxx \$sanitize \$extra \$in -o \$out \$libs
  description = LINK \$out
${build_lines}build libcore.a: archive${objects}
build seed_corpus: link obj/fuzz/seed_corpus.o obj/fuzz/storage_seeds.o libcore.a
  extra = -fsanitize=fuzzer-no-link"
  write_if_changed "${out}/build.ninja" "${text}"
}
generate_ninja

echo "fuzz: building in ${out}"
binaries=(seed_corpus)
for target in "${targets[@]}"; do
  binaries+=("${target}_fuzzer")
done
if ! ninja -C "${out}" --quiet "${binaries[@]}"; then
  echo "fuzz: the build failed" >&2
  exit 1
fi

rm -rf "${out}/seeds"
mkdir -p "${out}/seeds"/{request,frame,batch,loader}
"${out}/seed_corpus" "${out}/seeds"

# The options of each target. -malloc_limit_mb: no single allocation may come near this for inputs of at most
# -max_len bytes: decoding must not size memory by a declared length. The storage targets allow what the codecs
# allow by design (kMaxDecompressedBytes, 64 MiB, the bound of one batch's records) and no more. -rss_limit_mb
# catches growth in many small steps.
options_of() {
  case "$1" in
    request | frame) echo "-max_len=65536 -malloc_limit_mb=64" ;;
    batch) echo "-max_len=65536 -malloc_limit_mb=66" ;;
    loader) echo "-max_len=131072 -malloc_limit_mb=66" ;;
  esac
}

failed=0
for target in "${targets[@]}"; do
  inputs=("${out}/corpus/${target}" "${out}/seeds/${target}")
  mkdir -p "${out}/corpus/${target}"
  [[ -d "${root}/fuzz/regressions/${target}" ]] && inputs+=("${root}/fuzz/regressions/${target}")
  [[ "${target}" == request ]] && inputs+=("${root}/fuzz/corpus")
  log="${out}/last-run-${target}.log"
  echo "fuzz: running ${target} for ${seconds} s"
  status=0
  # shellcheck disable=SC2046  # the options are words
  (cd "${out}" && "./${target}_fuzzer" -max_total_time="${seconds}" -timeout=10 $(options_of "${target}") \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="${out}/artifacts/" "${inputs[@]}") \
    >"${log}" 2>&1 || status=$?
  summary='^[a-z_]+_fuzzer:|^#[0-9]+.*(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)'
  grep -E "${summary}" "${log}" | head -n 40 || true
  if [[ ${status} -ne 0 ]]; then
    echo "fuzz: ${target} FAILED (exit ${status}); the end of ${log}:" >&2
    tail -n 60 "${log}" >&2
    ls -1 "${out}/artifacts" >&2 || true
    failed=1
  fi
done
if [[ ${failed} -ne 0 ]]; then
  exit 1
fi
echo "fuzz: no findings in ${seconds} s each (${targets[*]})"
