#!/usr/bin/env bash
# Installs every Debian package cohort needs to build and test (chromium: the dashboard's
# browser test), then the npm packages tests/js runs (`npm ci`: the API clients and
# playwright-core; Node from Debian's nodejs/npm unless a node is already on PATH). Idempotent and non-interactive: what is already present is
# skipped, so a second run is quick.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git
  clang clang-format libclang-rt-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libpcre2-dev libsodium-dev libxxhash-dev libcurl4-openssl-dev
  libboost1.81-dev
  libopenmpi-dev openmpi-bin
  python3 python3-jinja2
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node (>= 20) and npm for tests/js; a node installed another way (nodesource, nvm) is kept.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  for p in nodejs npm; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
fi

if ((${#missing[@]} == 0)); then
  echo "bootstrap: all ${#packages[@]} packages already installed"
else
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The npm clients, exactly as package-lock.json pins them; skipped when already installed
# from the current lock file.
js_dir="$(dirname "$0")/../tests/js"
if [[ ! -f $js_dir/node_modules/.package-lock.json ||
      $js_dir/package-lock.json -nt $js_dir/node_modules/.package-lock.json ]]; then
  echo "bootstrap: npm ci in tests/js"
  (cd "$js_dir" && npm ci --no-audit --no-fund)
else
  echo "bootstrap: tests/js node_modules up to date"
fi
