#!/usr/bin/env bash
# usage: ci/check-seam.sh ROOT
#
# The OS seam check (DESIGN.md §1, §2; style.md §3.1). Everything under ROOT/core runs in both worlds, the real
# one (net/) and the deterministic simulator (sim/), so it may reach time, disk, network, threads and randomness
# only through the Env it is handed. This fails (exit 1), naming file:line and the rule, when a file under
# ROOT/core includes an OS, thread or clock header, calls the OS or the std clocks directly, leaks the
# simulator or the real world into the core, or includes a module from a layer above its own (LAYERS). Text in
# // and /* */ comments never counts; text in string literals counts only on #include lines.
#
# Heuristics, by design: calls are matched as text, not parsed. A free-function name such as sleep( or rand(
# counts unless it is a member access (x.sleep(, p->sleep() or a qualified member (Scheduler::sleep(); the
# core's own names (sleep_for, sleep_until, Logger::write, fs.open) never match. A member function declared
# with a banned name (void sleep(...)) would count: name it otherwise.
set -euo pipefail

# --- Banned headers: "name regex|why". The regex (extended) must match the whole name between <> or "". ---
readonly THREADS="the core runs on fibers of one thread: use core/env/scheduler.h and sync.h"
readonly DISK="the disk is reached only through core/env/file_system.h"
readonly OS="an OS header: use core/env/network.h, file_system.h or clock.h"
readonly TIME_RANDOM="time and randomness come from core/env/clock.h and core/env/random.h"
readonly WORLDS="the core depends on neither world: net/ and sim/ depend on core/, never the reverse"
readonly THIRD_PARTY="a third-party header that belongs outside core/, or in one allowed file (see ALLOWED)"
readonly BANNED_HEADERS=(
  "thread|future|mutex|shared_mutex|condition_variable|stop_token|${THREADS}"
  "semaphore|latch|barrier|pthread\\.h|threads\\.h|sched\\.h|${THREADS}"
  "fstream|filesystem|cstdio|stdio\\.h|fcntl\\.h|dirent\\.h|${DISK}"
  "unistd\\.h|poll\\.h|netdb\\.h|signal\\.h|csignal|(sys|netinet|arpa|linux|asm)/.*|${OS}"
  "ctime|time\\.h|random|${TIME_RANDOM}"
  "(sim|net)/.*|${WORLDS}"
  "boost/.*|spdlog/.*|sanitizer/.*|toml\\+\\+/.*|${THIRD_PARTY}"
)

# --- Allowed exceptions to the header bans: "path regex|header regex|reason". The path is relative to ROOT. ---
readonly ALLOWED=(
  ".*|boost/context/.*|Boost.Context is how the core's scheduler switches fibers (DESIGN.md §2)"
  "core/env/scheduler\\.cc|sanitizer/common_interface_defs\\.h|ASan must be told of each fiber switch (DESIGN.md §7)"
  "core/env/scheduler\\.cc|sanitizer/asan_interface\\.h|a reused fiber stack is unpoisoned for ASan (DESIGN.md §7)"
  "core/base/log\\.cc|spdlog/.*|log.cc is the only translation unit that includes spdlog (style.md §3.9)"
  "core/protocol/small_array\\.h|boost/container/small_vector\\.hpp|one container, no OS (message arrays)"
  "core/base/assert\\.cc|cstdio|a failed assertion prints with fprintf to stderr, with no Logger at hand"
)

# --- Module layers: "path regex|header regex|why". A file whose path matches may not include a matching header. ---
readonly LAYERS=(
  "core/storage/.*|core/(cluster|kafka)/.*|storage lies below the partition layer and the Kafka handlers"
  "core/cluster/.*|core/kafka/.*|core/kafka depends on core/cluster, never the reverse (core/cluster/README.md)"
  "core/cluster/metadata/.*|core/(broker|client|group|raft|storage)/.*|\
the metadata state machine is pure: records in, an image out (core/cluster/metadata/README.md)"
  "core/cluster/metadata/.*|core/cluster/[^/]*|the partition layer reads the cluster metadata, never the reverse"
  "core/cluster/metadata/.*|core/env/[^r][^/]*|applying records does no I/O: of the Env, only random.h (placement)"
  "core/cluster/metadata/.*|core/protocol/([^ew][^/]*|messages/.*)|of core/protocol, only error_codes.h and wire.h (Uuid)"
)

