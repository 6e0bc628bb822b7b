#!/usr/bin/env python3
"""Runs several kernels_bench binaries in turn, ROUNDS times over, on one pinned core, and
prints for each benchmark and binary the median (and range) over the rounds of each run's
median rate. Binaries in one folder (bench/layout_variants.sh's four builds of one commit)
also get one line for the folder: the median over all its builds and rounds. Taking turns
spreads a shared machine's slow minutes over every binary alike; several builds of each
commit spread the luck of where its loops fall (docs/PERFORMANCE.md, stop 47).

Usage: bench/interleave.py ROUNDS FILTER BINARY...
  bench/interleave.py 4 'gemm_packed/avx2/(q4_0|q4_K)/256/2048/1$' /tmp/old/* /tmp/new/*
Environment: CORE (the core to pin to, 1), MIN_TIME (seconds a repetition, 0.1), REPS (3).
The rate is the benchmark's bytes_per_second in GB/s, or its GFLOP/s counter where it has none.
"""
import collections
import json
import os
import statistics
import subprocess
import sys


def run(binary, filt):
    """{benchmark name: median rate} of one run of binary."""
    cmd = ["taskset", "-c", os.environ.get("CORE", "1"), binary, "--benchmark_filter=" + filt,
           "--benchmark_min_time=" + os.environ.get("MIN_TIME", "0.1"),
           "--benchmark_repetitions=" + os.environ.get("REPS", "3"),
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        if "bytes_per_second" in b:
            rates[b["run_name"]] = b["bytes_per_second"] / 1e9
        elif "GFLOP/s" in b:
            rates[b["run_name"]] = b["GFLOP/s"] / 1e9
    return rates


def line(label, values):
    return "  %-40s %7.2f  [%.2f - %.2f]  (%d)" % (label, statistics.median(values), min(values),
                                                  max(values), len(values))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, filt, binaries = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    by_binary = collections.defaultdict(list)  # (benchmark, binary) -> rates
    for _ in range(rounds):
        for binary in binaries:
            for name, rate in run(binary, filt).items():
                by_binary[(name, binary)].append(rate)
    for name in sorted({n for n, _ in by_binary}):
        print(name)
        folders = collections.defaultdict(list)
        for binary in binaries:
            values = by_binary.get((name, binary))
            if values:
                print(line(binary, values))
                folders[os.path.dirname(binary) or "."].extend(values)
        if len(folders) < len(binaries):
            for folder, values in folders.items():
                print(line(folder + "/ (all)", values))


if __name__ == "__main__":
    main()
