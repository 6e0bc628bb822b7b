#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job: `cohort demo`, a local cluster (a head
# and 2 workers on loopback) serving a model, one chat answer streamed, tok/s, the placement
# and the dashboard URL; it stays up until Ctrl-C (pass --once to exit after the answer).
# Uses the trained stories260K model from ../shared/data when it is there; otherwise the
# demo makes a small synthetic model (random weights: its text is noise, and it says so).
# Usage: scripts/run.sh [extra `cohort demo` flags, e.g. --once, -p "...", --port N]
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
cohort=build/release/src/cli/cohort

model=../shared/data/models/stories260K.gguf
if [[ -f $model ]]; then
  exec "$cohort" demo -m "$model" "$@"
fi
echo "run.sh: no model at $model: the demo makes a synthetic one (random weights, the text is noise)"
exec "$cohort" demo "$@"