# --- Banned calls and names: "rule|extended regex|why". Matched on code with comments and strings removed. ---
# FREE: where a free function's name starts: at the start of the line, after a character that is not part of a
# name, a member access or a qualifier, or after a global :: or std::.
readonly FREE="(^|[^A-Za-z0-9_.>:]|(^|[^A-Za-z0-9_>])::|std[ ]*::[ ]*)"
readonly W_BEFORE="(^|[^A-Za-z0-9_])"
readonly W_AFTER="([^A-Za-z0-9_]|$)"
readonly CALL="[ ]*\\("
readonly STD_CLOCKS="system_clock|steady_clock|high_resolution_clock|file_clock|utc_clock|tai_clock|gps_clock"
readonly POSIX_IO="open|openat|close|read|write|pread|pwrite|lseek|fsync|fdatasync|ftruncate|unlink|rename|mkdir"
readonly POSIX_NET="socket|bind|listen|accept|accept4|connect|send|recv|sendto|recvfrom|poll|select"
readonly CLOCK_WHY="read time through Clock::now / wall_now of the Env"
readonly BANNED_CALLS=(
  "std clock read|(${STD_CLOCKS})[ ]*::[ ]*now${W_AFTER}|${CLOCK_WHY}"
  "C time read|${FREE}time[ ]*\\([ ]*(nullptr|NULL|0)[ ]*\\)|${CLOCK_WHY}"
  "C time read|${FREE}(gettimeofday|clock_gettime|timespec_get)${W_AFTER}|${CLOCK_WHY}"
  "sleep|${FREE}(sleep|usleep|nanosleep)${CALL}|sleep through Scheduler::sleep_for / sleep_until"
  "OS randomness|${FREE}(rand|srand|rand_r|drand48|arc4random|getrandom)${CALL}|${W_BEFORE}random_device${W_AFTER}|\
draw from core/env/random.h (one seeded Random per node)"
  "thread|std[ ]*::[ ]*j?thread${W_AFTER}|${W_BEFORE}this_thread${W_AFTER}|run concurrent work as fibers (spawn)"
  "environment|${FREE}(getenv|secure_getenv|setenv|putenv|unsetenv|system)${CALL}|\
configuration is handed in, never read from the process"
  "C file I/O|${FREE}(fopen|freopen|tmpfile)${CALL}|use FileSystem / File of the Env"
  "POSIX call|(^|[^A-Za-z0-9_>])::[ ]*(${POSIX_IO}|${POSIX_NET})${CALL}|use FileSystem / Network of the Env"
  "socket|${FREE}socket${CALL}|${W_BEFORE}epoll_[A-Za-z0-9_]*|use Network / Listener / Stream of the Env"
  "simulator leak|${W_BEFORE}(is_simulated|isSimulated)${W_AFTER}|the core never asks which world it runs in"
)

root="${1:-}"
if [[ -z "${root}" || ! -d "${root}/core" ]]; then
  echo "usage: $0 ROOT   (ROOT/core must exist)" >&2
  exit 2
fi
cd "${root}"

