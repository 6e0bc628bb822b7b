#!/usr/bin/env python3
"""Tests of bench/targets_chart.py (what it draws for given rounds) and bench/targets_round.py
(its table of targets: every one judged by the figure its kind is judged by)."""
import json
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.environ.get("COHORT_SOURCE_DIR",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

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
                self.assertEqual(args[args.index("-n") + 1], "0", name)
            self.assertTrue(0.5 <= goal <= 1.0, name)
        goals = {t[0]: t[5] for t in targets_round.TARGETS}
        self.assertEqual(goals["tg64 f16"], 0.95)  # the numbers
        self.assertEqual(goals["pp128 f16"], 0.85)
        self.assertEqual(goals["pp128 q8_0"], 0.75)


if __name__ == "__main__":
    unittest.main()
