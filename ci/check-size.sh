#!/usr/bin/env bash
# Keeps the repository small enough to submit: no tracked file over 1 MiB and no more than 32 MiB tracked in all.
# Data a script can make again (build trees, data directories, fuzz histories, benchmark output) stays out of git.
set -euo pipefail
root="${1:-.}"
cd "${root}"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-size: ${root} is not a git checkout; nothing to check"
  exit 0
fi
max_file=$((1024 * 1024))
max_total=$((32 * 1024 * 1024))
total=0
status=0
while IFS= read -r -d '' path; do
  [[ -f "${path}" ]] || continue
  size=$(stat -c %s "${path}")
  total=$((total + size))
  if ((size > max_file)); then
    echo "check-size: ${path} is ${size} bytes, over ${max_file}: keep generated data out of git"
    status=1
  fi
done < <(git ls-files -z)
if ((total > max_total)); then
  echo "check-size: tracked files add up to ${total} bytes, over ${max_total}"
  status=1
fi
echo "check-size: $(git ls-files | wc -l) tracked files, ${total} bytes"
exit "${status}"
