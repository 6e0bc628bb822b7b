#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SEED_DIR WORK_DIR SECONDS [EXTRA_SEED_DIR...]
# Replays the seeds (the regression corpus), then fuzzes for SECONDS with new inputs kept in
# WORK_DIR/corpus. Exits non-zero on any finding; the input is left in WORK_DIR.
set -euo pipefail
fuzzer=$(realpath "$1") seeds=$(realpath "$2") work=$3 seconds=$4
shift 4
extra=()
for d in "$@"; do [[ -d $d ]] && extra+=("$(realpath "$d")"); done
mkdir -p "$work/corpus"
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$work/" corpus "$seeds" "${extra[@]}"
