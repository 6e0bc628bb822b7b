#!/usr/bin/env bash
# Sets everything up, builds, and runs every test: first the optimised build (warnings are
# errors), then the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the threaded tests (core, net, comm, runtime: label tsan) under ThreadSanitizer (only
# those four test binaries are built there). Then the libFuzzer targets (clang): their
# regression corpora and a short fuzzing run each. The 5-minute soak (label soak) is not run
# here: `ctest --preset soak` after the release build.
# Usage: scripts/test.sh [--quick]   (--quick skips the sanitizer and fuzzing passes)
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/bootstrap.sh

jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release

if [[ ${1:-} != --quick ]]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j "$jobs"
  ctest --preset tsan
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  ctest --preset fuzz
fi
echo "test.sh: all tests passed"
