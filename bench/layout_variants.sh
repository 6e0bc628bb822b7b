#!/bin/bash
# Builds kernels_bench four times, with 0, 16, 32 and 48 bytes of code padding before the kernel
# library (COHORT_BENCH_CODE_PAD), into OUT_DIR/kernels_bench.pad{0,16,32,48}, then sets the
# build back to no padding. A kernel's speed can hang on where its loops fall (docs/PERFORMANCE.md,
# stop 47: one AVX2 tile 40.7 against 46-47 GB/s by a 32-byte shift), so judge a change by its
# four builds against the old code's four (bench/interleave.py), not by one build of each. The
# AVX2 files' functions start on 64-byte lines (src/kernels/CMakeLists.txt), so the padding
# moves the AVX-512 and portable code only.
#   bench/layout_variants.sh /tmp/old            # on the old commit
#   bench/layout_variants.sh /tmp/new            # on the new one
#   bench/interleave.py 4 'gemm_packed/avx2/q4_0/256/2048/1$' /tmp/old/* /tmp/new/*
set -euo pipefail
out=${1:?usage: bench/layout_variants.sh OUT_DIR [BUILD_DIR (build/release)]}
build=${2:-build/release}
mkdir -p "$out"
for pad in 0 16 32 48; do
  cmake -S . -B "$build" -DCOHORT_BENCH_CODE_PAD="$pad" > /dev/null
  cmake --build "$build" -j "$(nproc)" --target kernels_bench > /dev/null
  cp "$build/bench/kernels_bench" "$out/kernels_bench.pad$pad"
  echo "$out/kernels_bench.pad$pad"
done
cmake -S . -B "$build" -DCOHORT_BENCH_CODE_PAD=0 > /dev/null
