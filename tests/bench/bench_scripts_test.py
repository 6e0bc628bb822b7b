#!/usr/bin/env python3
"""Tests of the bench/ scripts: targets_chart.py (what it draws for given rounds),
targets_round.py (a round end to end against a stand-in binary; its table of targets) and
folded_loads.py (which functions read one memory operand twice)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.environ.get("COHORT_SOURCE_DIR",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import folded_loads  # noqa: E402
import targets_chart  # noqa: E402
import targets_round  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def line(target, value, goal, isa="avx512_vnni", probes=None, figure="bw_frac_paired",
         stamp="2026-12-07T05:00Z"):
    return {"target": target, "figure": figure, "goal": goal, figure: value, "isa": isa,
            "probes": probes or isa, "round": stamp, "tok_s": 90.0}


class ChartTest(unittest.TestCase):
    def render(self, lines):
        return ET.fromstring(targets_chart.render(lines, "a <title> & more"))

    def test_a_dot_per_round_filled_where_the_goal_was_met(self):
        lines = [line("tg64 q4_0", 0.92, 0.85), line("tg64 q4_0", 0.80, 0.85),
                 line("pp128 f16", 0.81, 0.85, figure="fma_frac"),
                 line("pp128 f16", 0.85, 0.85, figure="fma_frac")]
        root = self.render(lines)
        met = root.findall(".//%scircle[@class='met']" % SVG)
        missed = root.findall(".//%scircle[@class='missed']" % SVG)
        self.assertEqual(len(met), 2)  # 0.92 and 0.85 (a goal met exactly is met)
        self.assertEqual(len(missed), 2)
        for c in missed:
            self.assertEqual(c.get("fill"), "white")
        for c in met:
            self.assertNotEqual(c.get("fill"), "white")
        xs = sorted(float(c.get("cx")) for c in met + missed)
        self.assertAlmostEqual(xs[0], targets_chart.x_of(0.80), places=1)
        self.assertAlmostEqual(xs[-1], targets_chart.x_of(0.92), places=1)

    def test_goal_marks_medians_and_rows(self):
        lines = [line("tg64 f16", v, 0.95) for v in (1.10, 0.90, 1.00)]
        root = self.render(lines)
        goals = root.findall(".//%sline[@class='goal']" % SVG)
        self.assertEqual(len(goals), 1)
        self.assertAlmostEqual(float(goals[0].get("x1")), targets_chart.x_of(0.95), places=1)
        medians = [t.text for t in root.findall(".//%stext[@class='median']" % SVG)]
        self.assertEqual(medians, ["100%"])

    def test_sets_get_their_own_colour_and_median(self):
        lines = [line("tg64 q4_0", 1.1, 0.85), line("tg64 q4_0", 0.8, 0.85, isa="avx2"),
                 line("tg64 q4_0", 0.7, 0.85, isa="avx2", probes="avx512_vnni")]
        root = self.render(lines)
        dots = root.findall(".//%scircle[@class]" % SVG)
        strokes = {c.get("stroke") for c in dots if c.get("class") != "legend"}
        self.assertEqual(len(strokes), 3)
        self.assertEqual(len(root.findall(".//%scircle[@class='legend']" % SVG)), 3)
        medians = [t.text for t in root.findall(".//%stext[@class='median']" % SVG)]
        self.assertEqual(medians, ["110%", "80%", "70%"])
        self.assertEqual(targets_chart.set_name(lines[2]), "avx2 kernels, avx512_vnni probes")

    def test_values_past_the_axis_sit_at_its_edge(self):
        root = self.render([line("pp128 q4_0", 3.5, 0.75, figure="fma_frac")])
        dot = root.find(".//%scircle[@class='met']" % SVG)
        self.assertAlmostEqual(float(dot.get("cx")), targets_chart.x_of(targets_chart.X_MAX))
        self.assertIn("350%", dot.find("%stitle" % SVG).text)

    def test_load_keeps_target_lines_only(self):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write(json.dumps({"test": "roofline", "read_gbps_n": 70.0}) + "\n\n")
            f.write(json.dumps(line("tg64 q4_0", 0.9, 0.85)) + "\n")
            broken = line("tg64 q8_0", 0.9, 0.85)
            del broken["bw_frac_paired"]  # a run without --paired has no paired figure
            f.write(json.dumps(broken) + "\n")
        try:
            self.assertEqual([l["target"] for l in targets_chart.load([f.name])], ["tg64 q4_0"])
        finally:
            os.unlink(f.name)


# A stand-in for the cohort binary: `synth ... -o PATH` writes PATH; `bench --roofline` prints a
# roofline line; `bench -m PATH ...` a test line whose figures say which model it read. Every
# call's arguments go to calls.log beside it.
FAKE_COHORT = r"""#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log"), "a") as f:
    f.write(" ".join(args) + "\n")
if args[0] == "synth":
    open(args[args.index("-o") + 1], "w").write("gguf")
elif "--roofline" in args:
    print("roofline (best kernels):")
    print(json.dumps({"test": "roofline", "isa": "avx2", "read_gbps_n": 30.0,
                      "fma_gflops_n": 180.0}))
else:
    model = os.path.basename(args[args.index("-m") + 1])
    test = "pp128" if args[args.index("-p") + 1] != "0" else "tg64"
    print(json.dumps({"model": model, "isa": "avx2", "probes": "avx2", "test": test,
                      "tok_s": 10.0, "bw_frac_paired": 0.9, "fma_frac": 0.8}))
