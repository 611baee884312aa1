#!/usr/bin/env python3
"""Plots soak runs (the tables `Tools/bench/soak.py` prints) as latency against rows synced.

Usage: Tools/bench/plot_soak.py OUT.png SOAK_OUTPUT.md [SOAK_OUTPUT.md ...]

Each window's p50 and p99 (commit on A to the row in B's live query) per backend, on a
logarithmic axis, from the tables as printed, so a long run's plot can be drawn again later.
"""
import re
import sys


def windows(path):
    """{backend: [(middle of the window in rows, p50, p99)]} from a soak output."""
    result, backend = {}, None
    for line in open(path):
        heading = re.match(r"### (\w+)", line)
        if heading:
            backend = heading.group(1)
            result[backend] = []
            continue
        row = re.match(r"\| ([\d,]+)–([\d,]+) \| ([\d.]+) \| [\d.]+ \| ([\d.]+) \|", line)
        if row and backend:
            first, last = (int(row.group(i).replace(",", "")) for i in (1, 2))
            result[backend].append(((first + last) / 2, float(row.group(3)), float(row.group(4))))
    return result


def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out, inputs = sys.argv[1], sys.argv[2:]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for path in inputs:
        for backend, points in windows(path).items():
            xs = [p[0] for p in points]
            ax.plot(xs, [p[1] for p in points], "-o", markersize=3, label=f"{backend} p50")
            ax.plot(xs, [p[2] for p in points], "--o", markersize=3, label=f"{backend} p99")
    ax.set_xlabel("rows synced")
    ax.set_ylabel("commit on A → row in B's live query (ms)")
    ax.set_yscale("log")
    ax.set_title("Soak: 200 commits/s for 30 minutes")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
