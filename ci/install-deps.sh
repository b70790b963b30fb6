#!/usr/bin/env bash
# Installs the Debian packages Sluice needs to build and test, and only those that are missing.
# Idempotent: when everything is present it touches nothing (no apt-get update) and says so.
# usage: ci/install-deps.sh [PACKAGE...]   (with names: those packages instead of Sluice's own list)
set -euo pipefail

readonly DEFAULT_PACKAGES=(
  build-essential g++ cmake ninja-build ccache lld pkg-config git python3
  libboost-context-dev libspdlog-dev libfmt-dev libcli11-dev librapidcheck-dev
  libgtest-dev libgmock-dev googletest libtomlplusplus-dev
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev libisal-dev
  libmimalloc-dev  # the sluice binary's allocator
  libxxhash-dev  # the simulator's value digests (sim/history)
  clang libclang-rt-14-dev  # ci/fuzz.sh: clang++ with libFuzzer (the fuzz.request_decoders test)
  # python/: the module and its notebooks, for /usr/bin/python3 (PyPI is not reachable)
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest
  python3-nbclient python3-nbformat python3-ipykernel python3-matplotlib
)
if [[ $# -gt 0 ]]; then
  readonly PACKAGES=("$@")
else
  readonly PACKAGES=("${DEFAULT_PACKAGES[@]}")
fi

is_installed() {
  local status
  status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
  [[ "${status}" == "install ok installed" ]]
}

missing=()
for package in "${PACKAGES[@]}"; do
  if ! is_installed "${package}"; then
    missing+=("${package}")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all dependencies present"
  exit 0
fi

as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo --non-interactive)
  else
    echo "install-deps: missing ${missing[*]}, and not root with no sudo to install them" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
echo "install-deps: installed ${missing[*]}"