"""


class RoundTest(unittest.TestCase):
    def test_a_round_appends_judged_lines_and_makes_missing_models(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "cohort")
            with open(fake, "w") as f:
                f.write(FAKE_COHORT)
            os.chmod(fake, 0o755)
            models = os.path.join(tmp, "models")
            os.makedirs(models)
            with open(os.path.join(models, "1b-f16.gguf"), "w") as f:
                f.write("gguf")  # already there
            out = os.path.join(tmp, "rounds.jsonl")
            env = dict(os.environ, COHORT=fake, MODELS=models, THREADS="3",
                       ONLY="^(tg64 q4_0|pp128 f16)$")
            script = os.path.join(ROOT, "bench", "targets_round.py")
            for _ in range(2):  # a second round appends
                subprocess.run([sys.executable, script, out, "--isa", "avx2"], env=env,
                               check=True, capture_output=True)
            with open(out) as f:
                lines = [json.loads(l) for l in f]
            self.assertEqual([l.get("target", l.get("test")) for l in lines],
                             ["roofline", "tg64 q4_0", "pp128 f16"] * 2)
            tg, pp = lines[1], lines[2]
            self.assertEqual((tg["model"], tg["figure"], tg["goal"]), ("1b-q4_0.gguf",
                                                                       "bw_frac_paired", 0.85))
            self.assertEqual((pp["model"], pp["figure"], pp["goal"]), ("1b-f16.gguf",
                                                                       "fma_frac", 0.85))
            for l in lines:
                self.assertEqual(l["flags"], "--isa avx2")
                self.assertRegex(l["round"], r"^\d{4}-\d\d-\d\dT\d\d:\d\dZ$")
            with open(os.path.join(tmp, "calls.log")) as f:
                calls = f.read().splitlines()
            synths = [c for c in calls if c.startswith("synth")]
            self.assertEqual(len(synths), 1)  # q4_0 made once, f16 was there
            self.assertIn("--type q4_0", synths[0])
            self.assertIn("--dim 2048", synths[0])
            benches = [c for c in calls if c.startswith("bench -m")]
            self.assertEqual(len(benches), 4)
            self.assertIn("-t 3 -p 0 -n 64 -r 3 --paired --isa avx2 --json", benches[0])
            self.assertIn("-t 3 -p 128 -n 0 -r 3 --paired --isa avx2 --json", benches[1])
            self.assertEqual(len(targets_chart.load([out])), 4)  # the chart reads them

    def test_a_failing_bench_stops_the_round(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, COHORT="/bin/false", MODELS=tmp)
            run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "targets_round.py"),
                                  os.path.join(tmp, "r.jsonl")], env=env, capture_output=True,
                                 text=True)
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("failed", run.stderr)


class FoldedLoadsTest(unittest.TestCase):
    def test_counts_second_reads_of_one_operand_per_function(self):
        text = "\n".join([
            "0000000000000010 <tile_a>:",
            "  10:\tvpandd 0x40(%rdx),%zmm1,%zmm2",
            "  16:\tvpsrlw $0x4,0x40(%rdx),%zmm3",  # the same line again: one repeat
            "  1c:\tvpandd 0x40(%rdx),%zmm1,%zmm4",  # and again: two
            "  22:\tvpdpbusd 0x4(%rax){1to16},%zmm2,%zmm5",  # a broadcast: left out
            "  28:\tvpshufb 0x0(%rip),%zmm2,%zmm6",
            "  2e:\tvpshufb 0x0(%rip),%zmm3,%zmm7",  # a constant: left out
            "  34:\tvmovdqu32 0x80(%rdx),%zmm8",
            "",
            "0000000000000040 <tile_b>:",
            "  40:\tvpandd (%rsi),%zmm1,%zmm2",
            "  46:\tvpandd 0x40(%rsi),%zmm1,%zmm3",
        ])
        found = folded_loads.repeats(text)
        self.assertEqual(found["tile_a"], (2, 7))
        self.assertEqual(found["tile_b"], (0, 2))


class RoundTableTest(unittest.TestCase):
    def test_each_target_is_judged_by_its_kind(self):
        names = [t[0] for t in targets_round.TARGETS]
        self.assertEqual(len(names), len(set(names)))
        for name, shape, _, args, figure, goal in targets_round.TARGETS:
            self.assertIn(shape, targets_round.SHAPES)
            if name.startswith("tg"):
                self.assertEqual(figure, "bw_frac_paired", name)
                self.assertIn("--paired", args, name)
                self.assertEqual(args[args.index("-p") + 1], "0", name)
            else:
                self.assertEqual(figure, "fma_frac", name)
                self.assertIn("--paired", args, name)  # fma_frac_paired beside it
                self.assertEqual(args[args.index("-n") + 1], "0", name)
            self.assertTrue(0.5 <= goal <= 1.0, name)
        goals = {t[0]: t[5] for t in targets_round.TARGETS}
        self.assertEqual(goals["tg64 f16"], 0.95)  # the numbers
        self.assertEqual(goals["pp128 f16"], 0.85)
        self.assertEqual(goals["pp128 q8_0"], 0.75)


if __name__ == "__main__":
    unittest.main()
