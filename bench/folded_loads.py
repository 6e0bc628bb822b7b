#!/usr/bin/env python3
"""Lists the functions of object files whose vector instructions read the same memory operand
more than once: loads GCC folded into every instruction that uses their value (a mask and a
shift of one 64-byte line: two loads where one does). In the AVX-512 one-token tiles those
loads, not the arithmetic, were the bound (docs/PERFORMANCE.md, stop 48: Q3_K's tile in L2 34 ->
52 GB/s once its code bytes were loaded once, simd_avx512.h load_in_register).

Usage: bench/folded_loads.py OBJECT... [--min N]
  bench/folded_loads.py build/release/src/kernels/CMakeFiles/cohort_kernels.dir/x86/*.o
Prints "repeats instructions function" for each function with at least N (4) repeated reads,
the most first. Broadcasts (4-byte reads), moves, constants (%rip) and the stack (spills) are
left out. A repeat is a hint, not a proof: the same text can name other memory where a loop
moves the base register.
"""
import argparse
import collections
import re
import subprocess

FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")
OPERAND = re.compile(r"(-?0x[0-9a-f]+)?\(%r\w+(,%r\w+)?(,\d)?\)")


def repeats(disassembly):
    """{function: (repeated reads, instructions)} of objdump -d output."""
    reads = collections.defaultdict(collections.Counter)
    count = collections.Counter()
    function = None
    for line in disassembly.splitlines():
        m = FUNCTION.match(line)
        if m:
            function = m.group(1)
            continue
        text = line.split("\t")[-1].strip()
        if function is None or not text or ":" in text.split()[0]:
            continue
        count[function] += 1
        op = text.split()[0]
        if not op.startswith("vp") or "broadcast" in op or "mov" in op or "{1to" in text:
            continue
        operand = OPERAND.search(text)
        if operand and not re.search(r"\(%r(ip|sp|bp)", operand.group(0)):
            reads[function][operand.group(0)] += 1
    return {f: (sum(n - 1 for n in c.values() if n > 1), count[f]) for f, c in reads.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("objects", nargs="+")
    parser.add_argument("--min", type=int, default=4, help="repeats to list a function (4)")
    args = parser.parse_args()
    found = {}
    for obj in args.objects:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", obj], check=True,
                             capture_output=True, text=True).stdout
        found.update(repeats(out))
    for function, (n, total) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        if n >= args.min:
            print("%4d %6d %s" % (n, total, function))


if __name__ == "__main__":
    main()
