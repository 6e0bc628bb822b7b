#!/usr/bin/env python3
"""Aggregate decode throughput and time to first token of `cohort serve` with N concurrent
streaming /v1/completions requests (greedy, fixed max_tokens), against a server already
running. Each run goes through every level in turn (so a noisy machine's changes in load
fall on all levels alike). Prints one line per level: the median over RUNS runs of the
aggregate tok/s (completion tokens of all requests / wall time from the first send to the
last byte), the median time to first token over every request of those runs and, given the
server's process id, the server's CPU seconds per generated token (user + system).

Usage: bench/concurrent_streams.py PORT [LEVELS (default "1 8")] [SERVER_PID]
Environment: TOKENS (max_tokens per request, 32), RUNS (3).

Serve a model first, e.g. the 1B-shape synthetic Q4_0 model with 2 compute threads:
  cohort synth --arch llama --dim 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 \\
    --vocab 32000 --type q4_0 -o /tmp/1b-q4_0.gguf
  cohort serve -m /tmp/1b-q4_0.gguf -t 2 --slots 8 -c 512 --port 8080
"""
import http.client
import json
import os
import statistics
import sys
import threading
import time

PROMPTS = ["Once upon a time", "The little dog", "Lily and Tom went", "One day, a big",
           "The sun was", "In the garden", "A cat sat", "Far away"]


def stream(port, prompt, tokens, t_send, result):
    """One streaming request: records (seconds to the first text, completion tokens)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"prompt": prompt, "max_tokens": tokens, "temperature": 0,
                       "stream": True, "stream_options": {"include_usage": True}})
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    first, n = None, 0
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data:") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[5:])
        if first is None and any(c.get("text") for c in chunk.get("choices", [])):
            first = time.monotonic() - t_send
        if chunk.get("usage"):
            n = chunk["usage"]["completion_tokens"]
    conn.close()
    result.append((first, n))


def run_level(port, concurrency, tokens):
    results = []
    t0 = time.monotonic()
    threads = [threading.Thread(target=stream, args=(port, PROMPTS[i % len(PROMPTS)], tokens,
                                                     t0, results))
               for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    if len(results) != concurrency:
        raise RuntimeError("a request failed")
    total = sum(n for _, n in results)
    return total / wall, [f for f, _ in results if f is not None], total, wall


def cpu_seconds(pid):
    """user + system CPU seconds of a process so far (0 without a pid)."""
    if not pid:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    port = int(sys.argv[1])
    levels = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "1 8").split()]
    pid = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    tokens = int(os.environ.get("TOKENS", "32"))
    runs = int(os.environ.get("RUNS", "3"))
    run_level(port, 1, 4)  # warm up
    rates = {c: [] for c in levels}
    ttfts = {c: [] for c in levels}
    cpu = {c: [] for c in levels}
    for r in range(runs):
        for c in levels:
            cpu0 = cpu_seconds(pid)
            rate, firsts, total, wall = run_level(port, c, tokens)
            per_token = (cpu_seconds(pid) - cpu0) / max(total, 1)
            print(f"concurrency {c} run {r + 1}: {total} tokens in {wall:.2f} s = {rate:.2f} tok/s,"
                  f" TTFT median {statistics.median(firsts):.2f} s"
                  + (f", {per_token:.3f} CPU s/token" if pid else ""), flush=True)
            rates[c].append(rate)
            ttfts[c] += firsts
            cpu[c].append(per_token)
    for c in levels:
        print(f"concurrency {c}: median {statistics.median(rates[c]):.2f} tok/s aggregate,"
              f" TTFT median {statistics.median(ttfts[c]):.2f} s"
              + (f", {statistics.median(cpu[c]):.3f} CPU s/token" if pid else ""), flush=True)


if __name__ == "__main__":
    main()