mapfile -d '' files < <(find core -type f \( -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.cc' \
  -o -name '*.cpp' -o -name '*.cxx' -o -name '*.ipp' -o -name '*.inl' \) -print0 | sort -z)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "seam ok: 0 files checked"
  exit 0
fi

join_lines() { local IFS=$'\n'; printf '%s' "$*"; }

# awk -v would interpret backslashes, so the tables travel through the environment.
SEAM_HEADERS="$(join_lines "${BANNED_HEADERS[@]}")" \
SEAM_ALLOWED="$(join_lines "${ALLOWED[@]}")" \
SEAM_LAYERS="$(join_lines "${LAYERS[@]}")" \
SEAM_CALLS="$(join_lines "${BANNED_CALLS[@]}")" \
awk '
BEGIN {
  n_headers = split(ENVIRON["SEAM_HEADERS"], lines, "\n")
  for (i = 1; i <= n_headers; i++) {
    split_last(lines[i], parts)
    header_regex[i] = parts[1]
    header_why[i] = parts[2]
  }
  n_allowed = split(ENVIRON["SEAM_ALLOWED"], lines, "\n")
  for (i = 1; i <= n_allowed; i++) {
    split_three(lines[i], parts)
    allowed_path[i] = parts[1]
    allowed_header[i] = parts[2]
  }
  n_layers = split(ENVIRON["SEAM_LAYERS"], lines, "\n")
  for (i = 1; i <= n_layers; i++) {
    split_three(lines[i], parts)
    layer_path[i] = parts[1]
    layer_header[i] = parts[2]
    layer_why[i] = parts[3]
  }
  n_calls = split(ENVIRON["SEAM_CALLS"], lines, "\n")
  for (i = 1; i <= n_calls; i++) {
    split_three(lines[i], parts)
    call_rule[i] = parts[1]
    call_regex[i] = parts[2]
    call_why[i] = parts[3]
  }
  violations = 0
  files = 0
}

# Table entries end in "|why"; the regex before it may itself contain "|".
function split_last(line, parts,    last) {
  last = length(line)
  while (last > 0 && substr(line, last, 1) != "|") last--
  parts[1] = substr(line, 1, last - 1)
  parts[2] = substr(line, last + 1)
}

# "first|regex|why" (the ALLOWED, LAYERS and BANNED_CALLS tables): the first field holds no "|".
function split_three(line, parts,    first, rest) {
  first = index(line, "|")
  parts[1] = substr(line, 1, first - 1)
  split_last(substr(line, first + 1), rest)
  parts[2] = rest[1]
  parts[3] = rest[2]
}

FNR == 1 { files++; in_block = 0; in_raw = 0; raw_end = "" }

# Returns the code of one line with comments removed; string and character literals keep their quotes but lose
# their contents unless keep_strings. Block comments and raw strings carry over to the next line.
function strip(s, keep_strings,    out, i, n, c, two, j, delim, q) {
  out = ""
  n = length(s)
  i = 1
  while (i <= n) {
    if (in_block) {
      j = index(substr(s, i), "*/")
      if (j == 0) return out
      i += j + 1
      in_block = 0
      out = out " "
      continue
    }
    if (in_raw) {
      j = index(substr(s, i), raw_end)
      if (j == 0) return out
      i += j + length(raw_end) - 1
      in_raw = 0
      out = out "\"\""
      continue
    }
    c = substr(s, i, 1)
    two = substr(s, i, 2)
    if (two == "//") return out
    if (two == "/*") { in_block = 1; i += 2; continue }
    if (c == "\"" && i > 1 && substr(s, i - 1, 1) == "R") {
      delim = substr(s, i + 1)
      j = index(delim, "(")
      if (j == 0) { out = out c; i++; continue }
      raw_end = ")" substr(delim, 1, j - 1) "\""
      in_raw = 1
      i += j + 1
      continue
    }
    if (c == "\"" || (c == "\047" && !(i > 1 && substr(s, i - 1, 1) ~ /[A-Za-z0-9_]/))) {
      q = c
      j = i + 1
      while (j <= n && substr(s, j, 1) != q) {
        if (substr(s, j, 1) == "\\") j++
        j++
      }
      out = out (keep_strings ? substr(s, i, j - i + 1) : q q)
      i = j + 1
      continue
    }
    out = out c
    i++
  }
  return out
}

function report(rule, why,    text) {
  violations++
  text = $0
  sub(/^[ \t]+/, "", text)
  printf "%s:%d: %s: %s\n    %s\n", FILENAME, FNR, rule, why, text
}

function check_include(code,    name, header, i, a) {
  name = code
  sub(/^[ \t]*#[ \t]*include[ \t]*/, "", name)
  if (name !~ /^[<"]/) return
  header = substr(name, 2)
  sub(/[>"].*$/, "", header)
  for (i = 1; i <= n_headers; i++) {
    if (header !~ ("^(" header_regex[i] ")$")) continue
    for (a = 1; a <= n_allowed; a++) {
      if (FILENAME ~ ("^(" allowed_path[a] ")$") && header ~ ("^(" allowed_header[a] ")$")) return
    }
    report("banned include " substr(name, 1, length(header) + 2), header_why[i])
    return
  }
  for (i = 1; i <= n_layers; i++) {
    if (FILENAME ~ ("^(" layer_path[i] ")$") && header ~ ("^(" layer_header[i] ")$")) {
      report("layering " substr(name, 1, length(header) + 2), layer_why[i])
      return
    }
  }
}

{
  is_include = !in_block && !in_raw && $0 ~ /^[ \t]*#[ \t]*include/
  code = strip($0, is_include)
  if (is_include) { check_include(code); next }
  for (i = 1; i <= n_calls; i++) {
    if (code ~ call_regex[i]) report(call_rule[i], call_why[i])
  }
}

END {
  if (violations > 0) {
    printf "seam check failed: %d violation(s) in %d files checked (rules and exceptions: ci/check-seam.sh)\n",
      violations, files
    exit 1
  }
  printf "seam ok: %d files checked\n", files
}
' "${files[@]}"
