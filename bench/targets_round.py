#!/usr/bin/env python3
"""Runs one round of issue 6's targets (docs/PERFORMANCE.md, "The targets now") and appends
what `cohort bench --json` printed for each, one JSON line a test, to OUT. Each line gains
the round's start (UTC), the target's name, the figure it is judged by and the goal:

  decode (tg): bw_frac_paired, the tokens' speed over a plain read of the same bytes made
               just after each token (`--paired`; the machine's memory moves from minute to
               minute on the hosts of stops 32-48, so a probe made before the run is no bound)
  prompt (pp): fma_frac, over the FMA probe of the same threads (its best ~20 ms run, before
               the tests or after them); the lines also carry fma_frac_paired, over an FMA
               run as long as each repetition made just after it (`--paired`), printed beside

The round's roofline (`cohort bench --roofline --json`) comes first, as a line of its own.
Models are made with `cohort synth` (1B and 8B shapes of the issue) where MODELS lacks them.
A line per test also goes to stderr as it finishes.

Usage: bench/targets_round.py OUT.jsonl [BENCH_FLAG...]
  bench/targets_round.py /tmp/rounds.jsonl                              # the best kernels
  bench/targets_round.py /tmp/rounds.jsonl --isa avx2 --probes avx2     # as an AVX2-only CPU
  bench/targets_chart.py /tmp/rounds.jsonl -o docs/performance-targets.svg
Environment: COHORT (the binary; build/release/src/cli/cohort), MODELS (where the models are
kept; /tmp/cohort-models), THREADS (2), ONLY (a regular expression: the targets to run).
"""
import datetime
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The shapes: 1B (dim 2048, 16 layers, 32/8 heads, FFN 8192, vocab 32000) and 8B
# (dim 4096, 32 layers, 32/8 heads, FFN 14336).
SHAPES = {
    "1b": ["--dim", "2048", "--layers", "16", "--ffn", "8192"],
    "8b": ["--dim", "4096", "--layers", "32", "--ffn", "14336"],
}
SYNTH_COMMON = ["--arch", "llama", "--heads", "32", "--kv-heads", "8", "--vocab", "32000",
                "--ctx", "2048"]

DECODE = ["-p", "0", "-n", "64", "-r", "3", "--paired"]
PROMPT = ["-p", "128", "-n", "0", "-r", "3", "--paired"]

# (target, model shape, weight type, bench arguments, figure, goal)
TARGETS = [
    ("tg64 q4_0", "1b", "q4_0", DECODE, "bw_frac_paired", 0.85),
    ("tg64 q8_0", "1b", "q8_0", DECODE, "bw_frac_paired", 0.85),
    ("tg64 q4_K", "1b", "q4_K", DECODE, "bw_frac_paired", 0.85),
    ("tg64 q6_K", "1b", "q6_K", DECODE, "bw_frac_paired", 0.85),
    ("tg64 f16", "1b", "f16", DECODE, "bw_frac_paired", 0.95),
    ("tg32 8B q4_0", "8b", "q4_0", ["-p", "0", "-n", "32", "-r", "3", "--paired"],
     "bw_frac_paired", 0.85),
    ("pp128 f16", "1b", "f16", PROMPT, "fma_frac", 0.85),
    ("pp128 q4_0", "1b", "q4_0", PROMPT, "fma_frac", 0.75),
    ("pp128 q8_0", "1b", "q8_0", PROMPT, "fma_frac", 0.75),
]


def model_path(cohort, models, shape, wtype):
    """The model file, made with `cohort synth` first where it is missing."""
    path = os.path.join(models, "%s-%s.gguf" % (shape, wtype))
    if not os.path.exists(path):
        os.makedirs(models, exist_ok=True)
        print("making %s (cohort synth)" % path, file=sys.stderr, flush=True)
        subprocess.run([cohort, "synth"] + SYNTH_COMMON + SHAPES[shape] +
                       ["--type", wtype, "-o", path], check=True, stdout=subprocess.DEVNULL)
    return path


def bench_lines(cmd):
    """The JSON objects a `cohort bench --json` run printed (its other lines left out)."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (out.returncode, " ".join(cmd), out.stderr))
    return [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    out_path, flags = sys.argv[1], sys.argv[2:]
    cohort = os.environ.get("COHORT", os.path.join(ROOT, "build/release/src/cli/cohort"))
    models = os.environ.get("MODELS", "/tmp/cohort-models")
    threads = os.environ.get("THREADS", "2")
    only = re.compile(os.environ.get("ONLY", ""))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    common = {"round": stamp, "flags": " ".join(flags)}
    with open(out_path, "a") as out:
        for line in bench_lines([cohort, "bench", "--roofline", "-t", threads, "--json"] + flags):
            out.write(json.dumps(dict(line, **common)) + "\n")
            print("%s roofline: read %.1f GB/s, FMA %.1f GFLOP/s on %s threads" %
                  (stamp, line["read_gbps_n"], line["fma_gflops_n"], threads), file=sys.stderr)
        for target, shape, wtype, args, figure, goal in TARGETS:
            if not only.search(target):
                continue
            path = model_path(cohort, models, shape, wtype)
            for line in bench_lines([cohort, "bench", "-m", path, "-t", threads] + args +
                                    flags + ["--json"]):
                line.update(common, target=target, figure=figure, goal=goal)
                out.write(json.dumps(line) + "\n")
                out.flush()
                paired = line.get("fma_frac_paired")
                print("  %-13s %4.0f%% (goal %2.0f%%), %.1f tok/s%s" %
                      (target, 100 * line.get(figure, 0), 100 * goal, line["tok_s"],
                       ", paired FMA %.0f%%" % (100 * paired) if paired else ""),
                      file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
