#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job: generate text from a model on this
# machine. Uses the trained stories260K model from ../shared/data when it is there;
# otherwise makes a small synthetic model (random weights: its text is noise, shown to
# prove the pipeline end to end).
# Usage: scripts/run.sh [extra `cohort run` flags]
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
cohort=build/release/src/cli/cohort

model=../shared/data/models/stories260K.gguf
if [[ ! -f $model ]]; then
  model=build/release/models/synthetic-llama-q4_0.gguf
  if [[ ! -f $model ]]; then
    mkdir -p "$(dirname "$model")"
    echo "run.sh: no model at hand: making a synthetic one (random weights, the text is noise)"
    "$cohort" synth --arch llama --dim 512 --layers 4 --heads 8 --kv-heads 4 --ffn 1536 \
      --vocab 4096 --type q4_0 -o "$model"
  fi
fi
"$cohort" run -m "$model" -p "Once upon a time" -n 128 "$@"
