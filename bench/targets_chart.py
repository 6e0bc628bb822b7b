#!/usr/bin/env python3
"""Draws the rounds bench/targets_round.py wrote as one SVG picture: a row per target, a dot
per round at the fraction the target is judged by (tokens over a plain read of their bytes for
decode, GFLOP/s over the FMA probe for prompts), the goal as a red mark, dots filled where a
round met it and hollow where it did not, one colour per kernel set (the kernels that ran and
the probes that judged them), and each set's median at the right. A dot's tooltip gives its
round, value and tok/s. Fractions above 200% are drawn at the edge.

Usage: bench/targets_chart.py ROUNDS.jsonl... -o OUT.svg [--title TEXT]
"""
import argparse
import json
import statistics
from xml.sax.saxutils import escape

X_MAX = 2.0  # the axis ends at 200%
COLOURS = ["#1f5fa8", "#d9731a", "#2a8a4a", "#7a3fa0"]
GOAL_COLOUR = "#c0182a"
LEFT, PLOT_W, RIGHT = 150, 600, 190  # label column, plot, medians column (px)
TOP, ROW_H = 92, 30


def load(paths):
    """The target lines of the files (the roofline lines and any other left out)."""
    lines = []
    for path in paths:
        with open(path) as f:
            for text in f:
                text = text.strip()
                if text:
                    line = json.loads(text)
                    if "target" in line and line.get("figure") in line:
                        lines.append(line)
    return lines


def set_name(line):
    """A kernel set: the kernels that ran the test and the probes that judged it."""
    isa, probes = line.get("isa", "?"), line.get("probes", line.get("isa", "?"))
    if probes == isa:
        return "%s kernels and probes" % isa
    return "%s kernels, %s probes" % (isa, probes)


def x_of(value):
    return LEFT + PLOT_W * min(max(value, 0.0), X_MAX) / X_MAX


def render(lines, title):
    targets, sets = [], []
    for line in lines:
        if line["target"] not in targets:
            targets.append(line["target"])
        if set_name(line) not in sets:
            sets.append(set_name(line))
    rounds = sorted({line.get("round", "") for line in lines})
    width, height = LEFT + PLOT_W + RIGHT, TOP + ROW_H * len(targets) + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="15" font-weight="bold">%s</text>' % escape(title),
           '<text x="10" y="38" fill="#444">%d round%s, %s to %s. Decode: tokens over a plain '
           'read of the same bytes just after each; prompts: over the FMA probe.</text>' %
           (len(rounds), "" if len(rounds) == 1 else "s", escape(rounds[0] if rounds else "-"),
            escape(rounds[-1] if rounds else "-"))]
    # Legend: the sets' colours, then what filled and hollow mean.
    x = 10
    for i, name in enumerate(sets):
        colour = COLOURS[i % len(COLOURS)]
        out.append('<circle class="legend" cx="%d" cy="56" r="5" fill="%s"/>' % (x + 5, colour))
        out.append('<text x="%d" y="60">%s</text>' % (x + 14, escape(name)))
        x += 24 + 7 * len(name)
    out.append('<line x1="%d" y1="50" x2="%d" y2="62" stroke="%s" stroke-width="2"/>' %
               (x + 5, x + 5, GOAL_COLOUR))
    out.append('<text x="%d" y="60">goal; filled: met, hollow: missed</text>' % (x + 12))
    # Grid and axis labels every 25% (labelled every 50%).
    bottom = TOP + ROW_H * len(targets)
    for i in range(int(X_MAX / 0.25) + 1):
        gx = x_of(0.25 * i)
        strong = i % 4 == 0
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>' %
                   (gx, TOP - 6, gx, bottom, "#999" if strong else "#e2e2e2"))
        if i % 2 == 0:
            out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%d%%</text>' %
                       (gx, TOP - 10, 25 * i))
    for row, target in enumerate(targets):
        y0 = TOP + ROW_H * row
        if row % 2:
            out.append('<rect x="0" y="%d" width="%d" height="%d" fill="#f4f6f8" '
                       'fill-opacity="0.6"/>' % (y0, width, ROW_H))
        out.append('<text x="10" y="%d">%s</text>' % (y0 + ROW_H // 2 + 4, escape(target)))
        goals = {line["goal"] for line in lines if line["target"] == target}
        for goal in goals:
            out.append('<line class="goal" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" '
                       'stroke-width="2"/>' % (x_of(goal), y0 + 3, x_of(goal), y0 + ROW_H - 3,
                                               GOAL_COLOUR))
        medians = []
        for s, name in enumerate(sets):
            mine = [l for l in lines if l["target"] == target and set_name(l) == name]
            if not mine:
                continue
            colour = COLOURS[s % len(COLOURS)]
            y = y0 + ROW_H * (s + 1) / (len(sets) + 1)
            values = [l[l["figure"]] for l in mine]
            for line, value in zip(mine, values):
                met = value >= line["goal"]
                out.append('<circle class="%s" cx="%.1f" cy="%.1f" r="4.5" fill="%s" '
                           'stroke="%s" stroke-width="1.5"><title>%s %s: %.0f%%, %.1f tok/s'
                           '</title></circle>' %
                           ("met" if met else "missed", x_of(value), y,
                            colour if met else "white", colour, escape(line.get("round", "")),
                            escape(name), 100 * value, line.get("tok_s", 0)))
            medians.append((colour, statistics.median(values)))
        for i, (colour, median) in enumerate(medians):
            out.append('<text class="median" x="%d" y="%d" fill="%s">%.0f%%</text>' %
                       (LEFT + PLOT_W + 28 + 52 * i, y0 + ROW_H // 2 + 4, colour, 100 * median))
    out.append('<text x="%d" y="%d" fill="#444">median of each set</text>' %
               (LEFT + PLOT_W + 28, TOP - 10))
    out.append('<text x="%d" y="%d" fill="#444">Made by bench/targets_chart.py from '
               'bench/targets_round.py lines.</text>' % (10, bottom + 26))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="+", help="JSON lines of bench/targets_round.py")
    parser.add_argument("-o", "--out", required=True, help="the SVG file to write")
    parser.add_argument("--title", default="cohort on one node: issue 6's targets, one dot a round")
    args = parser.parse_args()
    lines = load(args.rounds)
    if not lines:
        raise SystemExit("no target lines in " + ", ".join(args.rounds))
    with open(args.out, "w") as f:
        f.write(render(lines, args.title))


if __name__ == "__main__":
    main()
