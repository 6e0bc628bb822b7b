#!/usr/bin/env bash
# Installs every Debian package cohort needs to build and test. Idempotent and
# non-interactive: packages already present are skipped, so a second run is quick.
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
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "bootstrap: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
