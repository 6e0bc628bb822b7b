#!/usr/bin/env bash
# Aggregate decode throughput of `cohort serve` on a two-node pipeline (the head and one
# `cohort worker` on this host, one compute thread each) with 1, 2 and 4 concurrent greedy
# /v1/completions requests. Prints every run and the median of RUNS runs per concurrency.
#
# Usage: bench/pipeline_overlap.sh MODEL.gguf [COHORT_BINARY]
# Environment: TOKENS (max_tokens per request, 64), RUNS (3), TRANSPORT (tcp | shm),
#              CTX (context per slot, 512), LEVELS ("1 2 4"), SERVE_FLAGS (more flags for
#              `cohort serve`, e.g. "--link-delay-us 20000").
# A 1B-shape Q4_0 model to try it on:
#   cohort synth --dim 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 \
#     --type q4_0 -o /tmp/synth-1b-q4_0.gguf
set -euo pipefail

model=${1:?usage: $0 MODEL.gguf [COHORT_BINARY]}
bin=${2:-build/release/src/cli/cohort}
tokens=${TOKENS:-64}
runs=${RUNS:-3}
transport=${TRANSPORT:-tcp}
ctx=${CTX:-512}
levels=${LEVELS:-"1 2 4"}
serve_flags=${SERVE_FLAGS:-}

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$bin" key new >"$tmp/key"
wport=$(free_port)
"$bin" worker --listen "127.0.0.1:$wport" --key-file "$tmp/key" -t 1 --no-announce \
  2>"$tmp/worker.log" &
pids+=($!)
sleep 0.5
hport=$(free_port)
"$bin" serve -m "$model" --workers "127.0.0.1:$wport" --parallel pipeline --transport "$transport" \
  --key-file "$tmp/key" --threads 1 --slots 4 -c "$ctx" --port "$hport" $serve_flags 2>"$tmp/head.log" &
pids+=($!)
for _ in $(seq 600); do
  curl -sf "http://127.0.0.1:$hport/health" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$hport/health" >/dev/null || { cat "$tmp/head.log"; exit 1; }
grep -m1 "mode pipeline" "$tmp/head.log" || true

prompts=("Once upon a time" "The little dog" "Lily and Tom went" "One day, a big"
  "The sun was" "In the garden" "A cat sat" "Far away")

# One request; prints its completion_tokens.
request() {
  curl -sf "http://127.0.0.1:$hport/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"$1\",\"max_tokens\":$tokens,\"temperature\":0}" |
    sed -n 's/.*"completion_tokens":\([0-9]*\).*/\1/p'
}

request "warm up" >/dev/null

for c in $levels; do
  rates=()
  for r in $(seq "$runs"); do
    t0=$(date +%s.%N)
    clients=()
    for i in $(seq 0 $((c - 1))); do
      request "${prompts[$i]}" >"$tmp/out.$i" &
      clients+=($!)
    done
    wait "${clients[@]}"
    t1=$(date +%s.%N)
    total=0
    for i in $(seq 0 $((c - 1))); do total=$((total + $(cat "$tmp/out.$i"))); done
    rate=$(echo "$total / ($t1 - $t0)" | bc -l)
    printf 'concurrency %d run %d: %d tokens in %.2f s = %.2f tok/s\n' "$c" "$r" "$total" \
      "$(echo "$t1 - $t0" | bc -l)" "$rate"
    rates+=("$rate")
  done
  median=$(printf '%s\n' "${rates[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf 'concurrency %d: median %.2f tok/s aggregate\n' "$c" "$median"
done
