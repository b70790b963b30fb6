#!/usr/bin/env bash
# Installs what tests/compat (the real-client compatibility harness) needs, and only what is
# missing: Debian's kcat, kafka-python, confluent-kafka and the codec modules kafka-python uses,
# Node.js with npm, then the Node clients pinned in tests/compat/node/package-lock.json.
# Idempotent and quick when everything is present: no apt-get update, no npm call.
# Needs only the Debian archive and the npm registry. Run as root (or with passwordless sudo).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly REPO_ROOT NODE_DIR="${REPO_ROOT}/tests/compat/node"

# Debian packages. The python3-* ones are imported by /usr/bin/python3 (Debian's interpreter).
readonly PACKAGES=(
  kcat
  python3-kafka python3-confluent-kafka
  python3-snappy python3-lz4 python3-zstandard
  nodejs npm
)

is_installed() {
  local status
  status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
  [[ "${status}" == "install ok installed" ]]
}

# nodejs and npm count as present when their commands work: a NodeSource nodejs (as on the
# project's machines) bundles npm and conflicts with Debian's npm package, which must then not
# be installed over it.
is_present() {
  case "$1" in
    nodejs) is_installed nodejs || command -v node >/dev/null 2>&1 ;;
    npm) is_installed npm || command -v npm >/dev/null 2>&1 ;;
    *) is_installed "$1" ;;
  esac
}

missing=()
for package in "${PACKAGES[@]}"; do
  if ! is_present "${package}"; then
    missing+=("${package}")
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  as_root=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      as_root=(sudo --non-interactive)
    else
      echo "install-compat-deps: missing ${missing[*]}, and not root with no sudo to install them" >&2
      exit 1
    fi
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
  echo "install-compat-deps: installed ${missing[*]}"
else
  echo "install-compat-deps: Debian packages present"
fi

# Node clients: reinstall only when node_modules does not match the lock file. npm writes
# node_modules/.package-lock.json on every install; comparing the lock's hash to the one saved
# after the last successful install avoids an npm call (and a registry round trip) when nothing
# changed.
lock_hash="$(sha256sum "${NODE_DIR}/package-lock.json" | cut -d' ' -f1)"
stamp="${NODE_DIR}/node_modules/.sluice-lock-sha256"
if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${lock_hash}" \
      && -f "${NODE_DIR}/node_modules/kafkajs/package.json" \
      && -f "${NODE_DIR}/node_modules/@platformatic/kafka/package.json" ]]; then
  echo "install-compat-deps: node clients present"
  exit 0
fi
# engine-strict stays off: two helper packages of @platformatic/kafka 1.x declare Node >= 22.19
# but load and run on Node 20, which is what the harness exercises.
(cd "${NODE_DIR}" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
echo "${lock_hash}" >"${stamp}"
versions="$(cd "${NODE_DIR}" && node -p "['kafkajs', '@platformatic/kafka'].map((p) => p + ' ' + \
  JSON.parse(require('fs').readFileSync('node_modules/' + p + '/package.json')).version).join(', ')")"
echo "install-compat-deps: installed node clients (${versions})"
